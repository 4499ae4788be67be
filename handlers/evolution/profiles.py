"""Agent-level evolution (plan §5/§6 "agent_evo", decisions "Agent-level evolution").

``agent_profiles`` strategy texts (one paragraph per operator: draft, merge, mutate); step k
uses profile k mod n. Every ``profile_evolution_every`` global epochs (one counter across both
phases) each profile is scored = mean normalised fitness of its valid nodes × its valid-node
rate; the two best are elites (ties to the lower index); every other profile is rewritten by a
``profile_evolver`` call given its text, an elite's text (elites taken in turn) and its best
and worst nodes. A failed or empty rewrite keeps the old text. The new texts apply from the
next step on.
"""

from __future__ import annotations

from typing import Any

from events.core import AgentCallCompleted
from events.enums import MetricDirection
from events.evolution import ProfilesEvolved
from events.score import Score, Ties
from handlers.evolution.journal import FITNESS, Journal, Node
from handlers.evolution.prompts import profile_evolver_request
from handlers.workflow import Workflow

# Fitness ranked the other way round: its "best" is the least fit node (the profile's worst).
LEAST_FIT = Score(MetricDirection.minimize)

SEED_PROFILES: tuple[str, ...] = (
    "draft: start from gradient-boosted trees (histogram boosting in the LightGBM style) with a careful "
    "validation split.\nmerge: keep the primary parent's skeleton and take each planned gene verbatim.\n"
    "mutate: change one hyper-parameter of the target gene at a time, in small steps.",
    "draft: prefer random forest style bagged tree ensembles with robust defaults and simple, solid "
    "preprocessing.\nmerge: keep the primary parent's skeleton; make the planned genes fit its data flow.\n"
    "mutate: try a different technique for the target gene rather than a tiny tweak.",
    "draft: prefer linear models (logistic or ridge regression) on scaled and engineered features.\n"
    "merge: keep the primary parent's skeleton and reconcile feature names between genes.\n"
    "mutate: focus on feature engineering and regularisation strength.",
    "draft: prefer a small neural network (MLP) or a support vector machine on standardised features.\n"
    "merge: keep the primary parent's skeleton; keep the preprocessing each planned gene expects.\n"
    "mutate: make one bold change to the target gene to explore new ground.",
)
ELITES = 2


def seed_profiles(n: int) -> list[str]:
    out = []
    for i in range(n):
        text = SEED_PROFILES[i % len(SEED_PROFILES)]
        if i >= len(SEED_PROFILES):
            text += f"\n(variant {i // len(SEED_PROFILES) + 1}: explore settings the other profiles do not.)"
        out.append(text)
    return out


def profile_scores(journal: Journal, n: int) -> list[float]:
    pool = journal.valid_pool()
    fits = [p.fitness for p in pool if p.fitness is not None]
    lo, hi = (min(fits), max(fits)) if fits else (0.0, 0.0)

    def norm(node: Node) -> float:
        if node.fitness is None or hi == lo:
            return 0.5
        return (node.fitness - lo) / (hi - lo)

    scores = []
    for i in range(n):
        mine = [node for node in journal.nodes if node.event.profile == i]
        valid = [node for node in mine if node.valid]
        if not mine or not valid:
            scores.append(0.0)
            continue
        scores.append(sum(norm(v) for v in valid) / len(valid) * (len(valid) / len(mine)))
    return scores


def _node_brief(node: Node | None) -> dict[str, Any] | None:
    if node is None:
        return None
    return {"node": node.id, "operator": node.operator, "score": node.score, "approach_tag": node.approach_tag,
            "summary": node.event.summary[:300]}


async def evolve_profiles(wf: Workflow, journal: Journal, profiles: list[str], global_epoch: int) -> list[str]:
    """Score, pick elites, rewrite the rest; record ``ProfilesEvolved``; return the new texts."""
    n = len(profiles)
    scores = profile_scores(journal, n)
    ranking = FITNESS.ranked(scores)  # best first; equal profiles keep their order
    elites = sorted(ranking[:ELITES])
    others = [i for i in range(n) if i not in elites]
    calls = []
    plan: list[tuple[int, int, dict[str, Any]]] = []
    for j, i in enumerate(others):
        elite = ranking[j % min(ELITES, n)]
        mine = [node for node in journal.nodes if node.event.profile == i and node.valid and node.fitness is not None]
        best = FITNESS.best(mine, lambda x: x.fitness, Ties.FIRST_WINS)     # ties: the older node
        worst = LEAST_FIT.best(mine, lambda x: x.fitness, Ties.FIRST_WINS)  # ties: the older node
        stats = {"global_epoch": global_epoch, "profile": i, "score": round(scores[i], 6), "elite": elite,
                 "elite_score": round(scores[elite], 6),
                 "nodes": sum(1 for node in journal.nodes if node.event.profile == i),
                 "valid": len(mine), "best_node": _node_brief(best), "worst_node": _node_brief(worst)}
        plan.append((i, elite, stats))
        calls.append(wf.agent(profile_evolver_request(
            wf.effect_id(f"profiles/epoch-{global_epoch}/profile-{i}"), profile=profiles[i],
            elite_profile=profiles[elite], stats=stats)))
    replies = await wf.gather(*calls) if calls else []
    new = list(profiles)
    rewrites: dict[str, dict[str, Any]] = {}
    for (i, elite, _stats), reply in zip(plan, replies):
        text = (reply.text or "").strip() if isinstance(reply, AgentCallCompleted) else ""
        if text:
            new[i] = text
            reason = f"rewritten toward elite profile {elite}"
        else:
            reason = "the profile_evolver gave no text; profile kept"
        rewrites[str(i)] = {"elite": elite, "before": profiles[i], "after": new[i], "changed": new[i] != profiles[i],
                            "reason": reason}
    wf.record(ProfilesEvolved(global_epoch=global_epoch, scores=[round(s, 6) for s in scores], elites=elites,
                              rewrites=rewrites, profiles=new))
    return new
