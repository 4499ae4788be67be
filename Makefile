# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
ENGINE := $(VENV)/bin/engine
STAMP  := $(VENV)/.installed
CLUSTER_STAMP := $(VENV)/.installed-cluster
DEMO_DB := engine-runs/demo.db
DEMO_RUN := demo-$(shell date +%Y%m%d-%H%M%S)

.PHONY: venv cluster-deps demo test test-fast bench fixtures clean

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

# The .[cluster] extra (psycopg, ray) and a PostgreSQL server for the store and campaign tests: the
# Debian package's binaries, started per test session in a temp dir (store/pg_local.py).
cluster-deps: $(CLUSTER_STAMP)

$(CLUSTER_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,cluster]'
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; }
	touch $(CLUSTER_STAMP)

test: venv cluster-deps
	PYTHONPATH=$(CURDIR) $(VENV)/bin/pytest -n 2 --dist loadfile -q --durations=15

bench: venv cluster-deps
	PYTHONPATH=$(CURDIR) $(PY) bench/bench_core.py
	PYTHONPATH=$(CURDIR) $(PY) bench/bench_replay.py
	PYTHONPATH=$(CURDIR) $(PY) bench/bench_postgres.py

# Re-record the replay fixtures (tests/replays/*.jsonl) after an intended behaviour change.
fixtures: venv
	PYTHONPATH=$(CURDIR) $(PY) -m tests.replays.record --all

clean:
	rm -rf $(VENV) engine-runs .pytest_cache .hypothesis
