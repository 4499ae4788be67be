"""Building sandbox policies: what an evaluation or an agent may see, and its limits.

The policy is the single description of a sandbox: ``Sandbox`` runs exactly what it says and
the log records it. Every host path is recorded resolved (``source``) and as the sandbox sees
it (``target``).
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from engine.sandbox.bwrap import USR_MERGED_DIRS, same_path_bind
from events.sandbox import Bind, NetworkMode, SandboxLimits, SandboxMode, SandboxPolicy

# Host configuration a program needs to start and behave normally; nothing in it is secret
# (/etc/shadow and friends are not listed). resolv.conf is added only with host networking.
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "nsswitch.conf",
               "passwd", "group", "hosts", "alternatives", "ssl", "ca-certificates", "pki",
               "crypto-policies", "mime.types", "fonts", "os-release")
NETWORK_ETC_ENTRIES = ("resolv.conf", "gai.conf")
# CPU topology, so os.cpu_count() and BLAS thread pools see the real machine.
SYS_ENTRIES = ("/sys/devices/system/cpu",)
GPU_DEVICE_GLOBS = ("/dev/nvidia[0-9]*", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                    "/dev/nvidia-modeset", "/dev/nvidia-caps/*", "/dev/dri/*")

# uids the sandboxed code runs as when the engine is root: a range no distribution allocates
# to real users. Each sandbox key gets its own uid, so concurrent sandboxes never share a
# process count (RLIMIT_NPROC is counted per uid).
SANDBOX_UID_BASE = 1_500_000_000
SANDBOX_UID_SPAN = 500_000_000


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def sandbox_uid(key: str) -> int | None:
    """The uid for the sandbox named ``key`` when the engine is root; ``None`` otherwise (the
    code keeps the engine user's uid inside its own user namespace)."""
    if not running_as_root():
        return None
    digest = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")
    return SANDBOX_UID_BASE + digest % SANDBOX_UID_SPAN


def _existing(paths: Iterable[str]) -> list[str]:
    return [p for p in paths if os.path.exists(p)]


def system_binds(*, network: NetworkMode = "none") -> list[Bind]:
    """/usr, the non-symlinked top-level library directories, a few /etc entries, CPU topology."""
    binds = [Bind(source="/usr", target="/usr")]
    for name in USR_MERGED_DIRS:
        path = f"/{name}"
        if os.path.isdir(path) and not os.path.islink(path):
            binds.append(Bind(source=os.path.realpath(path), target=path))
    etc = list(ETC_ENTRIES) + (list(NETWORK_ETC_ENTRIES) if network == "host" else [])
    for path in _existing(f"/etc/{name}" for name in etc):
        binds.append(Bind(source=path, target=path))
    for path in _existing(SYS_ENTRIES):
        binds.append(Bind(source=path, target=path))
    return binds


def python_binds(executable: str | None = None) -> list[Bind]:
    """The Python environment the engine runs in, at its own paths (the venv, the interpreter
    installation it points to, and their resolved locations), read-only."""
    exe = executable or sys.executable
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  str(Path(os.path.realpath(exe)).parent.parent)]
    seen: list[str] = []
    for path in candidates:
        for variant in (os.path.abspath(path), os.path.realpath(path)):
            if variant in ("/", "/usr") or variant.startswith("/usr/") or variant in seen:
                continue
            seen.append(variant)
    # Drop paths inside another listed path: binding the outer one is enough.
    kept = [p for p in seen if not any(o != p and p.startswith(o.rstrip("/") + "/") for o in seen)]
    return [same_path_bind(p) for p in kept if os.path.isdir(p)]


def gpu_devices() -> list[str]:
    """NVIDIA (and DRM) device nodes present on this machine, passed through unchanged."""
    found: list[str] = []
    for pattern in GPU_DEVICE_GLOBS:
        found.extend(sorted(glob.glob(pattern)))
    return list(dict.fromkeys(found))


def default_limits(*, memory_mb: int | None = None, timeout_s: float | None = None,
                   processes: int | None = None, file_size_mb: int | None = None,
                   open_files: int | None = None, tmp_mb: int | None = None,
                   disk_mb: int | None = None) -> SandboxLimits:
    """Limits with concrete defaults, so the log shows the numbers that applied.

    * memory: the given value, else 80 % of physical memory;
    * processes: 16 per CPU, between 256 and 1024 (threads count too);
    * file size: 8 GB per file, 32 GB in all in its directory; open files: 4096; private
      /tmp: 1 GB (it lives in memory);
    * CPU seconds: the wall-clock timeout times the CPUs, plus a minute: the timeout stays
      the real bound, this is the backstop when a timer cannot fire.
    """
    cpus = os.cpu_count() or 1
    if memory_mb is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            memory_mb = int(total * 0.8 / (1024 * 1024))
        except (ValueError, OSError):
            memory_mb = None
    cpu_seconds = None
    if timeout_s is not None and timeout_s != float("inf"):
        cpu_seconds = int(timeout_s * cpus) + 60
    return SandboxLimits(
        memory_mb=memory_mb,
        processes=processes if processes is not None else min(1024, max(256, 16 * cpus)),
        file_size_mb=file_size_mb if file_size_mb is not None else 8192,
        cpu_seconds=cpu_seconds,
        open_files=open_files if open_files is not None else 4096,
        tmp_mb=tmp_mb if tmp_mb is not None else 1024,
        disk_mb=disk_mb if disk_mb is not None else 32768,
    )


