#!/usr/bin/env bash
# Create .venv-paddle: a separate virtual environment holding paddlepaddle 3.3.1 (CPU,
# from PyPI) and netron 9.3.3 (whose JS model loaders the tests run under node) for the
# compatibility tests (tests/test_paddle_compat.py). It is kept apart from .venv because
# paddle pins its own protobuf and numpy.
#
# Idempotent: a stamp file records what was installed; a second run with the same
# stamp does nothing. Usage: bash scripts/setup_paddle_venv.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-paddle"
PADDLE_VERSION="3.3.1"
NETRON_VERSION="9.3.3"
STAMP_TEXT="paddlepaddle==$PADDLE_VERSION netron==$NETRON_VERSION"
STAMP="$VENV/.fluidscope-stamp"

if [[ -x "$VENV/bin/python" && -f "$STAMP" ]] && grep -qxF "$STAMP_TEXT" "$STAMP"; then
    echo "setup_paddle_venv: $VENV is up to date ($STAMP_TEXT)"
    exit 0
fi

PYTHON="${PYTHON:-python3}"
if [[ ! -x "$VENV/bin/python" ]]; then
    "$PYTHON" -m venv "$VENV"
fi
rm -f "$STAMP"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "paddlepaddle==$PADDLE_VERSION" "netron==$NETRON_VERSION"
# Import once so a broken wheel fails here, not in the middle of a test run.
"$VENV/bin/python" -W ignore -c "import paddle; print('setup_paddle_venv: paddle', paddle.__version__)"
printf '%s\n' "$STAMP_TEXT" > "$STAMP"
