"""A test must never skip because one of our own modules fails to import (issue #17):
``pytest.importorskip("fluidscope...")`` turned an import error of fluidscope.engine.random
into a silent skip of the only test that checked back()'s generator rewind. Optional
third-party packages may still be skipped on."""
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
OWN = re.compile(r"""importorskip\(\s*["'](fluidscope|engine|designer|widgets)\b""")


def test_no_test_skips_on_an_import_of_our_own_modules():
    offenders = [f"{path.relative_to(TESTS)}:{n}: {line.strip()}"
                 for path in sorted(TESTS.rglob("*.py")) if path.name != Path(__file__).name
                 for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
                 if OWN.search(line)]
    assert not offenders, "import our own modules plainly, not with importorskip:\n" + \
        "\n".join(offenders)


def test_the_check_sees_an_importorskip_of_our_own_module():
    assert OWN.search('fd_random = pytest.importorskip("fluidscope.engine.random")')
    assert not OWN.search('pytest.importorskip("threadpoolctl")')
