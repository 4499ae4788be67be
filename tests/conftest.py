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
