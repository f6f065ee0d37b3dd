#!/usr/bin/env bash
# Set up a checkout of fluidscope: system packages, .venv, the editable install.
#
#   scripts/setup.sh          what `make lab` needs (graphviz, .venv with fluidscope[dev])
#   scripts/setup.sh --test   also what `make test` needs (chromium for the browser tests,
#                             Node and js/node_modules for the front-end bundle freshness
#                             check, the PaddlePaddle venv of the compatibility tests)
#
# Idempotent: every step checks first and skips what is already done, so a second run
# takes about a second and needs no network. The pip step re-runs only when pyproject.toml
# changes (its sha256 is kept in .venv/.fluidscope-setup.sha256).
# Never downloads browsers through playwright: the browser tests use Debian's chromium.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

FOR_TESTS=0
for arg in "$@"; do
    case "$arg" in
        --test) FOR_TESTS=1 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "setup.sh: unknown argument '$arg' (known: --test)" >&2; exit 2 ;;
    esac
done

PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.venv"
STAMP="$VENV/.fluidscope-setup.sha256"
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

say() { printf '[setup] %s\n' "$*"; }

# --- system packages -------------------------------------------------------------------
# Debian package names of what is missing; apt-get runs at most once (update + install).
missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
if [[ $FOR_TESTS == 1 ]]; then
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    # tests/widgets/test_js_bundle.py rebuilds widgets/static from js/src with esbuild
    # (Node >= 18; Debian 12's nodejs is 18) and compares; `npm ci` installs esbuild.
    command -v node >/dev/null 2>&1 || missing+=(nodejs)
    command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
# Debian's own python3 needs python3-venv for `python3 -m venv` (ensurepip).
if [[ ! -x "$VENV/bin/python" ]] && ! "$PYTHON" -c 'import ensurepip' >/dev/null 2>&1; then
    missing+=(python3-venv)
fi

if [[ ${#missing[@]} -gt 0 ]]; then
    apt_cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing[*]}"
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        say "installing Debian packages: ${missing[*]}"
        if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
            # Not fatal: graphviz has a fallback, and what truly needs a package fails
            # later with its own message.
            say "apt-get failed; continuing without: ${missing[*]}"
        fi
    else
        # graphviz is optional at runtime (graphs fall back to in-browser rendering);
        # chromium is only used by the browser tests.
        say "missing Debian packages: ${missing[*]}. Install them as root with:"
        say "    $apt_cmd"
        say "continuing without them"
    fi
fi

# --- virtual environment ---------------------------------------------------------------
if [[ -e "$VENV" ]] && ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    say "$VENV exists but its python does not run; recreating it"
    rm -rf "$VENV"
fi
if [[ ! -e "$VENV" ]]; then
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
        || { echo "setup.sh: fluidscope needs Python >= 3.10 ($PYTHON is older)" >&2; exit 1; }
    say "creating $VENV with $("$PYTHON" --version 2>&1)"
    "$PYTHON" -m venv "$VENV"
fi

# --- editable install of fluidscope[dev] -----------------------------------------------
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
have="$(cat "$STAMP" 2>/dev/null || true)"
# The stamp alone could lie if someone uninstalled the package; find_spec is a cheap
# check that does not run the package's code.
if [[ "$want" != "$have" ]] \
   || ! "$VENV/bin/python" -c 'import importlib.util as u, sys
sys.exit(u.find_spec("fluidscope.engine") is None)' >/dev/null 2>&1; then
    say "installing fluidscope[dev] into .venv (the first time takes a minute or two)"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -e ".[dev]"
    echo "$want" > "$STAMP"
else
    say ".venv is up to date with pyproject.toml"
fi

# --- test-only extras ------------------------------------------------------------------
# js/node_modules from the lockfile (esbuild and viz.js, exact versions); re-run only when
# package-lock.json changes. --ignore-scripts: esbuild's JS shim finds its binary in the
# optional @esbuild/<platform> package without the postinstall. Not fatal: the freshness
# test says what is missing (and fails in CI, where it is required).
JS_STAMP="$ROOT/js/node_modules/.fluidscope-lock.sha256"
if [[ $FOR_TESTS == 1 ]] && command -v npm >/dev/null 2>&1; then
    want_js="$(sha256sum js/package-lock.json | cut -d' ' -f1)"
    if [[ "$want_js" != "$(cat "$JS_STAMP" 2>/dev/null || true)" ]]; then
        say "installing js/node_modules from js/package-lock.json (npm ci)"
        if (cd js && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
            echo "$want_js" > "$JS_STAMP"
        else
            say "npm ci failed; the front-end bundle freshness check will not run"
        fi
    else
        say "js/node_modules is up to date with js/package-lock.json"
    fi
fi
if [[ $FOR_TESTS == 1 && -f "$ROOT/scripts/setup_paddle_venv.sh" ]]; then
    bash "$ROOT/scripts/setup_paddle_venv.sh"
fi
say "done"
