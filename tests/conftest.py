"""Shared fixtures: engine logs to stderr (so --json stdout stays parseable), bundled tasks prepared once."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import structlog
from hypothesis import HealthCheck, settings

from engine.tasks import prepare_bundled
from tests.tasks.helpers import BUNDLED, structlog_to_stderr

# No verdict may depend on how fast the machine is: hypothesis's per-example deadline and its
# "too slow" health check both do, so the suite's profile turns them off (a test's own @settings
# still sets its example count).
settings.register_profile("engine", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("engine")


@pytest.fixture(autouse=True)
def _logs_to_stderr():
    saved = structlog_to_stderr()
    yield
    structlog.configure(**saved)


@pytest.fixture(scope="session")
def prepared(tmp_path_factory) -> dict[str, Path]:
    """Every bundled task prepared once per session (tests must not modify these)."""
    root = tmp_path_factory.mktemp("bundled")
    return {name: prepare_bundled(name, root / name) for name in BUNDLED}


# `make test` runs `pytest -n <cores + 1> --dist loadgroup`. A test file is one unit of work (its module
# fixtures are built once), except: a directory whose session fixtures are costly is one unit, and
# a file of long independent end-to-end runs opts out (SPREAD_OVER_WORKERS = True) so its tests
# share the workers instead of queueing on one.
_ONE_UNIT_DIRS = ("tests/audit",)


# The longest units (whole engine runs, minutes each; measured in CI's --durations) start first,
# so neither worker is left running one of them alone at the end. The e2e file leads: its iris
# test builds the session's shared run (tests/support/shared_runs.py) that later units reuse.
_LONGEST_FIRST = ("tests/e2e/test_bundled_tasks.py", "tests/audit/", "tests/sandbox/test_bundled_under_sandbox.py",
                  "tests/core/test_crash_exactness.py", "tests/crash/", "tests/campaign/test_campaign_cluster.py",
                  "tests/e2e/test_time_limit_120.py", "tests/evolution/test_e2e.py",
                  "tests/campaign/test_ray_evaluations.py", "tests/campaign/test_campaign_kill.py",
                  "tests/store_pg/test_campaign_restarts.py", "tests/store_pg/test_run_rides_through.py",
                  "tests/store_faults/test_disk_full.py", "tests/claude_cli/test_claude_evolve_e2e.py",
                  "tests/claude_cli/test_budget_small.py", "tests/claude_cli/test_relay_meter_e2e.py")


def _start_rank(item) -> int:
    path = item.nodeid.split("::")[0]
    return next((i for i, prefix in enumerate(_LONGEST_FIRST) if path.startswith(prefix)), len(_LONGEST_FIRST))


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the node ids
def pytest_collection_modifyitems(config, items):
    items.sort(key=_start_rank)  # stable: each file keeps its order
    for item in items:
        if any(item.iter_markers("xdist_group")) or getattr(item.module, "SPREAD_OVER_WORKERS", False):
            continue
        path = item.nodeid.split("::")[0]
        unit = next((d for d in _ONE_UNIT_DIRS if path.startswith(d + "/")), path)
        item.add_marker(pytest.mark.xdist_group(unit))


def pytest_collection_finish(session):
    """What collection loaded (every test module, the engine, the libraries) lives as long as this
    process: frozen, the collector stops scanning it at every full collection (in tests/core, the
    collector's time fell from 2.3 s to 1.3 s of 13 s; the engine command does the same,
    engine/run/collector.py)."""
    gc.freeze()
