#!/usr/bin/env python3
"""A stand-in for the ``claude`` CLI that speaks the SDK's real stream-json control protocol.

Selected with ``ClaudeAgentOptions(cli_path=...)``. It never talks to a model: it answers from
a script of canned turns and records what the SDK really sent, so tests can assert on argv
flags, the initialize request (hooks, agents) and hook answers.

Protocol, as the SDK (claude_agent_sdk 0.2.x) drives it:
  stdin  <- {"type":"control_request","request":{"subtype":"initialize","hooks":...,"agents":...}}
  stdout -> {"type":"control_response","response":{"subtype":"success","request_id":...}}
  stdin  <- {"type":"user","message":{"role":"user","content":"<prompt>"}}
  stdout -> system/init, assistant messages, control_request hook_callback (CLI -> SDK),
  stdin  <- control_response for each hook callback
  stdout -> {"type":"result",...}; the SDK then closes stdin and we exit with the scripted code.

Environment:
  FAKE_CLAUDE_SCRIPT  JSON file: {"invocations": [{"steps": [...], "exit_code": 0, "stderr": ""}]}
                      (invocation n uses entry n; the last entry repeats)
  FAKE_CLAUDE_RECORD  directory; invocation n writes record-<n>.json
                      {"argv", "stdin", "hook_responses", "cwd", "env_names"}

Steps: {"type":"assistant","text":...} | {"type":"tool_use","tool":...,"input":{...}} |
       {"type":"result", ...fields} | {"type":"raw","line":...} | {"type":"exit","code":n}
Strings may contain ${ENV:NAME}, replaced by that environment variable (to test redaction).
"""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

SESSION_ID = str(uuid.uuid4())


def _expand(value: Any) -> Any:
    if isinstance(value, str):
        return re.sub(r"\$\{ENV:([A-Z0-9_]+)\}", lambda m: os.environ.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [_expand(v) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v) for k, v in value.items()}
    return value


ROOT_REFUSAL = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"


def refuse_root_bypass(argv: list[str]) -> None:
    """What the real CLI does: under root, bypassPermissions is refused before anything else
    (unless IS_SANDBOX=1 says the CLI runs in a sandbox), with this line and exit code 1."""
    bypass = "--dangerously-skip-permissions" in argv or any(
        a == "bypassPermissions" and i > 0 and argv[i - 1] == "--permission-mode" for i, a in enumerate(argv))
    if bypass and hasattr(os, "geteuid") and os.geteuid() == 0 and os.environ.get("IS_SANDBOX") != "1":
        sys.stderr.write(ROOT_REFUSAL + "\n")
        sys.stderr.flush()
        raise SystemExit(1)


