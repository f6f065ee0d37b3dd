"""lstm and gru under every activation name Paddle accepts (kernels/rnn.py ACTIVATIONS: "" is
identity), forward against the step-loop references of cases_rnn.py and gradient-checked
in float64; and lstm's batch-layout intermediates BatchGate and BatchCellPreAct, which
Paddle's lstm_grad reads: rows in the batch order the kernel sorts sequences into, so
they are checked as rows: BatchGate holds the activated [c~, i, f, o] and
BatchCellPreAct, despite its name, cell_activation(c) (as Paddle's), so Hidden = o *
BatchCellPreAct and BatchCellPreAct = cell_activation(Cell), row for row.
"""
import numpy as np

from . import OpCase
from .cases_rnn import ACT, _gru_inputs, _lstm_inputs, gru_reference, lstm_reference


def _named(reference):
    """The reference with "" read as identity (the kernel's alias)."""
    def ref(i, a):
        return reference(i, {k: ("identity" if v == "" else v) for k, v in a.items()})
    return ref


def _rows(a):
    a = np.asarray(a)
    return a[np.lexsort(a.T[::-1])]


def _check_batch_intermediates(outs, i, a):
    d = i["Weight"].shape[0]
    gate, pre = np.asarray(outs["BatchGate"]), np.asarray(outs["BatchCellPreAct"])
    t = np.asarray(i["Input"].value).shape[0]
    assert gate.shape == (t, 4 * d) and pre.shape == (t, d), (gate.shape, pre.shape)
    cell_act = ACT[a.get("cell_activation", "tanh")]
    np.testing.assert_allclose(_rows(gate[:, 3 * d:] * pre), _rows(outs["Hidden"]),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_rows(pre), _rows(cell_act(np.asarray(outs["Cell"]))),
                               rtol=1e-12, atol=1e-12)


def _lstm(name, seed, check=None, **attrs):
    return OpCase("lstm", _lstm_inputs(2, [0, 3, 4, 6], seed, h0=True, c0=True),
                  _named(lstm_reference), attrs=attrs, name=name, check=check)


def _gru(name, seed, **attrs):
    return OpCase("gru", _gru_inputs(2, [0, 3, 4, 6], seed, h0=True), _named(gru_reference),
                  attrs=attrs, name=name)


CASES = [
    _lstm("relu_gates_sigmoid_cell", 31, gate_activation="relu", cell_activation="sigmoid",
          candidate_activation="sigmoid"),
    _lstm("identity_gates_relu_candidate", 32, gate_activation="identity",
          cell_activation="identity", candidate_activation="relu"),
    _lstm("empty_names_are_identity", 33, gate_activation="", cell_activation="",
          candidate_activation=""),
    _lstm("batch_intermediates", 34, check=_check_batch_intermediates),
    _gru("sigmoid_relu_gate", 35, activation="sigmoid", gate_activation="relu"),
    _gru("empty_identity_gate", 36, activation="", gate_activation="identity"),
    _gru("empty_gate", 37, gate_activation=""),
]
