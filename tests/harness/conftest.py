"""Fixtures for the harness tests: a small public task directory, a real task with a held-back
slice (tests/support/hidden_slice.py) and the anyio backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.hidden_slice import drawn, task  # noqa: F401 - fixtures


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """A task's public data: train/test csv, a sample submission with ids 1..5, a description."""
    public = tmp_path / "task" / "public"
    public.mkdir(parents=True)
    (public / "train.csv").write_text("id,x,y\n" + "".join(f"{i},{i * 0.5},{i % 2}\n" for i in range(1, 21)))
    (public / "test.csv").write_text("id,x\n" + "".join(f"{i},{i * 0.5}\n" for i in range(1, 6)))
    (public / "sample_submission.csv").write_text("id,y\n" + "".join(f"{i},0\n" for i in range(1, 6)))
    (public / "description.md").write_text("# Toy task\nPredict y.\n")
    nested = public / "images"
    nested.mkdir()
    (nested / "a.txt").write_text("pixel data\n")
    return public
