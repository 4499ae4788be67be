"""Issue 15 through the real ``engine`` CLI: attacks recorded as errors while the run goes on,
the policy of every evaluation in the log, ``verify``/``lineage``/``report`` stating it, the
``--sandbox`` modes and their one-line errors."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from tests.audit.helpers import ECHO_AGENT, REPO, engine
from tests.sandbox.conftest import ANSWER

STRATEGY = "tests.sandbox.attack_strategy:main"


def make_task(root: Path) -> Path:
    task = root / "redteam-task"
    public = task / "prepared" / "public"
    shutil.copytree(REPO / "tests" / "toy" / "task", public)
    (task / "prepared" / "task.yaml").write_text((public / "task.yaml").read_text())
    (task / "prepared" / "private").mkdir()
    (task / "prepared" / "private" / "answers.csv").write_text(ANSWER)
    return task


def log_of(db: Path, run_id: str) -> list[dict]:
    proc = engine("log", run_id, "--json", "--db", db)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def test_attacks_fail_and_the_run_goes_on_under_bwrap(tmp_path):
    task = make_task(tmp_path)
    db = tmp_path / "runs" / "engine.db"
    proc = engine("start", "--task", task, "--strategy", STRATEGY, "--agent", ECHO_AGENT, "--sandbox", "bwrap",
                  "--run-id", "R", "--db", db, "--json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    events = log_of(db, "R")
    notice = [e for e in events if e["type"] == "SandboxNotice"]
    assert notice and notice[0]["payload"]["mode"] == "bwrap" and notice[0]["payload"]["level"] == "info"
    results = {e["payload"]["effect_id"].rsplit("/", 1)[-1]: e["payload"] for e in events
               if e["type"] == "EvaluationCompleted"}
    assert set(results) == {"read-answers", "append-db", "delete-data", "walk-up", "delete-input", "honest"}
    for name in ("read-answers", "append-db", "delete-data", "walk-up", "delete-input"):
        result = results[name]["result"]
        assert result["is_error"], name
        assert "SECRET-ANSWER" not in result["stdout"] + result["stderr"], name
    assert "No such file or directory" in results["read-answers"]["result"]["stderr"]
    assert "No such file or directory" in results["delete-data"]["result"]["stderr"]
    assert "Read-only file system" in results["delete-input"]["result"]["stderr"]
    assert results["honest"]["result"]["score"] == 0.625
    for payload in results.values():
        assert payload["sandbox"]["mode"] == "bwrap" and payload["sandbox"]["network"] == "none"
        assert any(p.endswith("private") for p in payload["sandbox"]["protected"])
        assert any(p.endswith("engine.db") for p in payload["sandbox"]["protected"])
    # The task's files in the run are intact; the database still verifies.
    run_task = Path(json.loads(json.dumps(events[0]["payload"]))["task_dir"])
    assert (run_task / "train.csv").exists()
    verify = engine("verify", "R", "--db", db)
    assert verify.returncode == 0, verify.stderr
    assert "every evaluation (6) ran under bwrap; private answers and the engine database not visible" in verify.stdout
    lineage = engine("lineage", "R", "--db", db)
    assert "every evaluation (6) ran under bwrap" in lineage.stdout + lineage.stderr
    report = tmp_path / "report.html"
    assert engine("report", "R", "--db", db, "-o", report).returncode == 0
    html = report.read_text()
    assert "Isolation of the evaluations" in html and "every evaluation (6) ran under bwrap" in html


def test_sandbox_none_is_recorded_as_a_warning_and_shown_by_verify(tmp_path):
    task = make_task(tmp_path)
    db = tmp_path / "runs" / "engine.db"
    digest = hashlib.sha256((task / "prepared" / "private" / "answers.csv").read_bytes()).hexdigest()
    proc = engine("start", "--task", task, "--strategy", STRATEGY, "--agent", ECHO_AGENT, "--sandbox", "none",
                  "--run-id", "N", "--db", db, "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    events = log_of(db, "N")
    notice = [e["payload"] for e in events if e["type"] == "SandboxNotice"]
    assert notice[0]["mode"] == "none" and notice[0]["level"] == "warning"
    assert "--sandbox none" in notice[0]["message"]
    # Without a sandbox the attack does read the answers: the log says so, verify shows it.
    read = [e["payload"] for e in events if e["type"] == "EvaluationCompleted"
            and e["payload"]["effect_id"].endswith("read-answers")][0]
    assert "SECRET-ANSWER" in read["result"]["stdout"]
    assert read["sandbox"]["mode"] == "none"
    verify = engine("verify", "N", "--db", db)
    assert verify.returncode == 0
    assert "0 of 6 evaluations ran under bwrap" in verify.stdout and "no sandbox" in verify.stdout
    assert hashlib.sha256((task / "prepared" / "private" / "answers.csv").read_bytes()).hexdigest() == digest


def test_sandbox_bwrap_without_bubblewrap_is_a_one_line_error(tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    env_path = os.environ.get("PATH", "")
    os.environ["PATH"] = str(bare)
    try:
        proc = engine("start", "--task", make_task(tmp_path), "--strategy", STRATEGY, "--agent", ECHO_AGENT,
                      "--sandbox", "bwrap", "--db", tmp_path / "e.db")
    finally:
        os.environ["PATH"] = env_path
    assert proc.returncode == 2, proc.stderr
    message = " ".join(proc.stderr.split())
    assert "--sandbox bwrap: bubblewrap (bwrap) is not installed" in message
    assert "`bubblewrap`" in message and "Traceback" not in proc.stderr