def _abs(path: str | os.PathLike[str]) -> str:
    return os.path.abspath(os.fspath(path))


def build_policy(mode: SandboxMode, *, cwd: str | os.PathLike[str],
                 read_only: Sequence[Bind] = (), writable: Sequence[Bind] = (),
                 sockets: Sequence[Bind] = (), network: NetworkMode = "none",
                 limits: SandboxLimits | None = None, uid: int | None = None,
                 protected: Sequence[str | os.PathLike[str]] = (), gpus: bool = True,
                 pid_namespace: bool = True) -> SandboxPolicy:
    """A policy from its parts, adding the system and Python binds every sandbox needs."""
    base = [*system_binds(network=network), *python_binds()] if mode == "bwrap" else []
    return SandboxPolicy(
        mode=mode,
        read_only=tuple(base) + tuple(read_only),
        writable=tuple(writable),
        devices=tuple(gpu_devices()) if gpus and mode == "bwrap" else (),
        sockets=tuple(sockets),
        network=network,
        private_tmp=mode == "bwrap",
        pid_namespace=pid_namespace and mode == "bwrap",
        uid=uid if mode == "bwrap" else None,
        cwd=_abs(cwd),
        limits=limits or default_limits(),
        protected=tuple(os.path.realpath(_abs(p)) for p in protected),
    )


def evaluation_policy(mode: SandboxMode, *, eval_dir: str | os.PathLike[str],
                      public_dir: str | os.PathLike[str] | None, key: str,
                      memory_mb: int | None = None, timeout_s: float | None = None,
                      protected: Sequence[str | os.PathLike[str]] = (),
                      limits: SandboxLimits | None = None) -> SandboxPolicy:
    """An evaluation: the task's public data read-only at ``<eval_dir>/input``, the evaluation
    directory writable, a private /tmp, the Python environment read-only, no network.

    ``key`` names the sandbox (run id and effect id) and picks its uid when the engine is root:
    the same run writes the same policy wherever it runs, and concurrent evaluations get
    different uids.
    """
    eval_abs = _abs(eval_dir)
    read_only = []
    if public_dir is not None:
        read_only.append(Bind(source=os.path.realpath(_abs(public_dir)), target=os.path.join(eval_abs, "input")))
    return build_policy(
        mode, cwd=eval_abs, read_only=read_only, writable=[same_path_bind(eval_abs)],
        limits=limits or default_limits(memory_mb=memory_mb, timeout_s=timeout_s),
        uid=sandbox_uid(f"evaluation:{key}"), protected=protected,
    )


def agent_policy(mode: SandboxMode, *, work_dir: str | os.PathLike[str],
                 public_dir: str | os.PathLike[str] | None = None,
                 read_only: Sequence[str | os.PathLike[str]] = (),
                 writable: Sequence[str | os.PathLike[str]] = (),
                 sockets: Sequence[str | os.PathLike[str]] = (), network: NetworkMode = "none",
                 protected: Sequence[str | os.PathLike[str]] = (), key: str = "agent",
                 limits: SandboxLimits | None = None) -> SandboxPolicy:
    """An agent's tools: its working directory writable, the task's public data read-only at
    ``<work_dir>/input`` (when given), extra paths at their own locations."""
    work_abs = _abs(work_dir)
    ro = [same_path_bind(p) for p in read_only]
    if public_dir is not None:
        ro.append(Bind(source=os.path.realpath(_abs(public_dir)), target=os.path.join(work_abs, "input")))
    return build_policy(
        mode, cwd=work_abs, read_only=ro,
        writable=[same_path_bind(work_abs), *(same_path_bind(p) for p in writable)],
        sockets=[same_path_bind(p) for p in sockets], network=network,
        limits=limits or default_limits(), uid=sandbox_uid(f"agent:{work_abs}:{key}"), protected=protected,
    )


def private_answers_of(public_dir: str | os.PathLike[str]) -> list[str]:
    """Where a task keeps what agents must never see: ``private/`` next to ``public/``."""
    public = Path(os.path.realpath(_abs(public_dir)))
    candidate = public.parent / "private"
    return [str(candidate)] if public.name == "public" and candidate.exists() else []
