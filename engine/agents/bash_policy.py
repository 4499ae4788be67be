"""The bash and file-tool policy every agent backend applies before a tool runs (REQ-OR-033).

``BashPolicy.check`` is a plain function over the command text so it can be unit-tested without
an SDK; the Claude backend wraps it in a PreToolUse hook, the OpenAI-compatible backend calls it
before running a tool command. It guards against obvious accidents, not a sandbox: shell is too
expressive for a pattern list to be complete, which is why agents also run with ``cwd`` set to
their own working directory and, above all, inside the sandbox.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: (pattern, reason). Configurable through ``BashPolicy(patterns=...)``.
DEFAULT_BLOCKED_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\brm\s+(?:-{1,2}[\w-]+\s+)*(?:--\s+)?(?:/|/\*|~|~/|~/\*|\$HOME/?)(?=$|[\s;&|)])", "recursive delete of / or the home directory"),
    (r"\bmkfs(?:\.\w+)?\b", "formatting a filesystem (mkfs)"),
    (r"\bdd\b[^;&|\n]*\bif=", "raw device copy (dd if=)"),
    (r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:", "fork bomb"),
    (r">\s*/dev/(?:sd|nvme|hd|xvd|vd)\w*", "writing to a raw disk device"),
    (r"\b(?:shutdown|reboot|poweroff|halt)\b", "shutting down the machine"),
    (r"\bchmod\s+(?:-\S+\s+)*[0-7]{3,4}\s+/(?=$|\s)", "changing permissions of /"),
)

# Commands whose path arguments are all write targets, and those whose last one is.
_WRITES_ALL_ARGS = {"rm", "rmdir", "touch", "mkdir", "truncate", "chmod", "chown", "shred", "unlink"}
_WRITES_LAST_ARG = {"cp", "mv", "ln", "install", "rsync"}
_REDIRECT = re.compile(r"(?:^|[^<>&\d])\d*(?:&)?>{1,2}\|?\s*([^\s;&|<>()]+)")
_FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
_READ_TOOLS = {"Read": "file_path", "NotebookRead": "notebook_path", "Glob": "path", "Grep": "path", "LS": "path"}


def _real(path: Path) -> Path:
    """``path`` with the links of its existing part followed (the rest may not exist yet)."""
    existing = path
    rest: list[str] = []
    while not existing.exists() and existing != existing.parent:
        existing, rest = existing.parent, [existing.name, *rest]
    return Path(os.path.realpath(existing), *rest)


def _command_words(segment: str) -> list[str]:
    """The words of one simple command, without leading ``VAR=value`` assignments and ``sudo``."""
    try:
        words = shlex.split(segment)
    except ValueError:
        words = segment.split()
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]
    if words and words[0] == "sudo":
        words = words[1:]
    return words


def _written(name: str, words: list[str], args: list[str]) -> list[str]:
    """The paths the command ``name`` writes (``args``: its words that are not options)."""
    if name in _WRITES_ALL_ARGS or name == "tee":
        return args
    if name in _WRITES_LAST_ARG and len(args) >= 2:
        return args[-1:]
    if name == "sed" and any(w.startswith("-i") for w in words[1:]) and len(args) >= 2:
        return args[1:]
    if name == "find" and ("-delete" in words or "-exec" in words or "-execdir" in words):
        return [w for w in words[1:] if not w.startswith("-")][:1] or ["."]
    return []


def _within(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


@dataclass(frozen=True)
class BashPolicy:
    """What a tool call may do. ``work_dir`` is where writes are allowed (plus ``extra_write_roots``)."""

    work_dir: Path
    patterns: tuple[tuple[str, str], ...] = DEFAULT_BLOCKED_PATTERNS
    # Not /tmp: it is shared with everything else on the machine (the CLI gets its own TMPDIR).
    extra_write_roots: tuple[Path, ...] = (Path("/dev/null"),)
    read_roots: tuple[Path, ...] = ()  # readable besides the working directory (the task's public data)
    _compiled: tuple[tuple[re.Pattern[str], str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", tuple((re.compile(p), r) for p, r in self.patterns))

    def _resolve(self, raw: str, base: Path | None = None) -> Path:
        expanded = os.path.expanduser(os.path.expandvars(raw.strip("'\"")))
        joined = expanded if os.path.isabs(expanded) else os.path.join(base or self.work_dir, expanded)
        return Path(os.path.normpath(joined))

    def _outside(self, raw: str, base: Path | None = None) -> bool:
        """A write target outside the writable roots — as written, or once the links on its way
        are followed (a link the agent made must not lead a write elsewhere) — or into ``input/``."""
        work = Path(os.path.normpath(self.work_dir))
        roots = (work, *self.extra_write_roots)
        target = self._resolve(raw, base)
        if not _within(target, roots) or _within(target, (work / "input",)):
            return True
        real = _real(target)
        real_roots = tuple(_real(r) for r in roots)
        return not _within(real, real_roots) or _within(real, (_real(work / "input"),))

    def shell_cwd_after(self, command: str, cwd: Path | None = None) -> Path:
        """Where the agent's shell stands after ``command``: ``cd`` carries over between Bash
        calls; like the CLI, a shell that left the working directory is put back there."""
        base = self._walk(command, cwd)[1]
        return base if _within(base, (Path(os.path.normpath(self.work_dir)),)) else Path(self.work_dir)

    def _readable(self, raw: str) -> bool:
        """Inside the working directory as written, and — links followed — still there or in the
        task's public data (``input/`` may link to it; a link the agent made must lead nowhere else)."""
        lexical = self._resolve(raw)
        if not _within(lexical, (Path(os.path.normpath(self.work_dir)),)):
            return False
        real = Path(os.path.realpath(lexical))
        return _within(real, (Path(os.path.realpath(self.work_dir)), *self.read_roots))

    def _write_targets(self, command: str, cwd: Path | None = None) -> list[tuple[str, Path]]:
        return self._walk(command, cwd)[0]

    def _walk(self, command: str, cwd: Path | None = None) -> tuple[list[tuple[str, Path]], Path]:
        """(target as written, directory it is relative to) of every write, and the final
        directory: ``cd`` moves the base along, starting from the shell's ``cwd``."""
        base = Path(cwd or self.work_dir)
        targets: list[tuple[str, Path]] = []
        for segment in re.split(r"&&|\|\||[;|\n]", command):
            targets.extend((m.group(1), base) for m in _REDIRECT.finditer(segment))
            words = _command_words(segment)
            if not words:
                continue
            name, args = os.path.basename(words[0]), [w for w in words[1:] if not w.startswith("-")]
            if name == "cd":
                base = self._resolve(args[0] if args else "~", base)
            targets.extend((t, base) for t in _written(name, words, args))
        return targets, base

    def check_bash(self, command: str, cwd: Path | None = None) -> str | None:
        """The reason to refuse ``command`` run from ``cwd``, or None if it may run."""
        for pattern, reason in self._compiled:
            if pattern.search(command):
                return f"blocked dangerous command: {reason}"
        for target, base in self._write_targets(command, cwd):
            if self._outside(target, base):
                return f"blocked write outside the working directory (or into the read-only input/): {target}"
        return None

    def check_tool(self, tool_name: str, tool_input: dict[str, Any], cwd: Path | None = None) -> str | None:
        if tool_name == "Bash":
            return self.check_bash(str(tool_input.get("command", "")), cwd)
        key = _FILE_TOOLS.get(tool_name)
        if key and tool_input.get(key) and self._outside(str(tool_input[key])):
            return f"blocked {tool_name} outside the working directory: {tool_input[key]}"
        key = _READ_TOOLS.get(tool_name)
        if key and tool_input.get(key) and not self._readable(str(tool_input[key])):
            return f"blocked {tool_name} outside the working directory: {tool_input[key]}"
        return None


