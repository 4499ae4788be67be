"""Finalization's contamination check from the CLI and the library (issue 16 item 7; REQ-FN-030/034).

Off by default; ``engine start ... --reference-discussions FILE`` (or ``run_pipeline(...,
reference_discussions=[...])``) turns it on, the config records ``contamination_check: true``
and RunStarted's params the discussions, and finalization checks the final solution against
each one (``ContaminationChecked``). A bad file is a usage error before any run exists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.config.references import read_reference_discussions
from engine.config.validate import InputError
from store.sqlite import SQLiteEventStore
from tests.pipeline.test_cli_inputs import AGENT, engine_in_process

SMALL = ["--set", "num_retrieved_models=1", "--set", "outer_loop_steps=1", "--set", "inner_loop_steps=1",
         "--set", "num_parallel_solutions=1"]


def events(db: Path, run_id: str) -> list:
    store = SQLiteEventStore(db, create=False)
    try:
        return list(store.read(run_id))
    finally:
        store.close()


def start(task_dir: Path, db: Path, *extra: str):
    return engine_in_process("start", "--task", str(task_dir), "--agent", AGENT, "--db", str(db), "--json",
                             *SMALL, *extra)


def test_REQ_FN_030_034_cli_reference_discussions_turn_the_check_on_and_are_recorded(tmp_path, task_dir):
    refs = tmp_path / "refs.txt"
    refs.write_text("A public notebook that trains a forest.\n---\n\n---\nscore = 0.5\n")  # the 2nd is empty
    db = tmp_path / "e.db"
    proc = start(task_dir, db, "--reference-discussions", str(refs))
    assert proc.returncode == 0, proc.stderr
    run_id = json.loads(proc.stdout)["run_id"]
    log = events(db, run_id)
    started = log[0].payload
    assert started["config"]["contamination_check"] is True
    assert started["params"]["reference_discussions"] == ["A public notebook that trains a forest.", "score = 0.5"]
    (checked,) = [e.payload for e in log if e.type == "ContaminationChecked"]
    # The final solution holds "score = 0.5x": the second discussion is quoted in it, the first is not.
    assert checked["verdicts"] == ["Novel", "Same"] and checked["verdict"] == "Same"
    prompts = [e.payload["variables"]["reference discussion"] for e in log
               if e.type == "AgentCallRequested" and e.payload.get("variant") == "contamination"]
    assert prompts == started["params"]["reference_discussions"]


def test_REQ_FN_030_the_check_is_off_by_default(tmp_path, task_dir):
    db = tmp_path / "e.db"
    proc = start(task_dir, db)
    assert proc.returncode == 0, proc.stderr
    log = events(db, json.loads(proc.stdout)["run_id"])
    assert log[0].payload["config"]["contamination_check"] is False
    assert "reference_discussions" not in log[0].payload["params"]
    assert not [e for e in log if e.type == "ContaminationChecked"]
    assert not [e for e in log if e.type == "AgentCallRequested" and e.payload.get("variant") == "contamination"]


@pytest.mark.parametrize("content,name,expect", [
    (None, "missing.txt", "no such file"),
    ("\n---\n  \n", "refs.txt", "holds no reference discussion"),
    ("{not json", "refs.json", "not valid JSON"),
    ('{"discussions": [1, 2]}', "refs.json", "list of strings"),
])
def test_a_bad_reference_file_is_a_usage_error_before_any_run(tmp_path, task_dir, content, name, expect):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    db = tmp_path / "runs" / "e.db"
    proc = start(task_dir, db, "--reference-discussions", str(path))
    assert proc.returncode == 2 and expect in " ".join(proc.stderr.split()), proc.stderr
    assert "Traceback" not in proc.stderr and not db.exists()


def test_reference_files_json_list_object_and_text(tmp_path):
    (tmp_path / "a.json").write_text('["one", "  ", "two"]')
    (tmp_path / "b.json").write_text('{"discussions": ["x"]}')
    (tmp_path / "c.md").write_text("first\nline two\n---\nsecond\n")
    assert read_reference_discussions(tmp_path / "a.json") == ["one", "two"]
    assert read_reference_discussions(tmp_path / "b.json") == ["x"]
    assert read_reference_discussions(tmp_path / "c.md") == ["first\nline two", "second"]
    (tmp_path / "d.bin").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match="UTF-8"):
        read_reference_discussions(tmp_path / "d.bin")


def test_REQ_FN_034_library_reference_discussions(tmp_path, task_dir):
    from engine.api import run_pipeline_sync
    from events.domain import PipelineConfig

    config = PipelineConfig(num_retrieved_models=1, outer_loop_steps=1, inner_loop_steps=1, num_parallel_solutions=1)
    db = tmp_path / "lib.db"
    result = run_pipeline_sync(str(task_dir), config, agent=AGENT, db=db, reference_discussions=["unrelated text"])
    assert result.config.contamination_check is True
    store = SQLiteEventStore(db, create=False)
    try:
        (run,) = store.list_runs()
        log = list(store.read(run.run_id))
    finally:
        store.close()
    assert log[0].payload["params"]["reference_discussions"] == ["unrelated text"]
    assert [e.payload["verdict"] for e in log if e.type == "ContaminationChecked"] == ["Novel"]
    with pytest.raises(InputError, match="no reference discussion"):
        run_pipeline_sync(str(task_dir), config, agent=AGENT, db=db, reference_discussions=[" "])
