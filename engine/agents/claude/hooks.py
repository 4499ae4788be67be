"""SDK hooks for one agent call: safety (PreToolUse, REQ-OR-033), progress, the call's deadline
and tool-failure logging (PostToolUse / PostToolUseFailure, REQ-OR-031/034/035).

The safety hook fails closed: if the check itself raises, the tool use is denied. File tools
that read (Read, Glob, Grep, NotebookRead) are confined to the working directory (where the
task's data is ``./input``) so the agent is not pointed at anything else of the machine; the
sandbox is what really isolates it, the hook is a second line.

The safety decision itself is ``engine.agents.bash_policy.BashPolicy.check``, shared with the
OpenAI-compatible backend; the hook only wraps it in the CLI's deny envelope. The
check is a guard against obvious accidents, not a sandbox: shell is too expressive for a
pattern list to be complete, which is why agents also run with ``cwd`` set to their own
working directory and without user/project settings.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from engine.agents.bash_policy import DEFAULT_BLOCKED_PATTERNS, BashPolicy

if TYPE_CHECKING:  # the SDK is imported only where a call is made (engine-only)
    from claude_agent_sdk import HookContext, HookInput, HookMatcher
    from claude_agent_sdk.types import HookEvent, SyncHookJSONOutput

log = structlog.get_logger("engine.agents.claude.hooks")

__all__ = ["DEFAULT_BLOCKED_PATTERNS", "BashPolicy", "CallHooks"]


def _deny(reason: str) -> SyncHookJSONOutput:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _tool_failed(response: Any) -> str | None:
    """A failure message if the tool's response says it failed (shapes vary per tool)."""
    if isinstance(response, dict):
        if response.get("is_error") or response.get("isError"):
            return str(response.get("error") or response.get("content") or "tool reported an error")[:500]
        if response.get("interrupted"):
            return "interrupted"
        code = response.get("exit_code", response.get("exitCode"))
        if isinstance(code, int) and code != 0:
            return f"exit code {code}: {str(response.get('stderr', ''))[:500]}"
    return None


@dataclass
class CallHooks:
    """The hooks of one agent call; ``failures`` is shared across calls (circuit-breaker data)."""

    agent_type: str
    effect_id: str
    policy: BashPolicy
    failures: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)
    denied: list[str] = field(default_factory=list)
    time_limit_s: float | None = None
    wrap_up_s: float = 0.0  # how long before the time limit the agent is asked to stop
    stopped_for_deadline: bool = False
    shell_cwd: Path | None = None  # where the agent's shell stands (cd carries over between calls)

    async def pre_tool_use(self, hook_input: HookInput, tool_use_id: str | None,
                           context: HookContext) -> SyncHookJSONOutput:
        data: dict[str, Any] = {}
        try:
            data = dict(hook_input or {})
            tool, tool_input = str(data.get("tool_name", "")), dict(data.get("tool_input") or {})
            reason = self.policy.check_tool(tool, tool_input, self.shell_cwd)
            if reason is None and tool == "Bash":
                self.shell_cwd = self.policy.shell_cwd_after(str(tool_input.get("command", "")), self.shell_cwd)
        except Exception as exc:  # fail closed: a check that cannot decide denies
            reason = f"blocked: the safety check could not decide ({type(exc).__name__}: {exc})"
        if reason is None:
            return {}  # no opinion: the permission mode decides
        self.denied.append(reason)
        log.warning("tool_use_denied", agent_type=self.agent_type, effect_id=self.effect_id,
                    tool=data.get("tool_name"), reason=reason, tool_use_id=tool_use_id)
        return _deny(reason)

    async def post_tool_use(self, hook_input: HookInput, tool_use_id: str | None,
                            context: HookContext) -> SyncHookJSONOutput:
        data = dict(hook_input or {})
        failure = _tool_failed(data.get("tool_response"))
        self._record(data, failure)
        return self._deadline_check()

    def _deadline_check(self) -> SyncHookJSONOutput:
        """REQ-OR-034: once the call's deadline is near (less than ``wrap_up_s`` left of its time
        limit), the agent is asked to stop after this tool, so it ends with what it has instead of
        being cut at the deadline (the backend's hard stop) with nothing."""
        if self.time_limit_s is None:
            return {}
        used = time.monotonic() - self.started
        if used < self.time_limit_s - self.wrap_up_s:
            return {}
        self.stopped_for_deadline = True
        log.warning("agent_call_deadline", agent_type=self.agent_type, effect_id=self.effect_id,
                    time_limit_s=self.time_limit_s, used_s=round(used, 3))
        return {"continue_": False,
                "stopReason": f"the call's deadline is near ({used:.0f} s of {self.time_limit_s:g} s used): stop here"}

    async def post_tool_use_failure(self, hook_input: HookInput, tool_use_id: str | None,
                                    context: HookContext) -> SyncHookJSONOutput:
        data = dict(hook_input or {})
        self._record(data, str(data.get("error") or "tool failed")[:500])
        return self._deadline_check()

    def _record(self, data: dict[str, Any], failure: str | None) -> None:
        elapsed = round(time.monotonic() - self.started, 3)
        fields = dict(agent_type=self.agent_type, effect_id=self.effect_id, tool=data.get("tool_name"),
                      session_id=data.get("session_id"), elapsed_s=elapsed, ok=failure is None)
        if failure is None:
            self.failures[self.agent_type] = 0
            log.info("tool_used", **fields)
        else:
            self.failures[self.agent_type] += 1
            log.warning("tool_failed", error=failure, consecutive_failures=self.failures[self.agent_type], **fields)

    def sdk_hooks(self) -> dict[HookEvent, list[HookMatcher]]:
        """The ``ClaudeAgentOptions.hooks`` value (imports the SDK lazily: engine-only)."""
        from claude_agent_sdk import HookMatcher

        return {
            # matcher None: every tool, so Write/Edit outside the working dir are caught too.
            "PreToolUse": [HookMatcher(matcher=None, hooks=[self.pre_tool_use])],
            "PostToolUse": [HookMatcher(matcher=None, hooks=[self.post_tool_use])],
            "PostToolUseFailure": [HookMatcher(matcher=None, hooks=[self.post_tool_use_failure])],
        }
