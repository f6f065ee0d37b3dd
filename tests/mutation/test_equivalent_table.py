"""tests/mutation/equivalent*.toml stay readable and points at code that exists: every
entry names a module and function of the checkout, gives the mutated line and a reason,
and the mutated line is not what the source says (it is a mutation)."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLES = sorted(Path(__file__).parent.glob("equivalent*.toml"))


def test_every_equivalent_mutant_names_an_existing_function_a_line_and_a_reason():
    entries = [e for table in TABLES for e in tomllib.loads(table.read_text("utf-8"))["mutant"]]
    assert entries and len(TABLES) >= 1
    names = [e["name"] for e in entries]
    assert len(names) == len(set(names)), "an entry is listed twice"
    for e in entries:
        assert e["line"].strip() and len(e["reason"]) > 10, e
        mangled, _, number = e["name"].partition("__mutmut_")
        assert number.isdigit(), e["name"]
        module, _, function = mangled.rpartition(".")
        assert module.startswith("fluidscope."), e["name"]
        path = ROOT / (module.removeprefix("fluidscope.").replace(".", "/") + ".py")
        source = path.read_text("utf-8")
        # mutmut's names: x_<function> or xǁ<Class>ǁ<method>
        name = function.split("ǁ")[-1] if "ǁ" in function else function.removeprefix("x_")
        assert re.search(rf"def {re.escape(name)}\(", source), f"{e['name']}: no {name} in {path}"
        assert e["line"].strip() not in [line.strip() for line in source.splitlines()], \
            f"{e['name']}: '{e['line']}' is the source itself, not a mutation"
