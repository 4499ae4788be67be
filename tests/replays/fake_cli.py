#!/usr/bin/env python3
"""A fake ``claude`` CLI that answers whole MLE-STAR runs through the SDK's stream-json protocol.

It reuses the protocol half of ``tests/fake_claude/fake_claude.py`` (initialize handshake,
assistant messages, result message) but, instead of replaying a fixed list of turns, it reads
the prompt the Claude backend sent, recognises which prompt template produced it (and so the
role, the variant and the values that were filled in) and answers like a model would, with
``tests/replays/canned.py``. Everything it sends is deterministic: the session id is derived from
the call's working directory (the engine names it after the effect id), cost and usage from the
prompt, so two recordings of the same run agree.

Environment: ``CANNED_SCENARIO`` (a name in ``canned.SCENARIOS``, default "default").
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import tests.fake_claude.fake_claude as protocol  # noqa: E402
from engine.agents.preflight import PREFLIGHT_PROMPT  # noqa: E402
from handlers.prompts.registry import ALL_TEMPLATES  # noqa: E402
from tests.replays import canned  # noqa: E402


def _pattern(template: Any, tail: bool) -> tuple[re.Pattern[str], dict[str, str]]:
    names = sorted(template.placeholders, key=len, reverse=True)
    splitter = re.compile(r"\{(" + "|".join(re.escape(n) for n in names) + r")\}")
    groups: dict[str, str] = {}
    parts, pos = [], 0
    for m in splitter.finditer(template.template):
        parts.append(re.escape(template.template[pos:m.start()]))
        name = m.group(1)
        if name in groups.values():
            key = next(k for k, v in groups.items() if v == name)
            parts.append(f"(?P={key})")
        else:
            key = f"g{len(groups)}"
            groups[key] = name
            parts.append(f"(?P<{key}>.*?)")
        pos = m.end()
    parts.append(re.escape(template.template[pos:]))
    if tail:
        parts.append(r"(?P<tail>.*)")
    return re.compile("".join(parts), re.S), groups


def recognise(prompt: str) -> tuple[str, str | None, dict[str, str]]:
    """(agent type, variant, the values filled into the template) of a rendered prompt."""
    for tail in (False, True):  # a corrective note may follow the extractor's template
        for template in ALL_TEMPLATES:
            pattern, groups = _pattern(template, tail)
            m = pattern.fullmatch(prompt)
            if m:
                return template.agent_type.value, template.variant, {name: m.group(k) for k, name in groups.items()}
    raise SystemExit(f"fake claude: no prompt template matches this prompt: {prompt[:200]!r}")


class CannedClaude(protocol.Fake):
    def __init__(self) -> None:  # no script file, no record directory: answers come from canned.py
        self.record = {"stdin": []}
        self.hooks = {}
        self.counter = 0
        self.plan = {}

    def save(self) -> None:
        pass

    def run(self) -> int:
        protocol.refuse_root_bypass(sys.argv[1:])
        prompt = None
        while prompt is None:
            message = self.read()
            if message is None:
                return 0
            if message.get("type") == "control_request" and message["request"].get("subtype") == "initialize":
                self.handle_initialize(message)
            elif message.get("type") == "user":
                content = message["message"]["content"]
                prompt = content if isinstance(content, str) else "".join(
                    b.get("text", "") for b in content if isinstance(b, dict))
        call = Path.cwd().name.replace("__", "/")
        protocol.SESSION_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, f"fake-claude:{call}"))
        self.send({"type": "system", "subtype": "init", "session_id": protocol.SESSION_ID,
                   "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"init:{call}")),
                   "claude_code_version": "2.1.999", "model": "fake-model", "cwd": os.getcwd(), "tools": []})
        if prompt == PREFLIGHT_PROMPT:  # the backend's start-up check
            self.assistant([{"type": "text", "text": "ready"}])
            self.result({"result": "ready", "total_cost_usd": 0.0001, "duration_ms": 300, "duration_api_ms": 250,
                         "usage": {"input_tokens": 12, "output_tokens": 1}})
            while self.read() is not None:
                pass
            return 0
        agent_type, variant, values = recognise(prompt)
        scenario = canned.SCENARIOS[os.environ.get("CANNED_SCENARIO", "default")]
        text, structured = canned.answer(agent_type, variant, values, effect_id=call, scenario=scenario)
        shown = text or canned.json.dumps(structured)
        self.assistant([{"type": "text", "text": shown}])
        digest = int(hashlib.sha256(prompt.encode()).hexdigest()[:6], 16)
        result: dict[str, Any] = {
            "result": shown, "total_cost_usd": round(0.002 + len(prompt) / 2_000_000, 6),
            "duration_ms": 800 + digest % 1500, "duration_api_ms": 700 + digest % 1400,
            "usage": {"input_tokens": len(prompt) // 4, "output_tokens": len(shown) // 4},
        }
        if structured is not None:
            result["structured_output"] = structured
        self.result(result)
        while self.read() is not None:  # the SDK closes stdin at the end of the call
            pass
        return 0


if __name__ == "__main__":
    sys.exit(CannedClaude().run())
