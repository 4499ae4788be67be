"""SIGKILL of the engine in the middle of an openai call, then ``engine resume`` (issue 18).

The stand-in holds the answer to one call open; the test kills the engine's whole process group
(SIGKILL) while that call waits, then resumes. Through the driver's ``ENGINE_EFFECT_TRACE`` hook
it proves that no call whose result was recorded before the kill runs again, that the cut call
runs again, that its lost spend is recorded, and that the run completes with a valid submission.
REQ-OR-015/016 (exact resume), REQ-OR-028 (spend).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from tests.openai_backend.canned_chat import CannedChatModel
from tests.openai_backend.chat_api import Exchange, Reply, Text
from tests.openai_backend.conftest import FAKE_KEY, PRICES, engine, engine_env, events, summary_of
from tests.support.shared_runs import LEAN_RUN

pytestmark = pytest.mark.slow

HOLD_AT = 7  # the seventh agent call (the first of Phase 2 on the leanest quick preset) is held open


class HoldOneCall:
    def __init__(self, model: CannedChatModel) -> None:
        self.model = model
        self.reached = threading.Event()
        self.release = threading.Event()
        self.held_effect = ""
        self._count = 0
        self._lock = threading.Lock()

    def __call__(self, exchange: Exchange) -> Reply:
        with self._lock:
            first_turn = exchange.turn() == 0 and "ready" not in exchange.user_texts()[0][-40:]
            if first_turn:
                self._count += 1
            hold = first_turn and self._count == HOLD_AT and not self.reached.is_set()
        if hold:
            from tests.openai_backend.canned_chat import effect_of

            self.held_effect = effect_of(exchange)
            self.reached.set()
            self.release.wait(120)
            return Text("too late: the engine that asked is gone")
        return self.model(exchange)


def _trace(path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_resume_after_sigkill_mid_call_repeats_no_recorded_call(tmp_path, stand_in):
    responder = HoldOneCall(CannedChatModel())
    api = stand_in(responder, expected_key=FAKE_KEY)
    db = tmp_path / "runs" / "engine.db"
    first_trace, second_trace = tmp_path / "trace-1.txt", tmp_path / "trace-2.txt"
    env = engine_env(api.url, ENGINE_EFFECT_TRACE=str(first_trace))
    args = ["start", "--task", "iris", "--agent", "openai", "--preset", "quick", "--db", str(db), "--run-id", "oa-kill",
            "--set", f"model_prices={PRICES}", "--json", *LEAN_RUN]  # the kill and resume are the point, not the search
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert responder.reached.wait(300), "the engine never reached the held call"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        responder.release.set()
    assert proc.returncode == -signal.SIGKILL
    before = events(db, "oa-kill")
    recorded = {e["effect_id"] for e in before if e["type"] in ("AgentCallCompleted", "AgentCallFailed")}
    held = responder.held_effect
    assert held and held not in recorded and held in _trace(first_trace)
    assert recorded  # calls finished before the kill: the check below means something

    resumed = engine(["resume", "oa-kill", "--db", str(db), "--json"], {**env, "ENGINE_EFFECT_TRACE": str(second_trace)})
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert summary_of(resumed.stdout)["status"] == "completed"
    ran_again = set(_trace(second_trace))
    assert not (recorded & ran_again), sorted(recorded & ran_again)
    assert held in ran_again  # the call cut by the kill is asked again
    after = events(db, "oa-kill")
    assert after[:len(before)] == before  # the log before the kill is untouched
    assert any(e["type"] == "AgentSpendRecorded" and e["reason"] == "crashed" and e["effect_id"] == held for e in after)
    failed = [e["error"][:200] for e in after if e["type"] == "AgentCallFailed"]
    assert not failed, failed
    graded = engine(["grade", "oa-kill", "--db", str(db), "--json"], env)
    assert graded.returncode == 0 and summary_of(graded.stdout)["valid_submission"], graded.stdout + graded.stderr
