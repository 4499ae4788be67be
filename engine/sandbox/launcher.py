"""The launcher: the last step before the sandboxed command runs, inside the sandbox.

``python -I -S -c LAUNCHER_SOURCE SPEC ARGV...`` where SPEC is a JSON object:

* ``gate``: an inherited pipe fd to wait on first (the harness opens it once its process
  monitor watches this process, so even a short script is measured);
* ``rlimits``: ``[[name, soft, hard], ...]`` set with setrlimit (``RLIMIT_NPROC`` etc.);
* ``uid``/``gid``: when set (the engine runs as root), drop to them after the limits: a
  process that is not root cannot raise its limits again and RLIMIT_NPROC applies to it;
* ``cwd``: the directory to run in, entered after the uid drop (as the code's own uid);
* ``env``: the environment to run with, plus ``pass_env``: names copied from the launcher's
  own environment (secrets: their values never appear on a command line).

Then ``execvpe`` the command, in the same process (same pid). Run with ``-I -S``: no site,
no user paths, nothing from the environment can change what the launcher does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

# The marker lets the harness recognise the launcher in the process table (see process.py).
LAUNCHER_MARKER = "mle-engine-sandbox-launcher"

LAUNCHER_SOURCE = f"""# {LAUNCHER_MARKER}
import json, os, resource, sys
spec = json.loads(sys.argv[1])
argv = sys.argv[2:]
gate = spec.get("gate")
if gate is not None:
    os.read(gate, 1)
    os.close(gate)
try:
    for name, soft, hard in spec.get("rlimits", []):
        resource.setrlimit(getattr(resource, name), (soft, hard))
    if spec.get("uid") is not None:
        os.setgroups([])
        os.setresgid(spec["gid"], spec["gid"], spec["gid"])
        os.setresuid(spec["uid"], spec["uid"], spec["uid"])
except OSError as exc:
    sys.stderr.write("[sandbox] cannot apply the sandbox limits: %s\\n" % exc)
    sys.exit(126)
if spec.get("cwd"):
    try:
        os.chdir(spec["cwd"])
    except OSError as exc:
        sys.stderr.write("[sandbox] cannot enter the working directory: %s\\n" % exc)
        sys.exit(126)
env = dict(spec.get("env", {{}}))
for name in spec.get("pass_env", []):
    if name in os.environ:
        env[name] = os.environ[name]
try:
    os.execvpe(argv[0], argv, env)
except OSError as exc:
    sys.stderr.write("[sandbox] cannot run %s: %s\\n" % (argv[0], exc))
    sys.exit(127)
"""


def rlimit_triples(*, memory_mb: int | None, processes: int | None, file_size_mb: int | None,
                   cpu_seconds: int | None, open_files: int | None) -> list[list[object]]:
    """setrlimit arguments for the given limits (``None`` leaves that limit as inherited).

    Memory is RLIMIT_DATA (private writable memory), not RLIMIT_AS: address-space limits break
    numerical libraries and runtimes that reserve large unused ranges. CPU time gets a soft
    limit (SIGXCPU) and, 5 s later, the hard one (SIGKILL).
    """
    mb = 1024 * 1024
    out: list[list[object]] = []
    if memory_mb is not None:
        out.append(["RLIMIT_DATA", memory_mb * mb, memory_mb * mb])
    if processes is not None:
        out.append(["RLIMIT_NPROC", processes, processes])
    if file_size_mb is not None:
        out.append(["RLIMIT_FSIZE", file_size_mb * mb, file_size_mb * mb])
    if cpu_seconds is not None:
        out.append(["RLIMIT_CPU", cpu_seconds, cpu_seconds + 5])
    if open_files is not None:
        out.append(["RLIMIT_NOFILE", open_files, open_files])
    out.append(["RLIMIT_CORE", 0, 0])  # a crashing script must not litter its directory with cores
    return out


def launcher_argv(python: str, argv: Sequence[str], *, rlimits: list[list[object]], env: Mapping[str, str],
                  pass_env: Sequence[str] = (), uid: int | None = None, gid: int | None = None,
                  gate_fd: int | None = None, cwd: str | None = None) -> list[str]:
    spec = {"rlimits": rlimits, "env": dict(env), "pass_env": list(pass_env), "uid": uid, "gid": gid,
            "gate": gate_fd, "cwd": cwd}
    return [python, "-I", "-S", "-c", LAUNCHER_SOURCE, json.dumps(spec, separators=(",", ":")), *argv]
