"""The SQLite SessionStore passes the SDK's own conformance suite (all 14 contracts)."""

from __future__ import annotations

import itertools

import pytest
from claude_agent_sdk.testing import run_session_store_conformance

from engine.agents.claude.backend import ClaudeBackend
from engine.agents.claude.session_store import SQLiteSessionStore
from events.domain import PipelineConfig
from handlers.prompts import build_request

pytestmark = pytest.mark.anyio


async def test_sqlite_session_store_conformance_in_memory():
    await run_session_store_conformance(SQLiteSessionStore)


async def test_sqlite_session_store_conformance_on_disk(tmp_path):
    counter = itertools.count()
    await run_session_store_conformance(lambda: SQLiteSessionStore(tmp_path / f"t{next(counter)}.db"))


async def test_uuid_entries_are_idempotent(tmp_path):
    store = SQLiteSessionStore(tmp_path / "s.db")
    key = {"project_key": "p", "session_id": "s"}
    await store.append(key, [{"type": "x", "uuid": "a"}, {"type": "x"}])
    await store.append(key, [{"type": "x", "uuid": "a"}, {"type": "x"}])
    assert await store.load(key) == [{"type": "x", "uuid": "a"}, {"type": "x"}, {"type": "x"}]


async def test_backend_asks_the_cli_to_mirror_transcripts(fake_claude, ctx, secret_env):
    fake_claude.script({"steps": [{"type": "result", "result": "ok"}]})
    backend = ClaudeBackend(PipelineConfig(), env=secret_env, cli_path=fake_claude.cli_path, sandbox="none",
                            session_store=SQLiteSessionStore())
    await backend.call(build_request("summarize", {"ablation_code": "a", "raw_result": "r"}, effect_id="e"), ctx)
    assert "--session-mirror" in fake_claude.argv()
