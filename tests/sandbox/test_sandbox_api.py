"""The public API of engine/sandbox, used by the harness and the claude backend: policies,
``Sandbox.command`` run by plain ``subprocess``, extra binds, host network, unix sockets,
secrets passed by name, the uid drop, death with the parent, mode resolution, the v1 upcaster."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

import engine.sandbox.modes as modes
import engine.sandbox.policy as policy_mod
from engine.audit.isolation import audit_sandbox
from engine.sandbox import (
    Sandbox,
    SandboxUnavailable,
    agent_policy,
    build_policy,
    default_limits,
    evaluation_policy,
    resolve_mode,
)
from events.base import Envelope, load_event
from events.sandbox import Bind, SandboxPolicy

PY = sys.executable


def run(sandbox: Sandbox, code: str, cwd: Path, env: dict[str, str] | None = None, *, pass_env=(),
        spawn_env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    argv = sandbox.command([PY, "-c", textwrap.dedent(code)], cwd=cwd, env=env or {"PATH": "/usr/bin:/bin"},
                           pass_env=pass_env)
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=spawn_env,
                          stdin=subprocess.DEVNULL)


def test_agent_policy_extra_binds_and_input(tmp_path):
    work, extra_ro, extra_rw, public = (tmp_path / n for n in ("work", "ro", "rw", "public"))
    for d in (work, extra_ro, extra_rw, public):
        d.mkdir()
    (extra_ro / "tool.txt").write_text("tool")
    (public / "train.csv").write_text("a\n")
    policy = agent_policy("bwrap", work_dir=work, public_dir=public, read_only=[extra_ro], writable=[extra_rw])
    done = run(Sandbox(policy), f"""
        import os
        print(open({str(extra_ro / 'tool.txt')!r}).read(), open("input/train.csv").read().strip())
        for target in ({str(extra_ro / 'x')!r}, "input/x", {str(extra_rw / 'x')!r}, "mine.txt"):
            try:
                open(target, "w").write("x"); print("WROTE", target)
            except OSError as exc:
                print("DENIED", target, exc.strerror)
    """, work)
    assert done.returncode == 0, done.stderr
    assert "tool a" in done.stdout
    assert f"DENIED {extra_ro / 'x'} Read-only file system" in done.stdout
    assert "DENIED input/x Read-only file system" in done.stdout
    assert f"WROTE {extra_rw / 'x'}" in done.stdout and "WROTE mine.txt" in done.stdout
    assert (work / "mine.txt").exists() and (extra_rw / "x").exists()


def test_network_host_reaches_loopback_and_none_does_not(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]
    got: list[bytes] = []

    def serve() -> None:
        server.settimeout(20)
        try:
            conn, _ = server.accept()
            got.append(conn.recv(16))
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    code = f"""
        import socket
        try:
            s = socket.create_connection(("127.0.0.1", {port}), timeout=5); s.sendall(b"hello"); print("OK")
        except OSError as exc:
            print("FAIL", exc)
    """
    closed = run(Sandbox(agent_policy("bwrap", work_dir=tmp_path, network="none")), code, tmp_path)
    assert "FAIL" in closed.stdout
    opened = run(Sandbox(agent_policy("bwrap", work_dir=tmp_path, network="host")), code, tmp_path)
    thread.join(timeout=20)
    server.close()
    assert "OK" in opened.stdout, opened.stdout + opened.stderr
    assert got == [b"hello"]


def test_a_unix_socket_bind_connects_without_network(tmp_path):
    sock_dir = tmp_path / "sock"
    sock_dir.mkdir()
    path = sock_dir / "api.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    os.chmod(path, 0o777)  # the sandbox's uid is not the engine's
    server.listen(1)
    got: list[bytes] = []

    def serve() -> None:
        server.settimeout(20)
        try:
            conn, _ = server.accept()
            got.append(conn.recv(16))
            conn.sendall(b"pong")
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    work = tmp_path / "work"
    policy = agent_policy("bwrap", work_dir=work, sockets=[path], network="none")
    assert policy.sockets == (Bind(source=str(path), target=str(path)),)
    done = run(Sandbox(policy), f"""
        import socket
        s = socket.socket(socket.AF_UNIX); s.connect({str(path)!r}); s.sendall(b"ping"); print(s.recv(4).decode())
    """, work)
    thread.join(timeout=20)
    server.close()
    assert done.stdout.strip() == "pong", done.stderr
    assert got == [b"ping"]


def test_env_is_exactly_what_was_given_and_secrets_travel_by_name(tmp_path):
    sandbox = Sandbox(agent_policy("bwrap", work_dir=tmp_path))
    argv = sandbox.command([PY, "-c", "import os, json; print(json.dumps(dict(os.environ)))"], cwd=tmp_path,
                           env={"PATH": "/usr/bin", "VISIBLE": "1"}, pass_env=["ANTHROPIC_API_KEY"])
    assert not any("sk-ant-secret" in part for part in argv)
    spawn_env = {"ANTHROPIC_API_KEY": "sk-ant-secret", "HOST_ONLY": "leak", "PATH": "/usr/bin"}
    done = subprocess.run(argv, capture_output=True, text=True, env=spawn_env, timeout=60)
    import json

    seen = json.loads(done.stdout)
    assert seen["ANTHROPIC_API_KEY"] == "sk-ant-secret" and seen["VISIBLE"] == "1"
    assert "HOST_ONLY" not in seen and seen["HOME"] == "/tmp"


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop happens only when the engine runs as root")
def test_as_root_the_code_runs_unprivileged_with_limits(tmp_path):
    policy = evaluation_policy("bwrap", eval_dir=tmp_path / "ev", public_dir=None, key="uid-test",
                               memory_mb=300, timeout_s=10)
    done = run(Sandbox(policy), """
        import os, resource
        status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
        print(os.getuid(), os.getgid(), os.getgroups(), status["CapEff"].strip(), status["NoNewPrivs"].strip())
        print(resource.getrlimit(resource.RLIMIT_NPROC)[0], resource.getrlimit(resource.RLIMIT_DATA)[0] >> 20)
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (10**6, 10**6)); print("RAISED")
        except (ValueError, OSError):
            print("CANNOT-RAISE")
    """, tmp_path / "ev")
    first, second, third = done.stdout.splitlines()
    uid, gid, groups, capeff, nnp = first.split(" ", 4)[0], first.split()[1], first.split()[2], first.split()[3], first.split()[4]
    assert int(uid) == policy.uid and int(gid) == policy.uid and groups == "[]"
    assert capeff == "0000000000000000" and nnp == "1"
    assert second.split() == [str(policy.limits.processes), "300"]
    assert third == "CANNOT-RAISE"
    assert (tmp_path / "ev").stat().st_uid == policy.uid  # prepared for the sandbox's uid


def test_the_sandbox_dies_with_its_parent(tmp_path):
    """--die-with-parent: killing whoever spawned the sandbox (SIGKILL, no cleanup) kills it."""
    policy = agent_policy("bwrap", work_dir=tmp_path)
    argv = Sandbox(policy).command([PY, "-c", "import time; open('started', 'w').close(); time.sleep(300)"],
                                   cwd=tmp_path, env={"PATH": "/usr/bin"})
    parent = subprocess.Popen([PY, "-c", "import subprocess, sys, time; subprocess.Popen(sys.argv[1:]); time.sleep(300)",
                               *argv], start_new_session=True)
    deadline = time.monotonic() + 30
    while not (tmp_path / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "started").exists()
    tree = psutil.Process(parent.pid).children(recursive=True)
    assert tree
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    gone, alive = psutil.wait_procs(tree, timeout=10)
    assert alive == [], f"sandbox processes outlived their parent: {alive}"


def test_mode_resolution_and_the_missing_package_error(monkeypatch):
    assert resolve_mode("none") == "none"
    modes.bwrap_problem.cache_clear()
    assert resolve_mode("auto") == "bwrap" and resolve_mode("bwrap") == "bwrap"
    monkeypatch.setattr(modes.shutil, "which", lambda name: None)
    modes.bwrap_problem.cache_clear()
    try:
        assert resolve_mode("auto") == "none"
        with pytest.raises(SandboxUnavailable) as info:
            resolve_mode("bwrap")
        message = str(info.value)
        assert "\n" not in message and "`bubblewrap`" in message and "apt-get install bubblewrap" in message
        with pytest.raises(SandboxUnavailable, match="unknown mode"):
            resolve_mode("docker")
    finally:
        monkeypatch.undo()
        modes.bwrap_problem.cache_clear()


def test_gpu_devices_are_passed_through_when_present(monkeypatch, tmp_path):
    assert policy_mod.gpu_devices() == [p for p in policy_mod.gpu_devices() if p.startswith("/dev/")]
    # No GPU here: pretend /dev/null and /dev/zero are device nodes of one.
    monkeypatch.setattr(policy_mod, "GPU_DEVICE_GLOBS", ("/dev/nul[l]", "/dev/zer[o]"))
    policy = agent_policy("bwrap", work_dir=tmp_path)
    assert policy.devices == ("/dev/null", "/dev/zero")
    argv = Sandbox(policy).command(["true"], cwd=tmp_path, env={})
    assert "--dev-bind" in argv and argv[argv.index("--dev-bind") + 1] == "/dev/null"
    done = run(Sandbox(policy), "print(open('/dev/zero','rb').read(3))", tmp_path)
    assert done.stdout.strip() == "b'\\x00\\x00\\x00'", done.stderr


def test_exposes_and_leaks_are_path_prefix_checks():
    policy = SandboxPolicy(mode="bwrap", read_only=(Bind(source="/data/task/public", target="/w/input"),),
                           writable=(Bind(source="/runs/r1/evals/e", target="/runs/r1/evals/e"),),
                           protected=("/data/task/private", "/runs/engine.db", "/data/task/public/sub"))
    assert policy.exposes("/data/task/private") == []
    assert policy.exposes("/data/task/publicity") == []  # a prefix of the name, not of the path
    assert policy.leaks() == {"/data/task/public/sub": ["/data/task/public"]}
    wide = policy.model_copy(update={"read_only": (Bind(source="/data", target="/data"),)})
    assert "/data/task/private" in wide.leaks()
    assert SandboxPolicy(mode="none").exposes("/anything") == ["/"]


def test_evaluation_completed_v1_loads_with_an_unknown_policy():
    payload = {"effect_id": "e", "elapsed_s": 1.0, "peak_rss_mb": 1.0, "cpu_s": 0.1, "submission": None,
               "result": {"score": 0.5, "stdout": "", "stderr": "", "exit_code": 0, "duration_seconds": 1.0,
                          "is_error": False, "error_traceback": None}}
    event = load_event("EvaluationCompleted", 1, payload)
    assert event.sandbox is None
    env = Envelope(run_id="r", seq=1, type="EvaluationCompleted", version=1, scope="run", causation_seq=None,
                   recorded_at="", payload=payload, prev_hash="0", hash="0")
    audit = audit_sandbox([env])
    assert not audit.answers_unreachable and audit.unrecorded == ["e"]
    assert "policy not recorded" in "\n".join(audit.lines())


def test_default_limits_are_concrete_numbers():
    limits = default_limits(timeout_s=100)
    assert limits.memory_mb and limits.processes and limits.file_size_mb and limits.open_files
    assert limits.cpu_seconds == 100 * (os.cpu_count() or 1) + 60
    assert build_policy("none", cwd="/").private_tmp is False
