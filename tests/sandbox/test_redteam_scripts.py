"""Issue 15, Must show: the red-team suite on the script side. Each attack is a real script run
by the real harness under the real bubblewrap sandbox; each ends as a clear recorded result,
leaves no process behind, and leaves the task files and the engine database untouched."""

from __future__ import annotations

import os
import socket
import textwrap
import threading
import time
from pathlib import Path

import anyio
import pytest

from engine.harness.executor import EvalContext, eval_dir_for, run_evaluation
from events.core import EvaluationCompleted, EvaluationRequested
from events.sandbox import SandboxLimits
from tests.sandbox.conftest import ANSWER, sandbox_survivors

SECRET = ANSWER.splitlines()[1]
LIMITS = SandboxLimits(memory_mb=512, processes=64, file_size_mb=20, cpu_seconds=120, open_files=256, tmp_mb=64,
                       disk_mb=100)


def evaluate(world, code: str, *, name: str, timeout_s: float = 60, limits: SandboxLimits = LIMITS,
             memory_limit_mb: int | None = 512) -> EvaluationCompleted:
    ctx = EvalContext(run_dir=world.run_dir, task_dir=world.public, sample_submission=None, subsample_limit=100,
                      memory_limit_mb=memory_limit_mb, kill_grace_seconds=1.0, sandbox_mode="bwrap",
                      protected=(str(world.db),), sandbox_limits=limits)
    request = EvaluationRequested(effect_id=f"redteam/{name}", solution_id=f"s-{name}", purpose="attack",
                                  timeout_s=timeout_s)
    done = anyio.run(run_evaluation, request, textwrap.dedent(code), ctx)
    # Every case: the policy is recorded, nothing survives, nothing of the host changed.
    assert done.sandbox is not None and done.sandbox.mode == "bwrap"
    assert done.sandbox.leaks() == {}, done.sandbox.leaks()
    assert str(world.private) in done.sandbox.protected
    deadline = time.monotonic() + 5
    while (left := sandbox_survivors(done.sandbox.uid, f"s-{name}.py")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == [], f"processes survived the evaluation: {[p.info for p in left]}"
    world.assert_untouched()
    return done


def output(done: EvaluationCompleted) -> str:
    return done.result.stdout + done.result.stderr


def test_reading_the_private_answers_by_absolute_path_fails(world):
    done = evaluate(world, f"""
        try:
            print(open({str(world.private / 'answers.csv')!r}).read())
        except OSError as exc:
            print("BLOCKED", type(exc).__name__)
        print("Final Validation Performance: 0.1")
    """, name="abs-path")
    assert SECRET not in output(done)
    assert "BLOCKED FileNotFoundError" in done.result.stdout
    assert done.result.score == 0.1  # the run goes on: the script itself completed


def test_walking_up_from_the_cwd_finds_no_answers(world):
    done = evaluate(world, """
        import os
        found, files = [], 0
        path = os.getcwd()
        while True:
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in ("/proc", "/sys", "/dev", "/usr")
                               and d not in ("site-packages", "include", "share") and dirpath.count("/") < 12]
                for f in filenames:
                    try:
                        with open(os.path.join(dirpath, f), "rb") as fh:
                            files += 1
                            if b"SECRET-" + b"ANSWER" in fh.read(65536) or f == "answers.csv":
                                found.append(os.path.join(dirpath, f))
                    except OSError:
                        pass
            if path == "/":
                break
            path = os.path.dirname(path)
        print("ANSWERS" if found else "NOTHING", files, found)
        print(sorted(os.listdir("/")))
    """, name="walk-up")
    assert SECRET not in output(done)
    assert "NOTHING" in done.result.stdout
    # The host root is gone: no /root, /home, /work, /var; only what the policy binds.
    assert "'home'" not in done.result.stdout and "'var'" not in done.result.stdout


def test_proc_of_the_engine_shows_nothing(world):
    engine_pid = os.getpid()
    done = evaluate(world, f"""
        import os
        hits = []
        for pid in [p for p in os.listdir("/proc") if p.isdigit()] + ["{engine_pid}"]:
            for what in ("cwd", "root"):
                try:
                    for dirpath, _, files in os.walk(f"/proc/{{pid}}/{{what}}/"):
                        if "answers.csv" in files or "engine.db" in files:
                            hits.append(dirpath)
                        if dirpath.count("/") > 8:
                            break
                except OSError:
                    pass
        print("HITS", hits)
        print("PIDS", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
        try:
            os.listdir("/proc/{engine_pid}/cwd")
            print("ENGINE-CWD-VISIBLE")
        except OSError as exc:
            print("ENGINE-CWD", type(exc).__name__)
    """, name="proc-cwd")
    assert "HITS []" in done.result.stdout
    assert "ENGINE-CWD-VISIBLE" not in done.result.stdout
    pids = eval(done.result.stdout.split("PIDS ")[1].splitlines()[0])
    assert max(pids) < 10, f"the sandbox sees host processes: {pids}"  # its own PID namespace


def test_writing_outside_its_directory_fails(world):
    targets = [str(world.public / "train.csv"), str(world.public / "new.csv"), str(world.db),
               "/usr/evil", "/etc/evil", str(Path(os.path.dirname(os.__file__)) / "evil.py"), "input/train.csv",
               "input/new.csv", "../escape.txt"]
    done = evaluate(world, f"""
        import os
        for target in {targets!r}:
            try:
                with open(target, "a") as fh:
                    fh.write("pwned")
                print("WROTE", target)
            except OSError as exc:
                print("DENIED", target, type(exc).__name__)
        try:
            os.symlink({str(world.private)!r}, "link")
            print(open("link/answers.csv").read())
        except OSError as exc:
            print("DENIED symlink", type(exc).__name__)
        open("final_ok.txt", "w").write("mine")  # its own directory stays writable
        print("Final Validation Performance: 0.2")
    """, name="write-out")
    assert "WROTE" not in done.result.stdout
    assert done.result.stdout.count("DENIED") == len(targets) + 1
    assert SECRET not in output(done)
    eval_dir = eval_dir_for(world.run_dir, "redteam/write-out")
    assert (eval_dir / "final_ok.txt").read_text() == "mine"
    assert not (world.run_dir / "evals" / "escape.txt").exists()


def test_a_tcp_connection_to_a_loopback_port_fails(world):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except (TimeoutError, OSError):
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        done = evaluate(world, f"""
            import socket
            for host in ("127.0.0.1", "localhost", "::1"):
                try:
                    socket.create_connection((host, {port}), timeout=3)
                    print("CONNECTED", host)
                except OSError as exc:
                    print("REFUSED", host, type(exc).__name__)
        """, name="tcp")
    finally:
        stop.set()
        thread.join(timeout=2)
        server.close()
    assert accepted == [], "a sandboxed script reached the host's loopback"
    assert "CONNECTED" not in done.result.stdout and done.result.stdout.count("REFUSED") == 3


def test_a_fork_bomb_is_contained(world):
    done = evaluate(world, """
        import os, time
        leave = getattr(os, "_" + "exit")  # an attacker evades the harness's exit-call check
        children = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(30)
                    leave(0)
                children += 1
        except OSError as exc:
            print("FORK-LIMIT", children, type(exc).__name__, flush=True)
            raise RuntimeError("fork refused") from exc
    """, name="fork-bomb", timeout_s=30)
    assert done.result.is_error and "RuntimeError: fork refused" in done.result.stderr
    assert "FORK-LIMIT" in done.result.stdout
    assert int(done.result.stdout.split()[1]) < LIMITS.processes


def test_allocating_far_past_the_memory_limit_is_stopped(world):
    done = evaluate(world, """
        blocks = []
        for _ in range(64):
            blocks.append(bytearray(256 * 1024 * 1024))  # 16 GB in all
        print("ALLOCATED")
    """, name="memory", timeout_s=60)
    assert done.result.is_error
    assert "ALLOCATED" not in done.result.stdout
    assert "MemoryError" in done.result.stderr or "memory limit exceeded" in done.result.stderr
    assert (done.peak_rss_mb or 0) < 1024


def test_filling_the_disk_past_the_file_limit_fails(world):
    done = evaluate(world, """
        import os
        chunk = b"x" * (1024 * 1024)
        with open("big.bin", "wb") as fh:
            for _ in range(10_000):  # 10 GB
                fh.write(chunk)
    """, name="disk", timeout_s=60)
    assert done.result.is_error
    assert "File too large" in done.result.stderr
    big = eval_dir_for(world.run_dir, "redteam/disk") / "big.bin"
    assert big.stat().st_size <= LIMITS.file_size_mb * 1024 * 1024


def test_filling_the_disk_with_many_files_under_the_file_limit_is_stopped(world):
    done = evaluate(world, """
        import os
        os.makedirs("junk", exist_ok=True)
        chunk = b"x" * (1024 * 1024)
        for i in range(5_000):  # 5 GB in 10 MB files, each under the 20 MB file limit
            with open(f"junk/{i}.bin", "wb") as fh:
                for _ in range(10):
                    fh.write(chunk)
        print("FILLED")
    """, name="disk-many", timeout_s=120)
    assert done.result.is_error and "FILLED" not in done.result.stdout
    assert "[harness] disk limit exceeded (100 MB" in done.result.stderr
    # Stopped part-way: how much more than the limit it wrote before the check after the limit
    # came is one pause of the disk check (at most DISK_CHECK_MAX_INTERVAL_SECONDS) of writes, which
    # depends on how fast this machine's disk is (505 MB on a fast one), so it is not bounded here.
    junk = eval_dir_for(world.run_dir, "redteam/disk-many") / "junk"
    files = list(junk.iterdir())
    assert 10 < len(files) < 5_000
    assert sum(p.stat().st_size for p in files) > 100 * 1024 * 1024


def test_the_private_tmp_is_bounded(world):
    done = evaluate(world, """
        chunk = b"x" * (1024 * 1024)
        for i in range(100):  # 1 GB in 10 MB files into a 64 MB /tmp
            with open(f"/tmp/fill-{i}", "wb") as fh:
                for _ in range(10):
                    fh.write(chunk)
    """, name="tmp-fill")
    assert done.result.is_error and "No space left on device" in done.result.stderr


def test_a_double_forked_daemon_does_not_outlive_its_evaluation(world):
    marker = world.root / "daemon-alive"
    done = evaluate(world, """
        import os, sys, time
        leave = getattr(os, "_" + "exit")
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                for fd in (0, 1, 2):
                    os.close(fd)
                for _ in range(600):
                    with open("daemon.txt", "a") as fh:
                        fh.write("still here\\n")
                    time.sleep(0.1)
                leave(0)
            leave(0)
        time.sleep(0.5)
        print("PARENT-DONE")
        print("Final Validation Performance: 0.3")
    """, name="daemon", timeout_s=30)
    assert done.result.score == 0.3
    log = eval_dir_for(world.run_dir, "redteam/daemon") / "daemon.txt"
    size = log.stat().st_size if log.exists() else 0
    time.sleep(1.0)
    assert (log.stat().st_size if log.exists() else 0) == size, "the daemon kept writing after the evaluation"
    assert not marker.exists()


def test_the_environment_holds_no_api_key(world, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-redteam-should-never-leak")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-never")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-never")
    done = evaluate(world, """
        import os
        print(sorted(os.environ))
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            try:
                print(pid, open(f"/proc/{pid}/environ", "rb").read())
            except OSError as exc:
                print(pid, type(exc).__name__)
    """, name="env")
    text = output(done)
    for secret in ("sk-ant-redteam", "sk-openai-never", "tok-never", "ANTHROPIC_API_KEY"):
        assert secret not in text


@pytest.mark.parametrize("mode", ["bwrap"])
def test_an_honest_script_runs_normally_with_its_data(world, mode):
    done = evaluate(world, """
        import os, tempfile
        import numpy as np
        from sklearn.linear_model import LogisticRegression
        rows = open("input/train.csv").read().splitlines()
        os.makedirs("final", exist_ok=True)
        open("final/submission.csv", "w").write("id,x\\n0,1\\n")
        with tempfile.NamedTemporaryFile(dir="/tmp") as fh:
            fh.write(b"scratch")
        LogisticRegression().fit(np.array([[0.0], [1.0]]), [0, 1])
        print("rows", len(rows), "uid", os.getuid())
        print("Final Validation Performance: 0.75")
    """, name="honest")
    assert not done.result.is_error, done.result.stderr
    assert done.result.score == 0.75
    assert (done.peak_rss_mb or 0) > 0 and (done.cpu_s or 0) > 0
    if os.geteuid() == 0:
        assert f"uid {done.sandbox.uid}" in done.result.stdout and done.sandbox.uid != 0


@pytest.mark.parametrize("sandbox", ["auto", "bwrap"])
def test_the_library_evaluate_solution_sandboxes_by_default(world, tmp_path, sandbox):
    """Issue 15: `engine.harness.evaluate_solution` (the library's entry point) runs a script the
    way a run does: the task data readable at ./input, the private answers out of reach, no
    network; `sandbox="none"` is the explicit way out."""
    from engine.harness import evaluate_solution
    from events.domain import DataModality, MetricDirection, PipelineConfig, SolutionScript, TaskDescription, TaskType

    task = TaskDescription(competition_id="toy", task_type=TaskType.classification, data_modality=DataModality.tabular,
                           evaluation_metric="accuracy", metric_direction=MetricDirection.maximize,
                           description="toy", data_dir=str(world.public))
    code = textwrap.dedent(f"""
        import socket
        print("ROWS", len(open("./input/train.csv").read().splitlines()))
        try:
            print(open({str(world.private / 'answers.csv')!r}).read())
        except OSError as exc:
            print("ANSWERS", type(exc).__name__)
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=2)
        except OSError as exc:
            print("NET", type(exc).__name__)
        print("Final Validation Performance: 0.5")
    """)
    solution = SolutionScript(solution_id="lib", content=code, phase="init")
    result = anyio.run(lambda: evaluate_solution(solution, task, PipelineConfig(time_limit_seconds=60),
                                                 work_root=tmp_path / "lib", sandbox=sandbox))
    assert result.score == 0.5, result.stderr
    assert "ROWS 3" in result.stdout and "ANSWERS FileNotFoundError" in result.stdout
    assert SECRET not in result.stdout and "NET" in result.stdout
    world.assert_untouched()
    unsandboxed = anyio.run(lambda: evaluate_solution(solution, task, PipelineConfig(time_limit_seconds=60),
                                                      work_root=tmp_path / "lib-none", sandbox="none"))
    assert SECRET in unsandboxed.stdout  # what the sandbox prevented
