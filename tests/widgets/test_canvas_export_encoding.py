"""``export`` writes UTF-8 text whatever the machine's locale (issue #17: mutation testing
found nothing asserting it). Layer names may be any identifier, ``größe`` included, and
model.py names every layer: written in the locale's encoding it would fail on a machine
whose locale is ASCII (LC_ALL=C without Python's UTF-8 mode) and be unreadable elsewhere."""
import os
import subprocess
import sys
import textwrap

import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas

SCRIPT = textwrap.dedent("""
    import locale, sys
    import fluidscope.designer as fd
    from fluidscope.widgets import DesignCanvas
    assert locale.getpreferredencoding(False).lower() in ("ansi_x3.4-1968", "ascii"), \\
        locale.getpreferredencoding(False)
    d = fd.Design()
    x = d.add("data", name="merkmale", shape=[None, 4])
    d.add("fc", inputs={"input": x}, size=2, name="gr\\u00f6\\u00dfe")
    DesignCanvas(d).export(sys.argv[1])
""")  # the command line is ASCII there: the name is spelled with escapes


def small_design():
    d = fd.Design()
    x = d.add("data", name="merkmale", shape=[None, 4])
    d.add("fc", inputs={"input": x}, size=2, name="größe")
    return d


def test_export_writes_utf8_here_and_under_an_ascii_locale(tmp_path):
    here, there = tmp_path / "here", tmp_path / "ascii"
    written = DesignCanvas(small_design()).export(str(here))
    assert str(here / "model.py") in written
    assert "größe = fd.fc(" in (here / "model.py").read_bytes().decode("utf-8")
    # the same modules as this process (a mutation run's copies included), in a C locale
    # with neither locale coercion nor UTF-8 mode: the locale's encoding is ASCII there
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path if p),
           "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(there)], env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (there / "model.py").read_bytes() == (here / "model.py").read_bytes()
    assert fd.Design.load(there / "model.fsdesign.json").node("größe").layer == "fc"
