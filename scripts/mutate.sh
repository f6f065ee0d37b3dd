#!/usr/bin/env bash
# Mutation testing of the core with cosmic-ray (`make mutate`; not run by CI: hours).
#
#   scripts/mutate.sh                      every module of scripts/mutation_modules.txt
#   scripts/mutate.sh engine/kernels/seqbatch.py ...   only these
#
# Cosmic-ray mutates files in place, so it works on a clone of HEAD in $MUTATION_DIR
# (default /tmp/fluidscope-mutation), never on this checkout, which other processes may
# be importing. The clone is imported through a path shim: fluidscope is a namespace
# package, and a fluidscope/ folder on PYTHONPATH whose engine/designer/widgets link to the
# clone's comes before the editable install's finder. Each module runs its own fast tests
# (mutation_modules.txt); per module a session database and a report land in
# artifacts/mutation/ (score = killed / all, surviving mutants listed with their diffs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
PY="$ROOT/.venv/bin/python"
CR="$ROOT/.venv/bin/cosmic-ray"
OUT="$ROOT/artifacts/mutation"
WORK="${MUTATION_DIR:-/tmp/fluidscope-mutation}"
TIMEOUT="${MUTATION_TIMEOUT:-120}"

[ -x "$CR" ] || "$PY" -m pip install -q -e ".[mutation]"
rm -rf "$WORK"
git clone -q --no-hardlinks "$ROOT" "$WORK/repo"
mkdir -p "$WORK/shim/fluidscope" "$OUT"
for part in engine designer widgets; do ln -s "$WORK/repo/$part" "$WORK/shim/fluidscope/$part"; done
export PYTHONPATH="$WORK/shim${PYTHONPATH:+:$PYTHONPATH}"
# the clone, not this checkout, is what the tests import
(cd "$WORK/repo" && "$PY" -c 'import fluidscope.engine as e, sys; sys.exit(0 if e.__file__.startswith(sys.argv[1]) else 1)' "$WORK") \
    || { echo "mutate: the path shim does not reach the clone" >&2; exit 1; }

if [ $# -gt 0 ]; then wanted=" $* "; else wanted=""; fi
summary="$OUT/summary.txt"
while IFS='|' read -r module tests; do
    module="$(echo "$module" | xargs)"; tests="$(echo "$tests" | xargs)"
    case "$module" in ''|\#*) continue ;; esac
    if [ -n "$wanted" ] && [[ "$wanted" != *" $module "* ]]; then continue; fi
    name="$(echo "$module" | tr '/' '_' | sed 's/\.py$//')"
    config="$WORK/$name.toml"
    cat > "$config" <<EOF
[cosmic-ray]
module-path = "$module"
timeout = $TIMEOUT
excluded-modules = []
test-command = "$PY -m pytest -x -q -p no:cacheprovider -p no:randomly $tests"

[cosmic-ray.distributor]
name = "local"
EOF
    db="$OUT/$name.sqlite"
    rm -f "$db"
    echo "mutate: $module ($tests)" >&2
    (cd "$WORK/repo" && "$CR" init "$config" "$db" && nice "$CR" exec "$config" "$db")
    "$ROOT/.venv/bin/cr-report" --show-diff "$db" > "$OUT/$name.report.txt" || true
    "$PY" scripts/mutation_score.py "$db" "$module" | tee "$OUT/$name.score.txt"
done < scripts/mutation_modules.txt
cat "$OUT"/*.score.txt > "$summary"  # every module run so far, the latest run of each
echo "mutate: scores in $summary, surviving mutants in $OUT/*.report.txt" >&2
