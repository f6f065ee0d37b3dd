"""Runs under .venv-paddle (paddlepaddle 3.3.1), called by tests/test_paddle_compat.py.

    python paddle_runner.py run  PREFIX X.npy OUT.npy   # load PREFIX.pdmodel/.pdiparams, run on X
    python paddle_runner.py make PREFIX X.npy OUT.npy   # save a tiny fc net, run it on X

``run`` loads with ``paddle.static.load_inference_model`` and again with the
``paddle.inference`` predictor, and fails unless both agree; OUT.npy gets the output.
Legacy ProgramDesc files need FLAGS_enable_pir_api=0 (paddle_compat.md).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"

import numpy as np  # noqa: E402
import paddle  # noqa: E402


def run(prefix, x_path, out_path):
    paddle.enable_static()
    x = np.load(x_path)
    exe = paddle.static.Executor(paddle.CPUPlace())
    program, feeds, fetches = paddle.static.load_inference_model(prefix, exe)
    out = exe.run(program, feed={feeds[0]: x}, fetch_list=fetches)[0]
    config = paddle.inference.Config(prefix + ".pdmodel", prefix + ".pdiparams")
    config.disable_gpu()
    config.switch_ir_optim(False)
    predictor = paddle.inference.create_predictor(config)
    predictor.get_input_handle(predictor.get_input_names()[0]).copy_from_cpu(x)
    predictor.run()
    predicted = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
    if not np.allclose(out, predicted, rtol=1e-5, atol=1e-6):
        sys.exit(f"executor and predictor disagree: {out} vs {predicted}")
    np.save(out_path, out)
    print("feeds", feeds, "fetches", [v.name for v in fetches])


def make(prefix, x_path, out_path):
    paddle.enable_static()
    paddle.seed(7)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [-1, 4], "float32")
        hidden = paddle.static.nn.fc(x, 3, activation="relu")
        y = paddle.scale(hidden, scale=2.0, bias=0.5)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    paddle.static.save_inference_model(prefix, [x], [y], exe, program=main)
    out = exe.run(main, feed={"x": np.load(x_path)}, fetch_list=[y])[0]
    np.save(out_path, out)


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    {"run": run, "make": make}[command](*args)
