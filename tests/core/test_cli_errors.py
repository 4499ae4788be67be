"""Clear errors, no traceback (issue "Event-sourced core", Must show: the CLI's exit codes —
0 ok, 1 a failed run or check, 2 a usage or input error — with a message and never a traceback).
Every case runs the real CLI in a subprocess."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from store.sqlite import SQLiteEventStore
from tests.core.helpers import (
    TOY_AGENT,
    TOY_STRATEGY,
    TOY_TASK,
    assert_no_traceback,
    engine_env,
    run_engine,
    start_toy,
)


def _expect(proc, code: int, *needles: str) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert_no_traceback(proc)
    text = " ".join((proc.stderr + proc.stdout).split()).lower()
    for needle in needles:
        assert needle.lower() in text, (needle, proc.stderr)


def test_unknown_run_id(toy_run) -> None:
    for verb in ("status", "resume", "replay"):
        _expect(run_engine(verb, "no-such-run", "--db", toy_run.db), 2, "no run 'no-such-run'")


def test_not_an_engine_database(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.db"
    bogus.write_text("shopping list: eggs, flour, milk\n" * 50)
    _expect(run_engine("status", "R", "--db", bogus), 2, "not an engine database")
    assert bogus.read_text().startswith("shopping list")


def test_foreign_sqlite_database(tmp_path: Path) -> None:
    foreign = tmp_path / "shop.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    _expect(run_engine("runs", "--db", foreign), 2, "not an engine database", "orders")


def test_missing_database(tmp_path: Path) -> None:
    _expect(run_engine("status", "R", "--db", tmp_path / "absent.db"), 2, "no engine database")
    assert not (tmp_path / "absent.db").exists()


def test_locked_database(tmp_path: Path) -> None:
    """Another process holds the write lock: `engine start` waits ENGINE_BUSY_TIMEOUT_MS, then
    says the database is locked (exit 2)."""
    db = tmp_path / "e.db"
    SQLiteEventStore(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        proc = run_engine(*start_toy(db, "LOCKED"), env=engine_env(ENGINE_BUSY_TIMEOUT_MS="300"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    _expect(proc, 2, "locked")


def test_resume_completed_run(toy_run) -> None:
    _expect(run_engine("resume", toy_run.run_id, "--db", toy_run.db), 2, "already completed")


@pytest.mark.parametrize("setting,needle", [
    ("no_such_setting=1", "no such setting"),
    ("ensemble_rounds=many", "ensemble_rounds"),
    ("ensemble_rounds", "expected key=value"),
])
def test_invalid_set(tmp_path: Path, setting: str, needle: str) -> None:
    db = tmp_path / "e.db"
    _expect(run_engine(*start_toy(db, "R", extra=("--set", setting))), 2, needle)


def test_missing_task_directory(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "task"
    proc = run_engine("start", "--task", missing, "--strategy", TOY_STRATEGY, "--agent", TOY_AGENT,
                      "--db", tmp_path / "e.db")
    _expect(proc, 2, str(missing.name))


def test_a_run_that_ends_as_it_starts_is_reported_not_called_already_finished(tmp_path):
    """A strategy that fails before asking for anything: the run fails at creation, and `engine
    start` says so (exit 1, the run's error) instead of "already failed; nothing to resume"."""
    proc = run_engine("start", "--task", "iris", "--strategy", "tests.toy.strategy:fails_at_once", "--agent", TOY_AGENT,
                      "--run-id", "short", "--db", tmp_path / "e.db", "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["status"] == "failed" and "Phase 1" in summary["error"]
    assert "nothing to resume" not in proc.stderr


def test_a_time_limit_too_short_for_one_candidate_is_refused_with_the_shortest_workable_one(tmp_path):
    """Issue 27: `--time-limit 1` leaves no time for one candidate and finalization: `engine
    start` says so before anything runs (exit 2, no run created) and names the shortest limit
    that works (handlers.timebudget.shortest_workable_limit_s); that limit is accepted."""
    from events.domain import PipelineConfig
    from handlers.timebudget import shortest_workable_limit_s

    shortest = shortest_workable_limit_s(PipelineConfig())
    db = tmp_path / "e.db"
    proc = run_engine("start", "--task", "iris", "--agent", "builtin", "--preset", "quick", "--time-limit", "1",
                      "--run-id", "short", "--db", db, cwd=tmp_path)
    _expect(proc, 2, f"the shortest workable time limit is {shortest} s")
    assert "Traceback" not in proc.stderr
    assert "short" not in run_engine("list", "--db", db, cwd=tmp_path).stdout
    ok = run_engine("start", "--task", "iris", "--strategy", TOY_STRATEGY, "--agent", TOY_AGENT,
                    "--time-limit", str(shortest), "--run-id", "enough", "--db", db, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr[-2000:]


# --- issue 61, items 6 and 7: OS and decoding errors, option errors -----------------------------


def _binary(tmp_path: Path) -> Path:
    blob = tmp_path / "blob.jsonl"
    blob.write_bytes(bytes(range(256)) * 4)  # 0x80-0xff: never UTF-8
    return blob


def test_a_binary_file_given_as_an_export_is_named_not_a_traceback(tmp_path: Path) -> None:
    blob = _binary(tmp_path)
    _expect(run_engine("import", blob, "--db", tmp_path / "e.db"), 2, f"{blob} is not UTF-8 text")
    _expect(run_engine("replay", "R", "--against", blob), 2, f"{blob} is not UTF-8 text")


@pytest.mark.parametrize("verb", ["export", "report"])
def test_an_output_path_that_cannot_be_written_is_named(toy_run, tmp_path: Path, verb: str) -> None:
    """A directory, or a file in a folder that does not exist: one `error:` line naming the path
    and what to give instead (the report makes its folder itself, so only the directory fails)."""
    _expect(run_engine(verb, toy_run.run_id, "-o", tmp_path, "--db", toy_run.db), 2,
            f"{tmp_path} is a directory", "give a file path")
    if verb == "export":
        missing = tmp_path / "no" / "such" / "x.jsonl"
        _expect(run_engine(verb, toy_run.run_id, "-o", missing, "--db", toy_run.db), 2,
                f"the folder {missing.parent} does not exist")
        assert not missing.parent.exists()


@pytest.mark.parametrize("option,value,needle", [
    ("--time-limit", "abc", "--time-limit 'abc': expected a whole number"),
    ("--seed", "1e99", "--seed '1e99': expected a whole number"),
    ("--seed", "-1", "--seed '-1': expected a number at least 0"),
    ("--seed", "99999999999999999999", "at most 4294967295"),
    ("--max-budget", "lots", "--max-budget 'lots': expected a number"),
])
def test_an_option_error_names_the_option_the_value_and_what_it_takes(tmp_path: Path, option: str, value: str,
                                                                       needle: str) -> None:
    db = tmp_path / "e.db"
    _expect(run_engine(*start_toy(db, "R", extra=(option, value))), 2, needle)
    assert not db.exists()


def test_a_directory_given_as_the_database_says_so(toy_run) -> None:
    folder = toy_run.db.parent
    for verb in (("runs",), ("status", "R"), ("report", "R", "-o", str(folder / "r.html")), ("start",)):
        args = [*verb, "--db", folder] if verb != ("start",) else [*start_toy(folder, "R2")]
        _expect(run_engine(*args), 2, f"the event database {folder} is a directory",
                f"--db {folder / 'engine.db'}")
    assert not (folder / "r.html").exists() and not (folder / "R2").exists()


def test_an_error_no_rule_foresaw_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """A bug (here in a user's own `--agent module:Class`) reaches the user as one `error:` line
    naming it, exit 1, and no traceback; ENGINE_LOG_LEVEL=DEBUG prints where it happened."""
    args = ("start", "--task", str(TOY_TASK), "--strategy", TOY_STRATEGY, "--agent",
            "tests.core.broken_backend:BrokenBackend", "--db", str(tmp_path / "e.db"))
    _expect(run_engine(*args), 1, "unexpected error: RuntimeError: a bug in the user's backend")
    debug = run_engine(*args, env=engine_env(ENGINE_LOG_LEVEL="DEBUG"))
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "broken_backend.py" in debug.stderr


@pytest.mark.parametrize("port,needle", [("99999", "--port '99999': expected a number at most 65535"),
                                         ("-5", "--port '-5': expected a number at least 0")])
def test_a_port_out_of_range_is_an_option_error(toy_run, port: str, needle: str) -> None:
    _expect(run_engine("ui", "--db", toy_run.db, "--port", port), 2, needle)


_BUSY_COMMAND = """
import sys, time
import engine.cli.main as cli
def busy(**_):
    print("busy", flush=True)
    time.sleep(600)
cli.app = busy
cli.main()
"""


def test_ctrl_c_while_a_command_works_ends_it_with_130_and_one_line() -> None:
    """A SIGINT that no run is there to catch (a command that drives none, or one after a run
    ended on its own) is a KeyboardInterrupt anywhere in the command's code,
    even in the evaluation of an ``except`` clause: still one line and 130, no traceback."""
    import signal
    import subprocess
    import sys

    # As from a terminal: SIGINT at its default (a pytest-xdist worker ignores it, and a child
    # inherits that; Python then leaves Ctrl-C ignored, and this command would never see it).
    proc = subprocess.Popen([sys.executable, "-c", _BUSY_COMMAND], env=engine_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout is not None and proc.stdout.readline() == "busy\n"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)  # a safety net, not a measurement
    _expect(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), 130, "interrupted")
