"""The tools an OpenAI-compatible model may call (function calling), for the roles that have
tools in REQ-OR-008: read the task's data and the call's files, and run a command.

The Claude backend gets these from the Claude Code CLI; over Chat Completions we provide them
ourselves, with the same confinement rules (``hooks.BashPolicy``):

* ``list_files`` / ``read_file``: only inside the call's working directory, where ``input/`` is
  the task's public data (read-only copy); links are followed only into that data.
* ``run_command``: ``/bin/sh -c`` in the working directory, in its own process group, with a
  timeout (default 120 s, at most 600 s and never past the call's deadline), a scrubbed
  environment (no API keys: PATH, HOME = the working directory, LANG), and the same refusal of
  dangerous commands and of writes outside the working directory as the Claude backend.
  Where the run's sandbox is bwrap (the default wherever bubblewrap works) the command runs
  inside it: the working directory writable, the task's public data read-only, no network, no
  private answers, an unprivileged uid under root (engine/sandbox). With ``--sandbox none`` it
  runs as the engine's user, confined by the checks above only. The output given back to the
  model is truncated and redacted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from engine.agents.bash_policy import BashPolicy

MAX_OUTPUT_CHARS = 20_000
DEFAULT_COMMAND_TIMEOUT_S = 120.0
MAX_COMMAND_TIMEOUT_S = 600.0

_READ_TOOLS = {"Read", "Glob", "Grep", "LS", "NotebookRead"}

LIST_FILES = {"type": "function", "function": {
    "name": "list_files",
    "description": "List the files in a directory of the working directory (the task's data is in input/).",
    "parameters": {"type": "object", "properties": {
        "path": {"type": "string", "description": "directory relative to the working directory, default '.'"}},
        "required": []}}}
READ_FILE = {"type": "function", "function": {
    "name": "read_file",
    "description": "Read a text file of the working directory (e.g. input/train.csv); long files are cut.",
    "parameters": {"type": "object", "properties": {
        "path": {"type": "string", "description": "file path relative to the working directory"},
        "max_chars": {"type": "integer", "description": f"at most this many characters (default {MAX_OUTPUT_CHARS})"}},
        "required": ["path"]}}}
RUN_COMMAND = {"type": "function", "function": {
    "name": "run_command",
    "description": "Run a shell command in the working directory (python is on PATH) and get its output.",
    "parameters": {"type": "object", "properties": {
        "command": {"type": "string"},
        "timeout_s": {"type": "number", "description": f"seconds, default {DEFAULT_COMMAND_TIMEOUT_S:g}"}},
        "required": ["command"]}}}


def tool_specs(role_tools: list[str] | None) -> list[dict[str, Any]]:
    """The function tools for a role, from its Claude tool list (no tools: an empty list)."""
    names = set(role_tools or [])
    specs: list[dict[str, Any]] = []
    if names & (_READ_TOOLS | {"Bash"}):
        specs += [LIST_FILES, READ_FILE]
    if "Bash" in names:
        specs.append(RUN_COMMAND)
    return specs


def _cut(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters not shown]"


@dataclass
class ToolBox:
    """Runs the model's tool calls for one agent call."""

    work_dir: Path
    read_roots: tuple[Path, ...]
    redact: Callable[[str], str]
    deadline: Callable[[], float | None] = lambda: None  # seconds left in the call, or None
    sandbox_mode: str = "none"  # bwrap: commands run in the agent sandbox (engine/sandbox)

    def __post_init__(self) -> None:
        self.policy = BashPolicy(Path(self.work_dir), read_roots=tuple(Path(r).resolve() for r in self.read_roots))
        self.calls: list[str] = []
        self.refused: list[str] = []

    async def run(self, name: str, raw_arguments: str) -> str:
        """The tool's answer as text for the model (errors are answers too: the model may recover)."""
        self.calls.append(name)
        try:
            args = json.loads(raw_arguments or "{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except ValueError as exc:
            return f"error: the arguments of {name} are not valid JSON ({exc}); send a JSON object"
        try:
            if name == "list_files":
                return self._list(str(args.get("path") or "."))
            if name == "read_file":
                return self._read(str(args.get("path") or ""), args.get("max_chars"))
            if name == "run_command":
                return await self._command(str(args.get("command") or ""), args.get("timeout_s"))
        except OSError as exc:
            return f"error: {exc.strerror or exc}"
        return f"error: no tool named {name!r}; the tools are list_files, read_file, run_command"

    def _refuse(self, reason: str) -> str:
        self.refused.append(reason)
        return f"refused: {reason}"

    def _list(self, path: str) -> str:
        reason = self.policy.check_tool("LS", {"path": path})
        if reason:
            return self._refuse(reason)
        target = Path(self.work_dir) / path
        if not target.is_dir():
            return f"error: {path} is not a directory"
        rows = []
        for entry in sorted(target.iterdir(), key=lambda p: p.name):
            kind = "dir" if entry.is_dir() else f"{entry.stat().st_size} bytes"
            rows.append(f"{entry.name}{'/' if entry.is_dir() else ''}\t{kind}")
        return "\n".join(rows) or "(empty)"

    def _read(self, path: str, max_chars: Any) -> str:
        reason = self.policy.check_tool("Read", {"file_path": path})
        if reason:
            return self._refuse(reason)
        target = Path(self.work_dir) / path
        if not target.is_file():
            return f"error: no file {path}"
        limit = max(1, min(int(max_chars), MAX_OUTPUT_CHARS)) if isinstance(max_chars, int) else MAX_OUTPUT_CHARS
        with open(target, encoding="utf-8", errors="replace") as handle:
            text = handle.read(limit + 1)
        return self.redact(_cut(text, limit))

    async def _command(self, command: str, timeout: Any) -> str:
        if not command.strip():
            return "error: empty command"
        reason = self.policy.check_bash(command)
        if reason:
            return self._refuse(reason)
        limit = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else DEFAULT_COMMAND_TIMEOUT_S
        limit = min(limit, MAX_COMMAND_TIMEOUT_S)
        left = self.deadline()
        if left is not None:
            limit = max(1.0, min(limit, left))
        env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.defpath]),
               "HOME": str(self.work_dir), "LANG": os.environ.get("LANG", "C.UTF-8"), "PYTHONUNBUFFERED": "1"}
        argv = ["/bin/sh", "-c", command]
        if self.sandbox_mode == "bwrap":
            from engine.sandbox import Sandbox, agent_policy

            env["HOME"] = "/tmp"
            policy = agent_policy("bwrap", work_dir=self.work_dir, read_only=[str(r) for r in self.read_roots],
                                  key=f"openai-tools:{self.work_dir}")
            argv = Sandbox(policy).command(argv, cwd=self.work_dir, env=env)
        process = await anyio.open_process(argv, cwd=str(self.work_dir), env=env,
                                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, start_new_session=True)
        chunks: list[bytes] = []
        timed_out = False
        try:
            with anyio.move_on_after(limit) as scope:
                assert process.stdout is not None
                async for chunk in process.stdout:
                    if sum(map(len, chunks)) < 4 * MAX_OUTPUT_CHARS:
                        chunks.append(chunk)
                await process.wait()
            timed_out = scope.cancelled_caught
        finally:
            if process.returncode is None:  # timed out, or the call was cancelled: the whole group goes
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                with anyio.CancelScope(shield=True):
                    await process.wait()
            await process.aclose()
        output = b"".join(chunks).decode("utf-8", errors="replace")
        status = f"timed out after {limit:g} s (killed)" if timed_out else f"exit code {process.returncode}"
        return self.redact(f"[{status}]\n" + _cut(output))
