"""Mutation testing of the core with mutmut (issue #17): ``make mutate MODULES=engine/debug``.

scripts/mutation_modules.txt names each module (file or folder) mutated and the fast tests
that judge it (pytest arguments). mutmut forks each mutant from a pytest process that
has imported everything already and runs only the tests that reached the mutated
function, so a mutant costs a fraction of a second to a few seconds, where a fresh
pytest per mutant (cosmic-ray, ``make mutate TOOL=cosmic-ray``) costs 6-8 s here.

A module is run
in a work folder outside the checkout (``$MUTATE_DIR``, default ``$TMPDIR/fluidscope-mutate``),
never in the checkout itself: the packages are copied there as ``src/fluidscope/<pkg>`` so
that the modules' dotted names (``fluidscope.engine.debug.session``) are the ones mutmut
derives from the file paths (it strips ``src.``) and the ones the tests import; the
editable install's own finder comes after the path finder, so the copies win.

mutmut runs, for each mutant, only the tests that called the mutated function (its stats
run records them), with ``-x``. A mutant listed in tests/mutation/equivalent*.toml (the
mutated line and the reason it changes nothing observable) does not count against the
score; every other survivor is printed with its diff.

    python scripts/mutate.py engine/debug widgets/canvas [--max-children 2] [--sample 150]
    python scripts/mutate.py all          every module (one of more than 1500 mutants sampled)
    python scripts/mutate.py --list

mutmut itself (the project's ``mutation`` extra, pyproject.toml) is installed on first use.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "designer", "widgets")
# equivalent.toml, and one equivalent_<module>.toml per module so that work on two modules
# never edits the same file
EQUIVALENT_TABLES = ROOT / "tests" / "mutation"
KILLED = {"killed", "timeout", "segfault", "caught by type check"}
UNCOUNTED = {"skipped", "not checked", "check was interrupted by user"}


MODULES = ROOT / "scripts" / "mutation_modules.txt"
SAMPLE_ABOVE = 1500  # mutants; a larger module is sampled unless --sample says otherwise


@dataclass(frozen=True)
class Group:
    module: str  # repo-relative file or folder (engine/debug, engine/kernels/seqbatch.py)
    tests: tuple  # pytest arguments selecting the fast tests that judge it

    @property
    def globs(self) -> list:
        return [self.module if self.module.endswith(".py") else self.module + "/*"]


def load_groups() -> dict:
    """{module: Group} from scripts/mutation_modules.txt (``module | pytest args``)."""
    groups = {}
    for line in MODULES.read_text("utf-8").splitlines():
        module, _, tests = line.partition("|")
        module = module.strip()
        if module and not module.startswith("#"):
            groups[module] = Group(module, tuple(shlex.split(tests)))
    return groups


def ensure_mutmut() -> None:
    """pip-install the ``mutation`` extra's requirements (pyproject.toml) when missing."""
    try:
        import mutmut  # noqa: F401
    except ImportError:
        extra = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
        reqs = extra["project"]["optional-dependencies"]["mutation"]
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", *reqs])


def load_equivalents() -> dict:
    """{mutant name: (mutated line, reason)} from tests/mutation/equivalent*.toml."""
    found = {}
    for table in sorted(EQUIVALENT_TABLES.glob("equivalent*.toml")):
        data = tomllib.loads(table.read_text("utf-8"))
        found.update({m["name"]: (m["line"], m["reason"]) for m in data.get("mutant", [])})
    return found


def prepare(work: Path, group: Group, only: list | None) -> None:
    """A fresh work folder: the packages under src/fluidscope, tests/, and the config."""
    if work.exists():
        shutil.rmtree(work)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "node_modules")
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, work / "src" / "fluidscope" / pkg, ignore=ignore)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    globs = only or group.globs
    toml_list = lambda xs: "[" + ", ".join(json.dumps(x) for x in xs) + "]"  # noqa: E731
    (work / "pyproject.toml").write_text(
        "[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"only_mutate = {toml_list('src/fluidscope/' + g for g in globs)}\n"
        f"pytest_add_cli_args = {toml_list(['-p', 'no:cacheprovider'])}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(group.tests)}\n"
        "use_git_change_detection = false\n"
        "\n[tool.pytest.ini_options]\n"
        'testpaths = ["tests"]\n', "utf-8")


