"""The real Claude CLI when things go wrong (issue 14, must-show 2): bad credentials, overload,
huge inputs, a budget that runs out, and the engine killed mid-call. REQ-OR-028/029/052."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import psutil

from engine.agents.base import AgentContext
from engine.agents.claude.backend import ClaudeBackend
from events.core import AgentCallCompleted
from events.domain import DataModality, MetricDirection, PipelineConfig, TaskDescription, TaskType
from handlers.prompts import build_request
from tests.claude_cli.conftest import FAKE_KEY, MODEL, REPO, engine, engine_env, events
from tests.support.canned_model import CannedModel
from tests.support.messages_api import Hang, ToolCall, Tools
from tests.support.shared_runs import LEAN_RUN

BUNDLED = "claude_agent_sdk/_bundled/claude"


def _backend(api_url: str, **config) -> ClaudeBackend:
    env = {"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": api_url, "PATH": os.environ["PATH"]}
    return ClaudeBackend(PipelineConfig(model=MODEL, **config), env=env)


def _ctx(tmp_path: Path, description: str = "Predict the species of each iris.") -> AgentContext:
    task = TaskDescription(competition_id="iris", task_type=TaskType.classification,
                           data_modality=DataModality.tabular, evaluation_metric="logloss",
                           metric_direction=MetricDirection.minimize, description=description)
    work, data = tmp_path / "run" / "agents" / "call", tmp_path / "task"
    work.mkdir(parents=True)
    data.mkdir()
    return AgentContext(run_id="r", run_dir=tmp_path / "run", work_dir=work, task=task, task_dir=data,
                        config=PipelineConfig(), seed=0)


def _claude_processes(under: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        try:
            cmd = " ".join(proc.info["cmdline"] or [])
            cwd = proc.info["cwd"] or ""
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if (BUNDLED in cmd or "sleep 3017" in cmd) and (str(under) in cwd or str(under) in cmd):
            found.append(proc)
    return found


def test_bad_key_fails_the_start_within_30_s_with_one_clear_line_and_no_run(tmp_path, stand_in):
    api = stand_in(CannedModel(), expected_key="sk-ant-the-right-key-0000000000")
    db = tmp_path / "engine.db"
    t0 = time.monotonic()
    done = engine(["start", "--task", "iris", "--agent", "claude", "--preset", "quick", "--db", str(db)],
                  engine_env(api.url), timeout=120)
    took = time.monotonic() - t0
    assert done.returncode == 2, done.stdout + done.stderr
    assert took < 30, took
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "rejected the credentials in ANTHROPIC_API_KEY" in lines[0], done.stderr
    assert FAKE_KEY not in done.stderr + done.stdout  # the key itself is never shown
    assert not db.exists() or not events_any(db)
    assert len(api.message_calls()) == 1  # one check, no retries


def events_any(db: Path) -> bool:
    from store.sqlite import SQLiteEventStore

    store = SQLiteEventStore(db, create=False)
    return any(True for r in store.list_runs())


def test_unreachable_endpoint_fails_the_start_within_30_s(tmp_path):
    t0 = time.monotonic()
    done = engine(["start", "--task", "iris", "--agent", "claude", "--db", str(tmp_path / "e.db")],
                  engine_env("http://127.0.0.1:9"), timeout=120)
    assert done.returncode == 2 and time.monotonic() - t0 < 30
    assert "cannot use the model API at http://127.0.0.1:9" in done.stderr, done.stderr


def test_overload_then_success_is_one_recorded_call(tmp_path, stand_in):
    model = CannedModel(fail_first={529: 1})
    api = stand_in(model)
    backend = _backend(api.url)
    request = build_request("coder", {"code_block": "x = 1", "plan": "use x = 2"}, effect_id="phase2/path-0/t0/k0/coder")
    result = anyio.run(backend.call, request, _ctx(tmp_path))
    assert isinstance(result, AgentCallCompleted), result
    assert result.cost_usd and result.cost_usd > 0
    assert len(api.message_calls()) == 2  # the CLI retried the 529 itself, inside the one call


def test_a_task_description_far_past_the_argument_limit_works(tmp_path, stand_in):
    api = stand_in(CannedModel())
    huge = "Column notes. " * 20_000  # ~280 KiB: more than one command-line argument may hold
    request = build_request("summarize", {"ablation_code": "print(1)", "raw_result": "a: 1"}, effect_id="phase2/path-0/t0/summarize")
    result = anyio.run(_backend(api.url).call, request, _ctx(tmp_path, description=huge))
    assert isinstance(result, AgentCallCompleted), result
    assert huge.strip() in api.message_calls()[0].system  # the whole description reached the model


def test_budget_reached_finalizes_gracefully_within_budget_plus_one_call(tmp_path, stand_in):
    api = stand_in(CannedModel())
    db = tmp_path / "runs" / "engine.db"
    budget = 0.45
    done = engine(["start", "--task", "iris", "--agent", "claude", "--preset", "quick", "--db", str(db),
                   "--run-id", "budget", "--max-budget", str(budget), "--json"], engine_env(api.url), timeout=900)
    summary = json.loads(done.stdout[done.stdout.index("{"):])
    assert summary["status"] == "completed" and summary["submission_path"], done.stderr[-2000:]
    log = events(db, "budget")
    assert any(e["type"] == "BudgetExhausted" for e in log)
    costs = [e["cost_usd"] or 0.0 for e in log if e["type"] in ("AgentCallCompleted", "AgentCallFailed")]
    assert summary["cost_usd"] <= budget + max(costs), (summary["cost_usd"], max(costs))


def test_sigkill_of_the_engine_mid_call_leaves_no_claude_process_and_resume_completes(tmp_path, stand_in):
    state = {"killed": False, "hanging": 0}

    def responder(exchange):
        prompt_text = "\n".join(exchange.user_texts())
        if not state["killed"] and "init" not in prompt_text and "Bash" in exchange.tool_names:
            if exchange.turn() == 0:  # a tool that starts a daemon, then a turn that never ends
                return Tools([ToolCall("Bash", {"command": "setsid nohup sleep 3017 > /dev/null 2>&1 &",
                                                "description": "background job"})])
            state["hanging"] += 1
            return Hang(120)
        return canned(exchange)

    canned = CannedModel()
    api = stand_in(responder)
    db = tmp_path / "runs" / "engine.db"
    env = engine_env(api.url)
    # the kill and the resume are the point, not the search: every phase, fewer calls to resume through
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "start", "--task", "iris", "--agent", "claude",
                             "--preset", "quick", "--db", str(db), "--run-id", "killed", *LEAN_RUN], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while state["hanging"] == 0 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert state["hanging"] > 0, "no call reached the hanging turn"
    assert _claude_processes(tmp_path), "the CLI should be running mid-call"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    state["killed"] = True
    for _ in range(100):  # the launcher notices its parent is gone and tears the tree down
        if not _claude_processes(tmp_path):
            break
        time.sleep(0.1)
    assert not _claude_processes(tmp_path), [p.info for p in _claude_processes(tmp_path)]

    resumed = engine(["resume", "killed", "--db", str(db), "--json"], env, timeout=900)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    log = events(db, "killed")
    assert log[-1]["type"] == "RunCompleted"
    lost = [e for e in log if e["type"] == "AgentSpendRecorded" and e["reason"] == "crashed"]
    assert lost and all(e["cost_usd"] is None for e in lost)
    assert REPO.exists()


def test_a_cancelled_call_reports_what_it_streamed_and_leaves_no_cli_behind(tmp_path, stand_in):
    """The engine cancels calls when a phase ends: the spend is reported (what the relay metered,
    the request still being answered at its most; the tokens streamed so far) and the CLI with its
    tools is gone."""
    state = {"hanging": 0}

    def responder(exchange):
        if exchange.turn() == 0:
            return Tools([ToolCall("Bash", {"command": "ls input", "description": "look"})])
        state["hanging"] += 1
        return Hang(60)

    api = stand_in(responder)
    backend = _backend(api.url)
    ctx = _ctx(tmp_path)
    reported: list[tuple[float | None, dict]] = []
    ctx = AgentContext(**{**ctx.__dict__, "on_abandoned": lambda cost, tokens: reported.append((cost, tokens))})
    request = build_request("coder", {"code_block": "x = 1", "plan": "use x = 2"}, effect_id="phase2/path-0/t0/k0/coder")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(backend.call, request, ctx)
            with anyio.fail_after(120):
                while state["hanging"] == 0:
                    await anyio.sleep(0.1)
            tg.cancel_scope.cancel()

    anyio.run(main)
    assert len(reported) == 1
    cost, tokens = reported[0]
    assert tokens["input_tokens"] > 0  # the first turn was streamed and counted
    first = api.served[0]["usage"]
    first_usd = (first["input_tokens"] * 3.0 + first["output_tokens"] * 15.0) / 1e6
    assert cost is not None and cost > first_usd + 0.4  # + the hanging request: its input, 32k tokens out
    for _ in range(100):
        if not _claude_processes(tmp_path):
            break
        time.sleep(0.1)
    assert not _claude_processes(tmp_path)