class Fake:
    def __init__(self) -> None:
        record_dir = Path(os.environ["FAKE_CLAUDE_RECORD"])
        record_dir.mkdir(parents=True, exist_ok=True)
        self.index = len(list(record_dir.glob("record-*.json")))
        self.record_path = record_dir / f"record-{self.index}.json"
        script = json.loads(Path(os.environ["FAKE_CLAUDE_SCRIPT"]).read_text())
        invocations = script["invocations"]
        self.plan = invocations[min(self.index, len(invocations) - 1)]
        self.record: dict[str, Any] = {
            "argv": sys.argv[1:],
            "stdin": [],
            "hook_responses": [],
            "cwd": os.getcwd(),
            "env_names": sorted(os.environ),
        }
        self.hooks: dict[str, list[dict[str, Any]]] = {}
        self.counter = 0
        self.save()

    def save(self) -> None:
        self.record_path.write_text(json.dumps(self.record, indent=1))

    def send(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def read(self) -> dict[str, Any] | None:
        line = sys.stdin.readline()
        if not line:
            return None
        message = json.loads(line)
        self.record["stdin"].append(message)
        self.save()
        return message

    # --- control protocol --------------------------------------------------------------

    def handle_initialize(self, message: dict[str, Any]) -> None:
        self.hooks = message["request"].get("hooks") or {}
        self.send({
            "type": "control_response",
            "response": {"subtype": "success", "request_id": message["request_id"],
                         "response": {"commands": [], "models": [], "account": {}}},
        })

    def hook_callback(self, event: str, tool: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """Ask the SDK every registered callback matching (event, tool); return their outputs."""
        outputs = []
        for matcher in self.hooks.get(event) or []:
            pattern = matcher.get("matcher")
            if pattern not in (None, "", "*") and not re.fullmatch(pattern, tool):
                continue
            for callback_id in matcher.get("hookCallbackIds") or []:
                self.counter += 1
                request_id = f"fake_req_{self.counter}"
                self.send({
                    "type": "control_request",
                    "request_id": request_id,
                    "request": {"subtype": "hook_callback", "callback_id": callback_id,
                                "input": payload, "tool_use_id": payload.get("tool_use_id")},
                })
                while True:
                    reply = self.read()
                    if reply is None:
                        raise SystemExit("stdin closed while waiting for a hook response")
                    response = reply.get("response") or {}
                    if reply.get("type") == "control_response" and response.get("request_id") == request_id:
                        entry = {"event": event, "tool": tool, "callback_id": callback_id, "response": response}
                        self.record["hook_responses"].append(entry)
                        self.save()
                        outputs.append(response)
                        break
        return outputs

    # --- scripted turn --------------------------------------------------------------------

    def assistant(self, content: list[dict[str, Any]]) -> None:
        self.send({
            "type": "assistant", "session_id": SESSION_ID, "parent_tool_use_id": None, "uuid": str(uuid.uuid4()),
            "message": {"id": "msg_fake", "role": "assistant", "model": "fake-model", "content": content,
                        "usage": {"input_tokens": 10, "output_tokens": 5}},
        })

    def tool_use(self, step: dict[str, Any]) -> None:
        tool_use_id = f"toolu_{self.counter + 1}"
        tool, tool_input = step["tool"], step.get("input") or {}
        self.assistant([{"type": "tool_use", "id": tool_use_id, "name": tool, "input": tool_input}])
        base = {"session_id": SESSION_ID, "transcript_path": "/dev/null", "cwd": os.getcwd(),
                "tool_name": tool, "tool_input": tool_input, "tool_use_id": tool_use_id}
        outputs = self.hook_callback("PreToolUse", tool, {**base, "hook_event_name": "PreToolUse"})
        denied = [
            o.get("response", {}).get("hookSpecificOutput", {}) for o in outputs
            if o.get("subtype") == "success"
            and o.get("response", {}).get("hookSpecificOutput", {}).get("permissionDecision") == "deny"
        ]
        if denied:
            content = f"Hook denied the tool use: {denied[0].get('permissionDecisionReason', '')}"
            self.send({"type": "user", "session_id": SESSION_ID, "parent_tool_use_id": None,
                       "message": {"role": "user", "content": [
                           {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": True}]}})
            return
        response = step.get("response", {"stdout": "ok", "stderr": "", "exit_code": 0})
        self.hook_callback("PostToolUse", tool, {**base, "hook_event_name": "PostToolUse", "tool_response": response})

    def result(self, step: dict[str, Any]) -> None:
        fields = {k: v for k, v in step.items() if k != "type"}
        message = {
            "type": "result", "subtype": "success", "is_error": False, "duration_ms": 1234,
            "duration_api_ms": 1000, "num_turns": 1, "session_id": SESSION_ID, "total_cost_usd": 0.01,
            "usage": {"input_tokens": 100, "output_tokens": 50}, "result": "",
        }
        message.update(fields)
        self.send(message)

    def run(self) -> int:
        refuse_root_bypass(sys.argv[1:])
        while True:
            message = self.read()
            if message is None:
                return 0  # the SDK closed stdin before sending a prompt
            if message.get("type") == "control_request" and message["request"].get("subtype") == "initialize":
                self.handle_initialize(message)
            elif message.get("type") == "user":
                break
        self.send({"type": "system", "subtype": "init", "session_id": SESSION_ID, "uuid": str(uuid.uuid4()),
                   "claude_code_version": "2.1.999", "model": "fake-model", "cwd": os.getcwd(), "tools": []})
        for step in _expand(self.plan.get("steps", [])):
            kind = step["type"]
            if kind == "assistant":
                self.assistant([{"type": "text", "text": step["text"]}])
            elif kind == "tool_use":
                self.tool_use(step)
            elif kind == "result":
                self.result(step)
            elif kind == "raw":
                sys.stdout.write(step["line"] + "\n")
                sys.stdout.flush()
            elif kind == "exit":
                sys.stderr.write(_expand(self.plan.get("stderr", "")))
                sys.stderr.flush()
                return int(step["code"])
        while self.read() is not None:  # wait for the SDK to close stdin (end of the run)
            pass
        sys.stderr.write(_expand(self.plan.get("stderr", "")))
        sys.stderr.flush()
        return int(self.plan.get("exit_code", 0))


if __name__ == "__main__":
    sys.exit(Fake().run())