def mutmut(work: Path, *args: str) -> int:
    exe = Path(sys.executable).with_name("mutmut")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.call([str(exe), *args], cwd=work, env=env)


def results(work: Path) -> dict:
    """{mutant name: status} from mutmut's .meta files."""
    from mutmut.stats import status_by_exit_code
    out = {}
    for meta in (work / "mutants" / "src").rglob("*.py.meta"):
        codes = json.loads(meta.read_text("utf-8"))["exit_code_by_key"]
        out.update({k: status_by_exit_code[v] for k, v in codes.items()})
    return out


def diff(work: Path, name: str) -> str:
    """The mutant's diff (mutmut's own, in this process: ``mutmut show`` costs seconds each)."""
    here = Path.cwd()
    os.chdir(work)  # mutmut reads its configuration from the folder it is imported in
    try:
        from mutmut.__main__ import find_mutant, get_diff_for_mutant
        try:
            return get_diff_for_mutant(name, path=find_mutant(name).path)
        except FileNotFoundError:
            return f"({name} no longer exists: its code changed since it ran)"
    finally:
        os.chdir(here)


def added_lines(text: str) -> list:
    return [line[1:].strip() for line in text.splitlines()
            if line.startswith("+") and not line.startswith("+++")]


def report(group_name: str, work: Path, statuses: dict, equivalents: dict) -> dict:
    counted = {k: s for k, s in statuses.items() if s not in UNCOUNTED}
    killed = [k for k, s in counted.items() if s in KILLED]
    # an entry counts only while its mutant still mutates the line it names
    equivalent = [k for k, s in counted.items() if s not in KILLED and k in equivalents
                  and equivalents[k][0].strip() in added_lines(diff(work, k))]
    survivors = sorted(k for k, s in counted.items() if s not in KILLED and k not in equivalent)
    total = len(counted) - len(equivalent)
    score = 100.0 * len(killed) / total if total else 100.0
    for name in survivors:
        print(f"\n### survived ({counted[name]}): {name}\n{diff(work, name).rstrip()}")
    for name in equivalent:
        print(f"equivalent: {name}: {equivalents[name][1]}")
    summary = {"group": group_name, "mutants": len(statuses), "counted": len(counted),
               "killed": len(killed), "equivalent": len(equivalent),
               "survived": len(survivors), "score": round(score, 1)}
    print(json.dumps(summary))
    return summary


def generate(work: Path) -> list:
    """Generate the mutants and collect the stats (a run restricted to a mutant that
    does not exist stops right after), and return all the mutants' names."""
    mutmut(work, "run", "--max-children", "1", "no-such-mutant")
    return sorted(results(work))


