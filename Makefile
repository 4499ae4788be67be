# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
ENGINE := $(VENV)/bin/engine
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test-extras
DEMO_DB := engine-runs/demo.db
DEMO_RUN := demo-$(shell date +%Y%m%d-%H%M%S)

.PHONY: venv demo test lint bench bench-automl heldout-report fixtures clean sandbox-deps browser-deps

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(STAMP)

# The main job on a bundled task with the offline builtin agent: no network, no API key.
demo: venv
	$(ENGINE) start --task breast-cancer --agent builtin --preset quick --db $(DEMO_DB) --run-id $(DEMO_RUN)
	$(ENGINE) grade $(DEMO_RUN) --db $(DEMO_DB)
	$(ENGINE) report $(DEMO_RUN) --db $(DEMO_DB) -o engine-runs/$(DEMO_RUN)/report.html
	@echo "report: engine-runs/$(DEMO_RUN)/report.html   audit: $(ENGINE) lineage $(DEMO_RUN) --db $(DEMO_DB)"

# Scripts run sandboxed with bubblewrap (Debian package `bubblewrap`); its tests must run, not
# skip, so it is installed here when missing (as root with apt), else a clear message.
sandbox-deps:
	@if command -v bwrap >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing bubblewrap (apt-get) for the sandbox"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null 2>&1 || \
	  { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null; } || \
	  { echo "make: could not install bubblewrap with apt-get" >&2; exit 1; }; \
	else \
	  echo "make: bubblewrap (bwrap) is missing; install the Debian package 'bubblewrap' (sudo apt-get install bubblewrap) and run make test again" >&2; \
	  exit 1; \
	fi

# The UI's browser tests (tests/ui/) drive Debian's Chromium through its own driver (Selenium's and
# Playwright's browser downloads are not used): installed here when missing, like bubblewrap.
browser-deps:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing chromium and chromium-driver (apt-get) for the UI's browser tests"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || \
	  { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null; } || \
	  { echo "make: could not install chromium and chromium-driver with apt-get" >&2; exit 1; }; \
	else \
	  echo "make: chromium or chromedriver is missing; install the Debian packages 'chromium' and 'chromium-driver' (sudo apt-get install chromium chromium-driver) and run make test again" >&2; \
	  exit 1; \
	fi

# What only the tests (and benchmarks) need beyond the demo (whose install is the engine with its
# whole learner portfolio, LightGBM included): pytest, hypothesis, ruff and mypy, the optional
# backends' clients, the cluster extra (psycopg, ray) and a PostgreSQL server — the Debian package's binaries, started
# per test session in a temp dir (store/pg_local.py).
$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,openai,cluster]'
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; }
	touch $(TEST_STAMP)

# The linters run beside the suite, not before it (mypy keeps one core busy for half a minute while
# the suite is collecting); their output follows the suite's, and either failing fails the target.
# The suite starts hundreds of Python processes (every `engine` command, every script), so their
# bytecode is cached even where the environment says otherwise (PYTHONDONTWRITEBYTECODE).
# One worker more than the cores: much of the suite waits (on whole runs' time limits, on servers,
# on a browser), so two workers on two cores left them 43 % idle (CI: 1,470 CPU-seconds in
# 1,280 s); the verdicts do not depend on the machine's speed, so the contention changes none.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: venv $(TEST_STAMP) sandbox-deps browser-deps
	@{ $(LINT); } > $(VENV)/lint.log 2>&1 & linting=$$!; \
	env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$(CURDIR) $(VENV)/bin/pytest -n $(TEST_WORKERS) --dist loadgroup -q --durations=15; \
	tested=$$?; wait $$linting; linted=$$?; cat $(VENV)/lint.log; \
	if [ $$linted -ne 0 ]; then echo "make test: ruff or mypy failed (their output is above)" >&2; fi; \
	[ $$tested -eq 0 ] && [ $$linted -eq 0 ]

# The rules in code: ruff (errors and likely bugs) and mypy (the production packages).
LINT := $(VENV)/bin/ruff check . && $(VENV)/bin/mypy
lint: venv $(TEST_STAMP)
	$(LINT)

# Every bench runs to the end, each against its plain baseline; a bench that fails or misses its
# target makes `make bench` fail once all have run. tests/bench/ runs each at its --smoke size.
# bench_cores runs last: its twelve script runs fit a 9,000-row table (its docstring says why one table).
BENCHES := bench_core bench_replay bench_sandbox bench_postgres bench_campaign bench_ui bench_longrun bench_omp_wait bench_cores
bench: venv $(TEST_STAMP) sandbox-deps
	@failed=""; for b in $(BENCHES); do echo "== bench/$$b.py"; \
	  PYTHONPATH=$(CURDIR) $(PY) bench/$$b.py || failed="$$failed $$b"; done; \
	  if [ -n "$$failed" ]; then echo "make bench: failed or missed a target:$$failed" >&2; exit 1; fi

# docs/heldout-results.md from the kept rows in bench/results/ (bench_automl's report per time limit).
heldout-report: venv
	PYTHONPATH=$(CURDIR) $(PY) bench/heldout_tables.py

# Our engine (time-driven) against FLAML and AutoGluon (medium_quality, best_quality) at the same
# wall clock, every bundled task (development and held-out sets reported apart), 3 seeds (days of
# CPU: not part of `make bench`). Kept rows in bench/results/ that answer for a fit now are taken
# instead of fitting again, and the new rows are kept there (bench/automl_results.py). The peers
# live in .venv-automl: AutoGluon would downgrade our pandas.
BENCH_LIMIT ?= 120
bench-automl: venv $(TEST_STAMP) sandbox-deps .venv-automl/.installed
	PYTHONPATH=$(CURDIR) $(PY) bench/bench_automl.py --preset time --time-limit $(BENCH_LIMIT) --seeds 0 1 2 \
	  --strategies mle-star evolve --reuse bench/results \
	  --json bench/results/automl-$(BENCH_LIMIT)s-$(shell date +%Y%m%d-%H%M%S).json

.venv-automl/.installed: bench/automl-requirements.txt
	$(PYTHON) -m venv .venv-automl
	.venv-automl/bin/python -m pip install --quiet --upgrade pip
	.venv-automl/bin/python -m pip install --quiet -r bench/automl-requirements.txt
	touch $@

# Re-record the replay fixtures (tests/replays/*.jsonl) after an intended behaviour change.
fixtures: venv $(TEST_STAMP)
	PYTHONPATH=$(CURDIR) $(PY) -m tests.replays.record --all
	PYTHONPATH=$(CURDIR) $(PY) -m tests.replays.build --all

clean:
	rm -rf $(VENV) .venv-automl engine-runs .pytest_cache .hypothesis
