"""Artifacts on PostgreSQL beyond the store contract: a database written before artifacts (schema 1)
opens, gains the artifact tables, and stores long strings as artifacts from then on."""

from __future__ import annotations

from pathlib import Path

from events.base import NewEvent
from events.core import AgentCallRequested
from store.postgres import SCHEMA_VERSION, PostgresEventStore
from tests.core.store_contract import note
from tests.store_pg.server import schema_for


def test_a_schema_1_database_gains_the_artifact_tables(pg_url: str, tmp_path: Path) -> None:
    schema = schema_for(tmp_path)
    store = PostgresEventStore(pg_url, schema=schema)
    store.create_run("R", strategy="toy", task="toy")
    store.append("R", [note(1)], expected_seq=0)
    store.conn.execute("DROP TABLE artifacts; DROP TABLE artifact_chunks; "
                       "UPDATE engine_meta SET value='1' WHERE key='schema'")  # what schema 1 had
    store.close()
    store = PostgresEventStore(pg_url, schema=schema)
    try:
        row = store.conn.execute("SELECT value FROM engine_meta WHERE key='schema'").fetchone()
        assert row is not None and row[0] == str(SCHEMA_VERSION)
        prompt = "y = 2\n" * 400
        store.append("R", [NewEvent(event=AgentCallRequested(effect_id="a", agent_type="toy", prompt=prompt),
                                    scope="toy")], expected_seq=1)
        assert [e.payload.get("prompt") for e in store.read("R")] == [None, prompt]
        stored = store.conn.execute("SELECT payload FROM events WHERE seq=2").fetchone()
        assert stored is not None and '"$artifact"' in stored[0] and prompt not in stored[0]
        assert store.verify_chain("R") is None
    finally:
        store.close()
