"""Shared fixtures: engine logs to stderr (so --json stdout stays parseable), bundled tasks prepared once."""

from __future__ import annotations

from pathlib import Path

import pytest
import structlog

from engine.tasks import prepare_bundled
from tests.tasks.helpers import BUNDLED, structlog_to_stderr


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


# `make test` runs `pytest -n 2 --dist loadgroup`. A test file is one unit of work (its module
# fixtures are built once), except: a directory whose session fixtures are costly is one unit, and
# a file of long independent end-to-end runs opts out (SPREAD_OVER_WORKERS = True) so its tests
# share the two workers instead of queueing on one.
_ONE_UNIT_DIRS = ("tests/audit",)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the node ids
def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.iter_markers("xdist_group")) or getattr(item.module, "SPREAD_OVER_WORKERS", False):
            continue
        path = item.nodeid.split("::")[0]
        unit = next((d for d in _ONE_UNIT_DIRS if path.startswith(d + "/")), path)
        item.add_marker(pytest.mark.xdist_group(unit))
