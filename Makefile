# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
ENGINE := $(VENV)/bin/engine
STAMP  := $(VENV)/.installed
DEMO_DB := engine-runs/demo.db
DEMO_RUN := demo-$(shell date +%Y%m%d-%H%M%S)

.PHONY: venv demo test lint test-fast bench fixtures clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The main job on a bundled task with the offline builtin agent: no network, no API key.
demo: venv
	$(ENGINE) start --task breast-cancer --agent builtin --preset quick --db $(DEMO_DB) --run-id $(DEMO_RUN)
	$(ENGINE) grade $(DEMO_RUN) --db $(DEMO_DB)
	$(ENGINE) report $(DEMO_RUN) --db $(DEMO_DB) -o engine-runs/$(DEMO_RUN)/report.html
	@echo "report: engine-runs/$(DEMO_RUN)/report.html   audit: $(ENGINE) lineage $(DEMO_RUN) --db $(DEMO_DB)"

test: venv lint
	PYTHONPATH=$(CURDIR) $(VENV)/bin/pytest -n 2 --dist loadfile -q --durations=15

# The rules in code: ruff (errors and likely bugs) and mypy (the production packages).
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: venv
	PYTHONPATH=$(CURDIR) $(PY) bench/bench_core.py
	PYTHONPATH=$(CURDIR) $(PY) bench/bench_replay.py

# Re-record the replay fixtures (tests/replays/*.jsonl) after an intended behaviour change.
fixtures: venv
	PYTHONPATH=$(CURDIR) $(PY) -m tests.replays.record --all

clean:
	rm -rf $(VENV) engine-runs .pytest_cache .hypothesis
