"""Running scripts as real subprocesses: timeouts, process-tree kills, memory limit, output cap,
resource accounting (REQ-EX-007..010, 037, 038, 043)."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from engine.harness import build_evaluation_result, execute_script, run_process, setup_working_directory

pytestmark = pytest.mark.anyio


def _script(tmp_path: Path, body: str) -> tuple[str, str]:
    work = setup_working_directory(tmp_path / "work")
    path = Path(work) / "solution.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return str(path), work


def _dead(pid: int) -> bool:
    """Gone, or a zombie waiting for a reaper (PID 1 in a container may never reap)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def test_req_ex_007_captures_streams_exit_code_and_cwd(tmp_path: Path) -> None:
    path, work = _script(tmp_path, """
        import os, sys
        print("to stdout")
        print("to stderr", file=sys.stderr)
        print("cwd=" + os.getcwd())
        print("héllo ✓")
        sys.stdout.buffer.write(b"bad byte: \\xff\\n")
        raise SystemExit(3)
    """)
    raw = await execute_script(path, work, 10)
    assert raw.exit_code == 3  # a non-zero exit is a result, not an exception
    assert raw.timed_out is False
    assert "to stdout" in raw.stdout and "to stderr" in raw.stderr
    assert f"cwd={work}" in raw.stdout
    assert "héllo ✓" in raw.stdout  # REQ-EX-043 UTF-8
    assert "bad byte: \ufffd" in raw.stdout  # undecodable bytes replaced, not fatal
    assert raw.duration_seconds > 0


async def test_req_ex_009_timeout_keeps_partial_output(tmp_path: Path) -> None:
    """REQ-EX-009: sleep(600) with a short timeout returns timed_out, exit -1, partial output."""
    path, work = _script(tmp_path, """
        import sys, time
        print("started")
        print("warming up", file=sys.stderr)
        time.sleep(600)
    """)
    started = time.monotonic()
    raw = await execute_script(path, work, 1)
    assert time.monotonic() - started < 5
    assert raw.timed_out is True and raw.exit_code == -1
    assert "started" in raw.stdout
    assert "warming up" in raw.stderr
    assert raw.stderr.rstrip().endswith("[harness] timed out after 1 s")
    result = build_evaluation_result(raw)
    assert result.is_error and result.error_traceback.startswith("timed out after 1 s")
    assert "warming up" in result.error_traceback


async def test_req_ex_037_timeout_kills_grandchild_that_ignores_sigterm(tmp_path: Path) -> None:
    """REQ-EX-009/037: an infinite loop is killed at its timeout together with a grandchild it
    spawned; the grandchild ignores SIGTERM, so only the SIGKILL escalation gets it."""
    pids = tmp_path / "pids.txt"
    path, work = _script(tmp_path, f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
        with open({str(pids)!r}, "w") as f:
            f.write(f"{{os.getpid()}} {{child.pid}}")
        while True:
            pass
    """)
    started = time.monotonic()
    outcome = await run_process(path, work, 1.0, kill_grace_seconds=0.5, sample_interval=0.05)
    elapsed = time.monotonic() - started
    script_pid, grandchild_pid = map(int, pids.read_text().split())
    assert outcome.raw.timed_out is True
    assert elapsed < 5
    assert _dead(script_pid)
    assert _dead(grandchild_pid), "grandchild survived the timeout kill"
    assert outcome.cpu_s > 0.1  # the busy loop ran (loosely: CI machines share CPUs)


async def test_req_ex_037_leftover_background_child_is_killed_after_normal_exit(tmp_path: Path) -> None:
    """REQ-EX-037: a child left running (and holding the pipes) by a finished script is killed;
    the harness returns promptly instead of waiting for it."""
    pids = tmp_path / "pid.txt"
    path, work = _script(tmp_path, f"""
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pids)!r}, "w").write(str(child.pid))
        print("Final Validation Performance: 0.5")
    """)
    started = time.monotonic()
    raw = await execute_script(path, work, 30)
    assert time.monotonic() - started < 5
    assert raw.exit_code == 0 and "0.5" in raw.stdout
    assert _dead(int(pids.read_text()))


async def test_req_ex_037_child_escaping_the_process_group_is_killed_too(tmp_path: Path) -> None:
    """A child that starts its own session leaves the process group; the psutil tree still has it."""
    pids = tmp_path / "pid.txt"
    path, work = _script(tmp_path, f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
        open({str(pids)!r}, "w").write(str(child.pid))
        time.sleep(600)
    """)
    outcome = await run_process(path, work, 1.0, kill_grace_seconds=0.5, sample_interval=0.05)
    assert outcome.raw.timed_out
    assert _dead(int(pids.read_text()))


