"""A real, size-limited place to put an event database, for disk-full tests.

As root (where mounting is permitted) a tmpfs of the given size is mounted on a directory, and
``grow`` remounts it bigger. Where mounting is not permitted, the engine subprocess runs with a
file size limit (RLIMIT_FSIZE, soft) instead, so the database's own writes fail with EFBIG on the
real file system; ``grow`` lifts the limit. ``mode`` says which one ran ("tmpfs" or "rlimit").
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.core.helpers import REPO, engine_env

# Run the engine CLI under a soft file size limit (SIGXFSZ ignored: writes fail with EFBIG instead
# of killing the process); argv[1] is the limit in bytes, the rest the engine's arguments.
_LIMITED = ("import resource, runpy, signal, sys\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "limit = int(sys.argv.pop(1))\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))\n"
            "sys.argv[0] = 'engine'\n"
            "runpy.run_module('engine.cli', run_name='__main__')\n")


@dataclass
class TinyFs:
    root: Path
    size_kb: int
    mode: str
    limited: bool = field(default=True)

    def grow(self, size_kb: int = 65536) -> None:
        """More space: a bigger tmpfs, or no file size limit."""
        if self.mode == "tmpfs":
            subprocess.run(["mount", "-o", f"remount,size={size_kb}k", str(self.root)], check=True)
        self.limited = False

    def engine(self, *args: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """Run ``engine ARGS`` on this file system (under the file size limit in rlimit mode)."""
        if self.mode == "rlimit" and self.limited:
            cmd = [sys.executable, "-c", _LIMITED, str(self.size_kb * 1024), *map(str, args)]
        else:
            cmd = [sys.executable, "-m", "engine.cli", *map(str, args)]
        return subprocess.run(cmd, env=engine_env(), capture_output=True, text=True, timeout=timeout,
                              cwd=REPO, stdin=subprocess.DEVNULL)


def mount_tmpfs(root: Path, size_kb: int) -> bool:
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(root)],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@contextmanager
def tiny_fs(root: Path, size_kb: int = 400) -> Iterator[TinyFs]:
    root.mkdir(parents=True, exist_ok=True)
    mounted = mount_tmpfs(root, size_kb)
    try:
        yield TinyFs(root, size_kb, "tmpfs" if mounted else "rlimit")
    finally:
        if mounted:
            subprocess.run(["umount", str(root)], check=True, timeout=60)
