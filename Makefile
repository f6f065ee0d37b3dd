# The README's two commands: `make lab` (set up, open JupyterLab on notebooks/) and
# `make test` (set up, run the whole test suite). Both are idempotent: scripts/setup.sh
# skips every step that is already done.
#
#   make lab LAB_ARGS="--ip=0.0.0.0 --port=8888"   extra flags for jupyter lab
#   make test PYTEST_ARGS="-k op_matrix -x"         extra flags for pytest

VENV := .venv
PY := $(VENV)/bin/python
LAB_ARGS ?=
PYTEST_ARGS ?=
# No display (a server, a container): do not try to open a browser, print the URL instead.
NO_BROWSER := $(if $(DISPLAY)$(WAYLAND_DISPLAY),,--no-browser)

.PHONY: lab test test-stress mutate bench setup clean distclean

setup:
	bash scripts/setup.sh

lab: setup
	mkdir -p notebooks
	$(VENV)/bin/jupyter lab notebooks/ --ServerApp.allow_root=True $(NO_BROWSER) $(LAB_ARGS)

# pytest's temporary files stay inside the checkout (.pytest_tmp, git-ignored).
test:
	bash scripts/setup.sh --test
	$(PY) -m pytest -q --basetemp=.pytest_tmp $(PYTEST_ARGS) tests/

# The browser tests with two busy-loop processes on the cores, 5 runs in a row
# (STRESS_RUNS=n, STRESS_LOOPS=n, PYTEST_ARGS="-k canvas"): what a busy CI machine does.
test-stress:
	bash scripts/setup.sh --test
	bash scripts/test_stress.sh

# Mutation testing of the core (not run by CI, which runs tests/mutation's fixed mutants):
# mutmut on a copy (scripts/mutate.py; minutes per module), every module of
# scripts/mutation_modules.txt or `make mutate MODULES="engine/debug widgets/canvas"`;
# MUTATE_ARGS="--sample 300"; score and surviving mutants printed per module.
# TOOL=cosmic-ray: the same modules with cosmic-ray (scripts/mutate.sh; hours).
MODULES ?=
TOOL ?= mutmut
MUTATE_ARGS ?=
mutate: setup
	$(if $(filter cosmic-ray,$(TOOL)),bash scripts/mutate.sh $(MODULES),$(PY) scripts/mutate.py $(or $(MODULES),all) $(MUTATE_ARGS))

# One JSON line per benchmarks/*.py script (benchmarks/_*.py are shared helpers, not run).
# Set-up messages go to stderr so that stdout holds only the JSON lines.
bench:
	@bash scripts/setup.sh >&2
	@set -e; found=0; \
	for script in benchmarks/*.py; do \
	    case "$${script##*/}" in _*) continue ;; esac; \
	    [ -f "$$script" ] || continue; found=1; \
	    $(PY) "$$script"; \
	done; \
	[ $$found = 1 ] || echo "make bench: no benchmarks/*.py scripts yet" >&2

# Build and test outputs; keeps the venvs (distclean removes .venv and .venv-paddle too).
clean:
	rm -rf .pytest_tmp .pytest_cache build dist artifacts .jupyter-home *.egg-info
	find . \( -path ./.venv -o -path ./.venv-paddle \) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) .venv-paddle
