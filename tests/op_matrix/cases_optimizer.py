"""Cases for optimizer ops (kernels/optimizer.py): sgd, momentum, adam (no gradients).

References are Paddle's update formulas written out in numpy; multi-step runs against
a hand-written loop live in tests/test_optimizer_ops.py.
"""
import numpy as np

from . import OpCase

rng = np.random.default_rng(15)
P = rng.standard_normal((3, 4))
G = rng.standard_normal((3, 4))
V = rng.standard_normal((3, 4)) * 0.1
M1 = rng.standard_normal((3, 4)) * 0.1
M2 = rng.uniform(0.01, 0.1, (3, 4))
LR = np.array([0.1])
B1P, B2P = np.array([0.9 ** 3]), np.array([0.999 ** 3])
F32 = 0.8999999761581421, 0.9990000128746033, 9.99999993922529e-09  # attrs as float32


def _sgd_ref(i, a):
    return {"ParamOut": i["Param"] - i["LearningRate"][0] * i["Grad"]}


def _momentum_ref(i, a):
    p, g, v, lr = i["Param"], i["Grad"], i["Velocity"], i["LearningRate"][0]
    mu = np.float32(a["mu"]).item()
    g = g * np.float32(a.get("rescale_grad", 1.0)).item()
    if a.get("regularization_method") == "l2_decay":
        g = g + np.float32(a["regularization_coeff"]).item() * p
    v_out = mu * v + g
    if a.get("use_nesterov"):
        return {"ParamOut": p - (g + mu * v_out) * lr, "VelocityOut": v_out}
    return {"ParamOut": p - lr * v_out, "VelocityOut": v_out}


def adam_reference(p, g, lr, m1, m2, b1p, b2p, beta1=F32[0], beta2=F32[1], eps=F32[2],
                   m2_max=None):
    """One Paddle adam step (phi AdamFunctor): returns p, m1, m2, m2_max, b1p, b2p."""
    lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
    m1 = beta1 * m1 + (1 - beta1) * g
    m2 = beta2 * m2 + (1 - beta2) * g * g
    if m2_max is not None:
        m2_max = np.maximum(m2, m2_max)
    denom = np.sqrt(m2 if m2_max is None else m2_max) + eps * np.sqrt(1 - b2p)
    return p - lr_t * (m1 / denom), m1, m2, m2_max, b1p * beta1, b2p * beta2


def _adam_ref(i, a):
    amsgrad = a.get("amsgrad", False)
    p, m1, m2, m2_max, b1p, b2p = adam_reference(
        i["Param"], i["Grad"], i["LearningRate"], i["Moment1"], i["Moment2"], i["Beta1Pow"],
        i["Beta2Pow"], m2_max=i.get("Moment2Max") if amsgrad else None)
    out = {"ParamOut": p, "Moment1Out": m1, "Moment2Out": m2, "Beta1PowOut": b1p,
           "Beta2PowOut": b2p}
    if amsgrad:
        out["Moment2MaxOut"] = m2_max
    return out


def _adam_global_pow_ref(i, a):
    out = _adam_ref(i, a)
    out["Beta1PowOut"], out["Beta2PowOut"] = i["Beta1Pow"], i["Beta2Pow"]
    return out


def _adam_skip_ref(i, a):
    return {"ParamOut": i["Param"], "Moment1Out": i["Moment1"], "Moment2Out": i["Moment2"],
            "Beta1PowOut": i["Beta1Pow"], "Beta2PowOut": i["Beta2Pow"]}


def _multi_precision_ref(i, a):
    master = i["MasterParam"] - i["LearningRate"][0] * i["Grad"].astype(np.float32)
    return {"ParamOut": master.astype(np.float16), "MasterParamOut": master}


def _check_float16_param(outs, i, a):
    """The case's tolerance (1e-3) is float16's; the float32 master copy is held to
    float32's, and ParamOut must be exactly its cast to float16."""
    param, master = outs["ParamOut"], outs["MasterParamOut"]
    assert param.dtype == np.float16 and master.dtype == np.float32
    np.testing.assert_allclose(master, _multi_precision_ref(i, a)["MasterParamOut"],
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(param, master.astype(np.float16))


def _check_float32_kept(outs, i, a):
    for slot in ("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut"):
        assert outs[slot].dtype == np.float32, slot


ADAM_IN = {"Param": P, "Grad": G, "LearningRate": LR, "Moment1": M1, "Moment2": M2,
           "Beta1Pow": B1P, "Beta2Pow": B2P}
ADAM_IN_32 = {k: v.astype(np.float32) for k, v in ADAM_IN.items()}
MOMENTUM_IN = {"Param": P, "Grad": G, "Velocity": V, "LearningRate": LR}

def _case(op, inputs, reference, **kwargs):
    # No gradients. The matrix's shape test needs every output slot filled, and an
    # absent dispensable output (MasterParamOut without MasterParam) is None, so the
    # shapes of these cases are checked in tests/test_optimizer_ops.py instead.
    return OpCase(op, inputs, reference, grad=(), check_shapes=False, **kwargs)


CASES = [
    _case("sgd", {"Param": P, "LearningRate": LR, "Grad": G}, _sgd_ref),
    _case("sgd", {"Param": P.astype(np.float16), "LearningRate": LR.astype(np.float32),
                  "Grad": G.astype(np.float16), "MasterParam": P.astype(np.float32)},
          _multi_precision_ref, attrs={"multi_precision": True}, check=_check_float16_param,
          rtol=1e-3, atol=1e-3, name="multi_precision"),  # float16 ParamOut; check: float32
    _case("momentum", MOMENTUM_IN, _momentum_ref, attrs={"mu": 0.9}),
    _case("momentum", MOMENTUM_IN, _momentum_ref, attrs={"mu": 0.9, "use_nesterov": True},
          name="nesterov"),
    _case("momentum", MOMENTUM_IN, _momentum_ref, name="l2_decay_rescale",
          attrs={"mu": 0.8, "regularization_method": "l2_decay",
                 "regularization_coeff": 0.01, "rescale_grad": 0.5}),
    _case("adam", ADAM_IN, _adam_ref),
    _case("adam", dict(ADAM_IN, Moment2Max=M2 * 1.5), _adam_ref, attrs={"amsgrad": True},
          name="amsgrad"),
    _case("adam", ADAM_IN, _adam_global_pow_ref, attrs={"use_global_beta_pow": True},
          name="global_beta_pow"),
    _case("adam", dict(ADAM_IN, SkipUpdate=np.array([True])), _adam_skip_ref,
          name="skip_update"),
    _case("adam", ADAM_IN_32, lambda i, a: _adam_ref(ADAM_IN, a), check=_check_float32_kept,
          rtol=1e-5, atol=1e-6, name="float32"),
]