def run_group(name: str, group: Group, args) -> dict:
    base = Path(os.environ.get("MUTATE_DIR") or Path(tempfile.gettempdir()) / "fluidscope-mutate")
    work = base / name.replace("/", "_")
    # --rerun: the last run's verdicts stand, its survivors are tried again on new tests
    previous = verdicts(work) if args.rerun and work.exists() else {}
    if not (args.keep and work.exists()):
        prepare(work, group, args.only)
    names = generate(work)
    sample = args.sample or (SAMPLE_ABOVE if len(names) > SAMPLE_ABOVE else None)
    if previous:  # a mutant whose function changed since is gone, or another one now
        gone = [n for n in previous if n not in set(names)]
        previous = {n: v for n, v in previous.items() if n not in set(gone)}
        if gone:
            print(f"{len(gone)} mutants of the last run no longer exist (their code changed)")
        chosen = sorted(n for n in names if previous.get(n) is not None
                        and previous[n] not in KILLED | UNCOUNTED)
    elif sample and sample < len(names):
        chosen = sorted(random.Random(args.seed).sample(names, sample))
    else:
        chosen = []
    if chosen or not previous:
        mutmut(work, "run", "--max-children", str(args.max_children), *chosen)
    statuses = results(work)
    if previous:
        statuses = {k: statuses.get(k, v) if k in chosen else v for k, v in previous.items()}
        print(f"reran the {len(chosen)} survivors of the last run")
    elif chosen:
        statuses = {k: v for k, v in statuses.items() if k in set(chosen)}
        print(f"sampled {len(chosen)} of {len(names)} mutants (seed {args.seed})")
    if args.reimport:
        statuses = rejudge_reimported(work, statuses)
    (work / "verdicts.json").write_text(json.dumps(statuses, indent=0), "utf-8")
    return report(name, work, statuses, load_equivalents())


def rejudge_reimported(work: Path, statuses: dict) -> dict:
    """The kernels mutants mutmut reports as surviving, judged again with their module
    imported under the mutant (scripts/mutate_reimport.py: mutmut never runs import-time
    code mutated); only a kill changes a verdict."""
    again = sorted(k for k, s in statuses.items() if s not in KILLED | UNCOUNTED
                   and k.startswith("fluidscope.engine.kernels."))
    if not again:
        return statuses
    names, out = work / "reimport_names.txt", work / "reimport_verdicts.json"
    names.write_text("\n".join(again), "utf-8")
    out.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.call([sys.executable, str(ROOT / "scripts" / "mutate_reimport.py"), str(work),
                     str(names), str(out)], env=env)
    found = json.loads(out.read_text("utf-8")) if out.exists() else {}
    changed = {k: v for k, v in found.items() if v in ("killed", "timeout")}
    print(f"re-imported under the mutant: {len(changed)} of {len(again)} survivors killed")
    return {**statuses, **changed}


def verdicts(work: Path) -> dict:
    """The statuses the last run reported (merged over reruns), else mutmut's own."""
    saved = work / "verdicts.json"
    return json.loads(saved.read_text("utf-8")) if saved.exists() else results(work)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("groups", nargs="*", help="group names, or 'all'")
    parser.add_argument("--list", action="store_true", help="list the groups and exit")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--only", action="append",
                        help="mutate only these globs (repo-relative, e.g. engine/kernels/pool.py)")
    parser.add_argument("--sample", type=int, help="test a random sample of this many mutants")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rerun", action="store_true",
                        help="keep the last run's verdicts, try its survivors again on the "
                             "current tests (after writing tests that kill them)")
    parser.add_argument("--reimport", action="store_true",
                        help="judge engine/kernels survivors again with their module imported "
                             "under the mutant (import-time code; scripts/mutate_reimport.py)")
    parser.add_argument("--keep", action="store_true",
                        help="reuse the work folder (results of an earlier run stand)")
    args = parser.parse_args(argv)
    known = load_groups()
    groups = list(known) if args.groups == ["all"] else [g.rstrip("/") for g in args.groups]
    unknown = [g for g in groups if g not in known]
    if args.list or not groups or unknown:
        if unknown:
            print(f"unknown group(s) {unknown}", file=sys.stderr)
        for name, g in known.items():
            print(f"{name:28} tests: {' '.join(g.tests)}")
        return 2 if unknown else 0
    ensure_mutmut()
    summaries = [run_group(name, known[name], args) for name in groups]
    print("\nscores:")
    for s in summaries:
        print(f"  {s['group']:28} {s['score']:5.1f}%  ({s['killed']} killed, {s['survived']} "
              f"survived, {s['equivalent']} equivalent, of {s['counted']})")
    return 0 if all(s["survived"] == 0 for s in summaries) else 1


if __name__ == "__main__":
    sys.exit(main())
