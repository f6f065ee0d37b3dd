"""A ResNet made of PaddlePaddle 3.3.1's own ``paddle.nn`` layers (``nn.Conv2D``,
``nn.BatchNorm2D``, ``paddle.vision``'s ``BasicBlock``, ``nn.Linear``), saved by Paddle and
read back as layers (design/lift.py): those layers name their parameters when they are
made and their outputs when called, so the two prefixes differ (``conv2d_5.tmp_0`` is
computed with ``conv2d_6.w_0``, batch norms keep ``batch_norm2d_<k>.*``); the lifted
layers name their parameters (``param_attr`` and the batch norms' running statistics),
rebuild the file's ops and give Paddle's numbers with its parameters. The residual
``out += identity`` writes an unnamed ``tmp_<k>`` no layer makes: it stays an op node.
Skipped without .venv-paddle."""
import collections

import numpy as np

import fluidscope.designer as fd
from fluidscope.engine import Executor, Scope
from fluidscope.engine import io as fio

from paddle_oracle import needs_paddle, run_paddle


PADDLE_SCRIPT = r'''
import sys
import numpy as np
import paddle
from paddle import nn
from paddle.vision.models.resnet import BasicBlock


class SmallResNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2D(3, 8, 3, padding=1, bias_attr=False),
                                  nn.BatchNorm2D(8), nn.ReLU(), nn.MaxPool2D(2, 2))
        down = nn.Sequential(nn.Conv2D(8, 16, 1, stride=2, bias_attr=False), nn.BatchNorm2D(16))
        self.blocks = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 16, 2, down))
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(paddle.flatten(self.pool(self.blocks(self.stem(x))), 1))


paddle.enable_static()
paddle.seed(0)
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [None, 3, 16, 16], "float32")
    model = SmallResNet()
    model.eval()
    out = model(x)
exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(startup)
scope = paddle.static.global_scope()
rng = np.random.default_rng(1)
for v in main.list_vars():  # batch norms' scale, shift and statistics away from 1 / 0
    if v.persistable and v.name.startswith("batch_norm2d"):
        t = scope.find_var(v.name).get_tensor()
        t.set((np.array(t) + rng.uniform(0.1, 0.5, np.array(t).shape)).astype("float32"),
              paddle.CPUPlace())
paddle.static.save_inference_model(sys.argv[1], [x], [out], exe, program=main)
np.save(sys.argv[3], exe.run(main, feed={"x": np.load(sys.argv[2])}, fetch_list=[out])[0])
'''


@needs_paddle
def test_a_resnet_of_paddle_nn_layers_reads_back_as_layers_and_gives_paddles_numbers(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    run_paddle(PADDLE_SCRIPT, tmp_path, tmp_path / "model", tmp_path / "x.npy",
               tmp_path / "out.npy")
    scope = Scope()
    desc, _, fetches = fio.load_inference_model_files(tmp_path / "model", scope)
    d = fd.Design.from_program(fd.Program.from_desc(desc), layers=True)
    kinds = collections.Counter(n.layer if n.layer != "op" else n.attrs["type"]
                                for n in d.nodes.values())
    assert kinds == {"conv2d": 6, "batch_norm": 6, "relu": 5, "pool2d": 1, "adaptive_pool2d": 1,
                     "flatten": 1, "linear": 1, "elementwise_add": 2, "variable": 1, "feed": 1,
                     "fetch": 1}
    # the shortcut's conv was made before the blocks (conv2d_1.w_0, numbered as made) but
    # runs last (conv2d_5.tmp_0, numbered as called); the stem's conv has the same number
    assert [(n.id, n.attrs.get("param_attr")) for n in d.nodes.values()
            if n.layer == "conv2d"] == [("conv2d_0", None), ("conv2d_1", "conv2d_2.w_0"),
                                        ("conv2d_2", "conv2d_3.w_0"), ("conv2d_3", "conv2d_4.w_0"),
                                        ("conv2d_4", "conv2d_5.w_0"), ("conv2d_5", "conv2d_1.w_0")]
    assert d.node("batch_norm_0").attrs == {
        "is_test": True, "use_global_stats": True,  # nn.BatchNorm2D in eval()
        "param_attr": "batch_norm2d_0.w_0", "bias_attr": "batch_norm2d_0.b_0",
        "moving_mean_name": "batch_norm2d_0.w_1", "moving_variance_name": "batch_norm2d_0.w_2"}
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {}
    assert [op.type for op in built.main.global_block().ops] == [op.type for op in desc.blocks[0].ops]
    got = Executor().run(built.main.desc, feed={"x": x}, fetch_list=fetches, scope=scope)[0]
    np.testing.assert_allclose(got, np.load(tmp_path / "out.npy"), rtol=1e-4, atol=1e-5)