async def test_memory_limit_kills_the_tree_with_clear_message(tmp_path: Path) -> None:
    """A memory hog (here in a child process) is stopped at the limit; stderr and the debugger
    text say "memory limit exceeded (N MB)"."""
    pids = tmp_path / "pid.txt"
    hog = tmp_path / "hog.py"
    hog.write_text(
        "import time\n"
        "chunks = []\n"
        "while True:\n"
        "    chunks.append(b'x' * (10 * 1024 * 1024))\n"
        "    time.sleep(0.01)\n"
    )
    path, work = _script(tmp_path, f"""
        import subprocess, sys
        child = subprocess.Popen([sys.executable, {str(hog)!r}])
        open({str(pids)!r}, "w").write(str(child.pid))
        child.wait()
    """)
    started = time.monotonic()
    outcome = await run_process(path, work, 30, memory_limit_mb=150, sample_interval=0.05)
    assert time.monotonic() - started < 15
    assert outcome.memory_exceeded is True
    assert outcome.raw.timed_out is False
    assert outcome.raw.exit_code != 0
    assert "memory limit exceeded (150 MB)" in outcome.raw.stderr
    assert outcome.peak_rss_mb > 150
    assert _dead(int(pids.read_text()))
    result = build_evaluation_result(outcome.raw)
    assert result.is_error and result.error_traceback.startswith("memory limit exceeded (150 MB)")


async def test_resources_include_exited_children(tmp_path: Path) -> None:
    """psutil accounting: CPU of a child that already exited (and was reaped) is counted, and
    peak RSS covers the child's memory."""
    path, work = _script(tmp_path, """
        import subprocess, sys, time
        burn = "import time\\nend = time.process_time() + 0.6\\nbuf = b'x' * (80 * 1024 * 1024)\\nwhile time.process_time() < end: pass"
        subprocess.run([sys.executable, "-c", burn], check=True)
        time.sleep(0.3)
        print("Final Validation Performance: 1")
    """)
    outcome = await run_process(path, work, 30, sample_interval=0.05)
    assert outcome.raw.exit_code == 0
    assert outcome.cpu_s >= 0.5
    assert outcome.peak_rss_mb >= 80


async def test_req_ex_038_output_cap_keeps_head_and_tail(tmp_path: Path) -> None:
    """REQ-EX-038: output beyond the limit is truncated with a marker; the score line at the end survives."""
    path, work = _script(tmp_path, """
        import sys
        print("HEAD")
        for i in range(20000):
            print("x" * 99)
        print("Final Validation Performance: 0.77")
    """)
    raw = await execute_script(path, work, 30, output_limit_bytes=10_000)
    assert raw.stdout.startswith("HEAD")
    assert "[harness] output truncated:" in raw.stdout
    assert len(raw.stdout.encode()) < 10_200
    assert build_evaluation_result(raw).score == pytest.approx(0.77)


async def test_req_ex_010_env_is_passed(tmp_path: Path) -> None:
    path, work = _script(tmp_path, """
        import os
        print(os.environ.get("ONLY_HERE"), os.environ.get("PATH") is not None)
    """)
    env = dict(os.environ, ONLY_HERE="yes")
    raw = await execute_script(path, work, 10, env)
    assert raw.stdout.strip() == "yes True"


async def test_outer_cancellation_kills_the_script(tmp_path: Path) -> None:
    """The engine cancelling an evaluation (deadline) must not leave the script running."""
    import anyio

    pid_file = tmp_path / "pid.txt"
    path, work = _script(tmp_path, f"""
        import os, time
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        time.sleep(600)
    """)
    with anyio.move_on_after(1.0):
        await execute_script(path, work, 60)
    assert _dead(int(pid_file.read_text()))


async def test_python_is_the_engine_interpreter(tmp_path: Path) -> None:
    """Scripts must see the engine's packages (pandas, scikit-learn): run_process runs them with
    the interpreter running the engine, not whatever ``python`` is first on PATH."""
    path, work = _script(tmp_path, """
        import sys
        print(sys.executable)
        print(sys.prefix)
    """)
    outcome = await run_process(path, work, 30, env={"PATH": "/usr/bin:/bin"})
    assert outcome.raw.exit_code == 0, outcome.raw.stderr
    assert outcome.raw.stdout.splitlines() == [sys.executable, sys.prefix]


def test_the_disk_walk_runs_often_while_it_is_cheap_and_rarely_when_it_is_not():
    """A script can write hundreds of MB a second: a cheap walk (a small directory) repeats at
    every 0.1 s sample so the overshoot past the disk limit stays small; a costly one (a huge
    tree) backs off so watching never costs more than 1/20 of a thread."""
    from engine.harness.process import disk_check_pause

    assert disk_check_pause(0.0001) == 0.1
    assert disk_check_pause(0.05) == pytest.approx(1.0)
    assert disk_check_pause(10.0) == 2.0
