"""Properties of Phase 2 over generated score landscapes and agent failures (hypothesis).

* h_best is monotone along every path, step by step, and the inner best only moves by >=;
* a path never returns a solution worse than the one it received;
* each path's decisions depend only on its own effects, never on how the paths' effects
  interleave (per-scope decision sequences compared across random completion orders).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from events.core import SolutionEvaluated
from events.phase2 import OuterStepCompleted, RefinementAttempted
from tests.phase2.helpers import Agents, config, failed, run_phase2_sim, where

SCORE = st.one_of(st.floats(min_value=0.0, max_value=1.0, allow_nan=False).map(lambda x: round(x, 3)),
                  st.sampled_from(["FAIL", "NONE"]))


@st.composite
def landscapes(draw):
    T, K, L = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    scores = draw(st.lists(SCORE, min_size=L * T * K, max_size=L * T * K))
    flaky = draw(st.lists(st.sampled_from(["ok", "ok", "ok", "bad-extractor", "bad-planner", "bad-coder",
                                           "bad-debugger", "bad-ablation"]), min_size=L * T, max_size=L * T))
    return {"T": T, "K": K, "L": L, "scores": scores, "flaky": flaky,
            "direction": draw(st.sampled_from(["maximize", "minimize"])),
            "initial": draw(st.floats(0.0, 1.0).map(lambda x: round(x, 3)))}


def agents_for(land) -> Agents:
    T, K = land["T"], land["K"]

    def mode(req) -> str:
        p, t, _ = where(req)
        return land["flaky"][p * T + t]

    def score(p, t, k):
        return land["scores"][(p * T + t) * K + k]

    # Every answer is a function of the request only (effect id, variables): order-independent.
    return Agents(
        score=score,
        extractor=lambda r: failed() if mode(r) == "bad-extractor" else None,
        planner=lambda r: "" if mode(r) == "bad-planner" else None,
        coder=lambda r: failed() if mode(r) == "bad-coder" and where(r)[2] % 2 == 0 else None,
        debugger=lambda r: failed() if mode(r) == "bad-debugger" else None,
        ablation=lambda r: "```python\nABLATION_FAIL\n```" if mode(r) == "bad-ablation" else None,
    )


def better_eq(a: float, b: float, direction: str) -> bool:
    return a >= b if direction == "maximize" else a <= b


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(landscapes())
def test_h_best_monotone_and_never_worse_than_input(land):
    cfg = config(T=land["T"], K=land["K"], L=land["L"], max_debug_attempts=1)
    run, results = run_phase2_sim(agents_for(land), cfg=cfg, direction=land["direction"], initial=land["initial"])
    d, h0 = land["direction"], land["initial"]
    assert len(results) == land["L"]
    for i, res in enumerate(results):
        scope = f"phase2/path-{i}"
        steps = [e for s, e in run.events if s == scope and isinstance(e, OuterStepCompleted)]
        assert len(steps) == land["T"] == len(res.step_history)
        trail = [h0] + [e.best_score_after_step for e in steps]
        assert all(better_eq(b, a, d) for a, b in zip(trail, trail[1:]))            # REQ-P2O-041
        assert better_eq(res.best_score, h0, d) and res.best_score == trail[-1]      # REQ-P2O-028
        for step in res.step_history:
            assert len(step["inner_loop_attempts"]) in (0, land["K"])                # REQ-P2I-048
        attempts = [e for s, e in run.events if s == scope and isinstance(e, RefinementAttempted)]
        for a in attempts:
            assert not a.was_improvement or a.score is not None                      # REQ-P2I-027
        if res.best_score != h0 or res.best_solution.content != results[i].best_solution.content:
            # The kept solution is one that was evaluated with exactly that score.
            evaluated = {e.solution_id: e.score for s, e in run.events if s == scope and isinstance(e, SolutionEvaluated)}
            assert evaluated.get(res.best_solution.solution_id) == res.best_score


def per_scope_decisions(run) -> dict[str, list]:
    out: dict[str, list] = {}
    for scope, ev in run.events:
        if scope.startswith("phase2/path-") and ev.kind in ("decision", "remark"):
            out.setdefault(scope, []).append((ev.type_name, ev.payload()))
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(landscapes().filter(lambda land: land["L"] == 2), st.lists(st.integers(0, 10_000), min_size=2, max_size=3))
def test_path_decisions_do_not_depend_on_interleaving(land, order_seeds):
    cfg = config(T=land["T"], K=land["K"], L=2, max_debug_attempts=1)
    base_run, base_results = run_phase2_sim(agents_for(land), cfg=cfg, direction=land["direction"],
                                            initial=land["initial"])
    expected = per_scope_decisions(base_run)
    assert set(expected) == {"phase2/path-0", "phase2/path-1"}
    for seed in order_seeds:
        run, results = run_phase2_sim(agents_for(land), cfg=cfg, direction=land["direction"],
                                      initial=land["initial"], order_seed=seed)
        assert per_scope_decisions(run) == expected
        assert [r.best_score for r in results] == [r.best_score for r in base_results]
