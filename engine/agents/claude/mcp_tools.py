"""The two custom tools of REQ-OR-010, served in-process to the Claude CLI over the SDK's MCP bridge.

* ``parse_score``: the score the harness would read from a script's output (the last
  ``Final Validation Performance: x`` line, REQ-DM-026) — so an agent checks its own run the
  way the engine will, instead of eyeballing logs;
* ``list_data_files``: the files of the task's data directory (``./input``) with their sizes
  and, for CSV files, the header — the agent's first look at the data without a shell.

Both read only the call's own working directory. A failure to build the server (an SDK without
MCP support) is logged and the call goes on without them (REQ-OR-010).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger("engine.agents.mcp")

SERVER_NAME = "mle"
TOOL_NAMES = (f"mcp__{SERVER_NAME}__parse_score", f"mcp__{SERVER_NAME}__list_data_files")
_MAX_FILES = 200


def _text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], **({"is_error": True} if error else {})}


def list_data_files(input_dir: Path) -> str:
    if not input_dir.is_dir():
        return f"no data directory at {input_dir.name}/"
    lines: list[str] = []
    for path in sorted(p for p in input_dir.rglob("*") if p.is_file())[:_MAX_FILES]:
        rel = path.relative_to(input_dir.parent)
        line = f"{rel}  ({path.stat().st_size:,} bytes)"
        if path.suffix.lower() == ".csv":
            try:
                with path.open(encoding="utf-8", errors="replace") as fh:
                    line += f"  columns: {fh.readline().strip()[:500]}"
            except OSError:
                pass
        lines.append(line)
    return "\n".join(lines) or f"{input_dir.name}/ is empty"


def build_server(work_dir: Path) -> dict[str, Any] | None:
    """``ClaudeAgentOptions.mcp_servers`` for one call, or None when MCP is unavailable."""
    try:
        from claude_agent_sdk import create_sdk_mcp_server, tool

        from engine.harness.results import parse_score
    except Exception as exc:  # REQ-OR-010: warn and continue without custom tools
        log.warning("mcp_tools_unavailable", error=str(exc))
        return None

    @tool("parse_score", "Read the validation score from a script's output: the value of its last "
          "'Final Validation Performance: <x>' line, as the engine will read it. Give the output text, "
          "or the path of a log file inside the working directory.",
          {"type": "object", "properties": {"text": {"type": "string"}, "path": {"type": "string"}}})
    async def parse_score_tool(args: dict[str, Any]) -> dict[str, Any]:
        text = args.get("text")
        if not text and args.get("path"):
            target = (work_dir / str(args["path"])).resolve()
            if work_dir.resolve() not in (target, *target.parents) or not target.is_file():
                return _text(f"no such file in the working directory: {args['path']}", error=True)
            text = target.read_text(encoding="utf-8", errors="replace")
        score = parse_score(str(text or ""))
        return _text("no 'Final Validation Performance' line found" if score is None else repr(score))

    @tool("list_data_files", "List the task's data files in ./input with their sizes and CSV headers.",
          {"type": "object", "properties": {}})
    async def list_files_tool(args: dict[str, Any]) -> dict[str, Any]:
        return _text(list_data_files(work_dir / "input"))

    try:
        return {SERVER_NAME: create_sdk_mcp_server(SERVER_NAME, tools=[parse_score_tool, list_files_tool])}
    except Exception as exc:
        log.warning("mcp_tools_unavailable", error=str(exc))
        return None
