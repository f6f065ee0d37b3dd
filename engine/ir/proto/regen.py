"""Regenerate ``framework_pb2.py`` from ``framework.proto`` with grpcio-tools' protoc.

    python -m fluidscope.engine.ir.proto.regen            # rewrite the committed module
    python -m fluidscope.engine.ir.proto.regen --check    # exit 1 when it differs

The generated module is committed so users need no protoc; a test runs ``--check``.
The protoc version is pinned through grpcio-tools in the ``dev`` extra, because other
versions write different (equivalent) code.
"""
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent


def generate() -> str:
    """Return the text protoc writes for framework.proto (nothing is written here)."""
    from grpc_tools import protoc  # dev dependency only

    with tempfile.TemporaryDirectory() as out:
        rc = protoc.main(["protoc", f"-I{HERE}", f"--python_out={out}", str(HERE / "framework.proto")])
        if rc != 0:
            raise RuntimeError(f"protoc failed with exit code {rc}")
        return (pathlib.Path(out) / "framework_pb2.py").read_text()


def main(argv):
    fresh = generate()
    target = HERE / "framework_pb2.py"
    if "--check" in argv:
        same = target.exists() and target.read_text() == fresh
        print("framework_pb2.py is up to date" if same else "framework_pb2.py differs from protoc output")
        return 0 if same else 1
    target.write_text(fresh)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
