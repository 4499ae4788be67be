"""Phase 2 roles: ablation, summarize, extractor, coder, planner (Algorithm 2)."""

from __future__ import annotations

import json
import re
from typing import Any

from engine.agents.builtin.ablation_variants import (
    CAPACITY_STEP,
    COMPONENT_LOCUS,
    TEXT_COMPONENT,
    ablation_variant,
    capacity_moves,
    weaker_regularization,
)
from engine.agents.builtin.call import Call, CannotAnswer, Reply, as_float, block_reply, code_reply, require_spec
from engine.agents.builtin.coordinate_search import (
    ADD_MEMBER,
    DROP_MEMBERS,
    Dim,
    apply_changes,
    dimensions,
    parse_changes,
    partners,
    plan_text,
    propose,
)
from engine.agents.builtin.render import render_ablation, render_section
from engine.agents.builtin.render_data import FEATURE_OPTIONS
from engine.agents.builtin.spec import GENE_KEY, LABEL_METRICS, MARKER_RE, parse_gene_block, section_block
from events.score import Ties

NO_EFFECT = 1e-9       # relative score change below which a variant changed nothing
# Plans in a row on one block that scored alike: its settings do not reach the score here
# (football-goals at 600 s: a weighted blend gave its booster no weight, and the paths spent a
# third of their runs on its settings, 68 of 205 scoring a score seen before). Not on a metric
# that counts labels, where different models often tie.
INERT_PLANS = 3
# Every first ablation studies model capacity (``ablation``), whatever the path: its finding is
# the one parallel paths share; the other components each path draws at random.
ALWAYS_STUDIED = "model_capacity"
ABLATION_LINE = re.compile(r"^ABLATION (\S+) \| (.*?) \| \w+=([-+\d.eE]+|nan)\s*$", re.M)


def ablation(call: Call) -> Reply:
    """{solution_script, previous_ablations} -> a study varying 2-3 components not studied before."""
    spec = require_spec(call.text_var("solution_script"), "ablation")
    previous = " ".join(str(p) for p in call.list_var("previous_ablations")).lower()
    names = [name for name in COMPONENT_LOCUS if name != TEXT_COMPONENT or spec["data"].get("text")]
    call.rng("ablation").shuffle(names)
    # Untried components first; among them model capacity, the setting that most often decides
    # a booster's score (and whose ablation tells the extractor which way to move it).
    names.sort(key=lambda name: (name in previous, name != ALWAYS_STUDIED))
    chosen: list[tuple[str, str, dict[str, Any]]] = []
    loci: set[str] = set()
    for prefer_new_locus in (True, False):
        for name in names:
            if len(chosen) == 3 or any(c[0] == name for c in chosen):
                continue
            if prefer_new_locus and COMPONENT_LOCUS[name] in loci:
                continue
            variant = ablation_variant(spec, name)
            if variant is not None and variant[1] != spec:
                chosen.append((name, variant[0], variant[1]))
                loci.add(COMPONENT_LOCUS[name])
    if len(chosen) < 2:
        raise CannotAnswer("builtin ablation: fewer than two components of this solution can be varied")
    variants = [("baseline", "solution as is", spec)] + chosen
    return code_reply(render_ablation(spec, variants),
                      "Ablation over " + ", ".join(c[0] for c in chosen) + ".")


def moved_nothing(before: float, after: float) -> bool:
    """A change of score too small to be the change's doing (``NO_EFFECT``)."""
    return abs(after - before) <= NO_EFFECT * max(1.0, abs(before))


def summarize(call: Call) -> Reply:
    """{ablation_code, raw_result} -> which component matters most, read from the printed scores."""
    raw = call.text_var("raw_result")
    rows = [(m.group(1), m.group(2), as_float(m.group(3))) for m in ABLATION_LINE.finditer(raw)]
    if not rows or rows[0][0] != "baseline" or rows[0][2] is None:
        tail = raw.strip().splitlines()[-5:]
        return Reply(text="The ablation study printed no readable scores, so no component can be ranked. "
                          "Last output lines: " + " / ".join(tail))
    base = rows[0][2]
    lines = [f"Baseline {call.metric}: {base:.6f} ({'higher' if call.score_rule.maximize else 'lower'} is better)."]
    effects = []
    for name, description, score in rows[1:]:
        if score is None:
            lines.append(f"- [component: {name}] {description}: the variant failed to score.")
            continue
        delta = score - base
        if moved_nothing(base, score):
            lines.append(f"- [component: {name}] {description}: {score:.6f} ({delta:+.6f}); "
                         "the change has no measurable effect.")
            continue
        hurt = call.score_rule.improves(base, score)
        verdict = "hurts, so the current setting matters" if hurt else "helps, so this is worth changing"
        lines.append(f"- [component: {name}] {description}: {score:.6f} ({delta:+.6f}); the change {verdict}.")
        effects.append((abs(delta), name, hurt))
    if effects:
        size, name, hurt = max(effects)
        lines.append(f"Most impactful component: {name} (|change| {size:.6f}); "
                     f"{'keep' if hurt else 'revise'} the {COMPONENT_LOCUS.get(name, 'related')} settings first.")
    return Reply(text="\n".join(lines))


def _mini_spec(call: Call, locus: str, gene: dict[str, Any]) -> dict[str, Any]:
    """Enough of a spec to render one section (a section depends only on its gene and the task)."""
    spec = {"kind": call.kind, "metric": call.metric, "seed": call.ctx.seed, "title": "", GENE_KEY[locus]: gene}
    return spec | ({"targets": list(call.targets)} if len(call.targets) > 1 else {})


def render_gene(call: Call, locus: str, gene: dict[str, Any]) -> str:
    return render_section(_mini_spec(call, locus, gene), locus)


def _evidence(summary: str) -> list[tuple[str, str]]:
    """(component, direction) pairs the ablation summary gives a reason to revisit, largest
    score change first: a change that helped (make it), and smaller models or stronger
    regularisation that hurt (so try larger models or weaker regularisation, the other way along
    the same settings)."""
    found = []
    for component, delta, verdict in re.findall(
            r"\[component: (\w+)\][^\n]*\(([-+][\d.eE+-]+)\); the change (helps|hurts)", summary):
        if component not in COMPONENT_LOCUS:   # a summary from another agent may name anything
            continue
        if verdict == "helps":
            found.append((abs(float(delta)), component, "as studied"))
        elif component == "model_capacity":
            found.append((abs(float(delta)), component, "larger"))
        elif component == "regularization":
            found.append((abs(float(delta)), component, "weaker"))
    return [(component, direction) for _, component, direction in sorted(found, reverse=True)]


def _plan_from_evidence(spec: dict[str, Any], locus: str, dims: list[Dim],
                        evidence: list[tuple[str, str]]) -> tuple[dict[str, Any], str] | None:
    """The first change the ablation gives a reason for in this block, with that reason."""
    for component, direction in evidence:
        if COMPONENT_LOCUS[component] != locus:
            continue
        changes: dict[str, Any] | None
        if direction == "larger":
            changes = capacity_moves(spec["model"]["members"], CAPACITY_STEP)
            reason = "Smaller models scored worse, so larger ones may score better."
        elif direction == "weaker":
            changes = weaker_regularization(spec.get("reg") or {})
            reason = "Stronger regularisation scored worse, so weaker may score better."
        else:
            changes = studied_changes(spec, component, locus, dims)
            reason = f"The ablation's {component.replace('_', ' ')} change scored better; this plan makes it."
        if changes:
            return changes, reason
    return None


def studied_changes(spec: dict[str, Any], component: str, locus: str, dims: list[Dim]) -> dict[str, Any] | None:
    """The ablation's own variant of ``component`` as a change-set of the ``locus`` block, when
    the block's settings can express it (in MODEL, dropping members too: ``DROP_MEMBERS``)."""
    variant = ablation_variant(spec, component)
    if variant is None:
        return None
    changes = _gene_diff(locus, spec[GENE_KEY[locus]], variant[1][GENE_KEY[locus]])
    by_key = {d.key: d for d in dims}
    if not changes or any(k != DROP_MEMBERS and (k not in by_key or v not in by_key[k].values)
                          for k, v in changes.items()):
        return None
    return changes


def _gene_diff(locus: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` relative to ``old`` in the keys ``search.dimensions`` uses for this block."""
    if locus == "DATA":
        changes = {f"prep.{k}": v for k, v in new["prep"].items() if old["prep"].get(k) != v}
        before, after = set(old.get("features", [])), set(new.get("features", []))
        changes.update({f"feature.{f}": f in after for f in FEATURE_OPTIONS if (f in before) != (f in after)})
        was = old.get("text") or {}
        changes.update({f"text.{k}": v for k, v in (new.get("text") or {}).items() if was.get(k) != v})
        return changes
    if locus == "MODEL":
        was = {m["name"]: m["params"] for m in old["members"]}
        moved = {f"{m['name']}.{p}": v for m in new["members"] if m["name"] in was
                 for p, v in m["params"].items() if was[m["name"]].get(p) != v}
        kept = [m["name"] for m in new["members"]]
        dropped = [name for name in was if name not in kept]
        return {**moved, DROP_MEMBERS: dropped} if dropped else moved
    if locus == "REGULARIZATION":
        return {f"{name}.{p}": v for name, params in new.items() for p, v in (params or {}).items()
                if (old.get(name) or {}).get(p) != v}
    return {k: v for k, v in new.items() if old.get(k) != v}


def _varied(planned: tuple[dict[str, Any], str], dims: list[Dim], call: Call) -> tuple[dict[str, Any], str] | None:
    """The evidence's change plus one move of another setting of the block, chosen by this
    path's own random stream; None when the block has no other setting to move."""
    changes, reason = planned
    others = [d for d in dims if d.key not in changes]
    # The evidence's change as the only scored plan makes it the incumbent; propose then moves
    # one of the other settings from it (the score's value is never compared with anything).
    varied = propose(others, [(changes, 0.0)], call.score_rule, call.rng("varied"))
    if not varied:
        return None
    return varied, reason + " A parallel path acts on the same finding, so this one also moves another setting."


def _rotate(items: list[Any], shift: int) -> list[Any]:
    return items[shift % len(items):] + items[:shift % len(items)] if items else items


def _last_refined(previous: list[str], block: str | None) -> int:
    """-1 when ``block`` was never refined as it stands, else the latest step that refined it."""
    text = (block or "").strip()
    return max((i for i, b in enumerate(previous) if text and b.strip() == text), default=-1)


def extractor(call: Call) -> Reply:
    """{solution_script, ablation_summary, previous_code_blocks} -> a verbatim block and a plan."""
    script = call.text_var("solution_script")
    spec = require_spec(script, "extractor")
    summary = call.text_var("ablation_summary")
    previous = [str(b) for b in call.list_var("previous_code_blocks")]
    done = {m.group(1) for b in previous for m in MARKER_RE.finditer(b)}
    named = re.search(r"Most impactful component: (\w+)", summary)
    evidence = _evidence(summary)
    # Parallel refinement paths should explore different parts of the solution, as L
    # independent engineers would, each acting on evidence before exploring blindly. Path 0
    # acts on its largest finding. A path above it puts the finding every path shares (model
    # capacity) after its own (zip-state at 600 s: path 1's study found row statistics worth
    # +0.2 %, path 0's never looked at them, and path 1 rotated past them to the capacity move
    # path 0 was making), and path i starts i - 1 places down that list.
    path = re.search(r"path-(\d+)", call.effect_id)
    shift = int(path.group(1)) if path else 0
    if shift:
        evidence = sorted(evidence, key=lambda found: found[0] == ALWAYS_STUDIED)
    with_evidence = list(dict.fromkeys(COMPONENT_LOCUS[c] for c, _ in evidence))
    pointed = with_evidence + ([COMPONENT_LOCUS[named.group(1)]] if named and named.group(1) in COMPONENT_LOCUS else [])
    rest = ["MODEL", "REGULARIZATION", "DATA", "LOSS"] + (["TRAINING_TRICKS"] if len(spec["model"]["members"]) > 1 else [])
    pointed = list(dict.fromkeys(pointed))
    # Past the end of the blocks with evidence, this path's first choice is one a lower path also
    # makes from the same findings: acting on them alike would give both paths one script, and
    # Phase 3 nothing to ensemble. The most impactful component alone is no evidence (a change
    # that hurt says "keep it"): counting its block let two paths write one script for a whole
    # outer step (industry-unemployment at 120 s: both made the same eight capacity moves).
    shares_evidence = shift >= len(with_evidence) > 0
    pointed = _rotate(pointed, max(0, shift - 1))
    order = pointed + _rotate([locus for locus in rest if locus not in pointed], shift)
    # Blocks not improved before come first, unless this study measured a gain in them: evidence
    # beats novelty (industry-unemployment at 120 s: path 1's second study found native categories
    # worth -45 RMSE, but its DATA block had been improved before, so it went to the capacity moves
    # path 0 had made in its first step and scored the same scripts again).
    # Before all that, a block this path already refined, word for word as it stands now, goes
    # last whatever the study says, the one refined longest ago first: its search from this text
    # ran and nothing beat it, so a new step there repeats that search (bike-sharing at 600 s: path
    # 0 refined one LOSS block six times, each step an ablation run of 17 s for three plans it had
    # already scored).
    helped = {COMPONENT_LOCUS[c] for c, direction in evidence if direction == "as studied"}
    order.sort(key=lambda locus: (_last_refined(previous, section_block(script, locus)),
                                  locus in done and locus not in helped))
    first_choice = pointed[0] if shares_evidence else None
    for locus in order:
        reply = _plan_for_block(call, script, spec, locus, evidence, named, varies=locus == first_choice)
        if reply is not None:
            return reply
    raise CannotAnswer("builtin extractor: no section of this script has a setting left to change")


def _plan_for_block(call: Call, script: str, spec: dict[str, Any], locus: str, evidence: list[tuple[str, str]],
                    named: re.Match[str] | None, *, varies: bool) -> Reply | None:
    """The extractor's answer for one block: its text and a plan, from the study's evidence where it
    points here (``varies``: moved apart from a lower path acting on the same finding), else the
    coordinate search's first move; None when the block has nothing left to change."""
    block = section_block(script, locus)
    parsed = parse_gene_block(block or "")
    if block is None or parsed is None:
        return None
    dims = dimensions(locus, parsed[1], call.kind)
    pointing = ", ".join(c for c, _ in evidence[:2]) or (named.group(1) if named else "")
    why = f"The ablation summary points at {pointing}." if pointing else ""
    planned = _plan_from_evidence(spec, locus, dims, evidence)
    if planned and varies:
        planned = _varied(planned, dims, call)
        if planned is None:     # nothing else to move here: explore the next block
            return None
    changes: dict[str, Any] | None
    if planned:
        changes, reason = planned
        why += " " + reason
    else:
        changes = propose(dims, [], call.score_rule, call.rng(locus))
    if not changes:
        return None
    structured = {"plans": [{"code_block": block, "plan": plan_text(locus, dims, changes, why)}]}
    return Reply(text=json.dumps(structured, indent=2), structured=structured)


def _block_gene(call: Call, block: str, role: str) -> tuple[str, dict[str, Any]]:
    parsed = parse_gene_block(block or "")
    if parsed is None:
        raise CannotAnswer(f"builtin {role}: the code block is not a builtin gene section "
                           "(no '# [SECTION: X]' marker with a '# builtin-gene:' line)")
    return parsed


def coder(call: Call) -> Reply:
    """{code_block, plan} -> the block rewritten with the plan's settings."""
    block = call.text_var("code_block")
    locus, gene = _block_gene(call, block, "coder")
    dims = dimensions(locus, gene, call.kind)
    changes = parse_changes(call.text_var("plan"), dims)
    if not changes:
        raise CannotAnswer("builtin coder: the plan names no setting of this block it can change "
                           f"(settings: {', '.join(d.key for d in dims)})")
    try:
        new_gene = apply_changes(locus, gene, changes, call.kind)
    except ValueError as exc:
        raise CannotAnswer(f"builtin coder: {exc}") from None
    return block_reply(render_gene(call, locus, new_gene),
                       f"Applied: {json.dumps(changes, sort_keys=True)}")


def _inert(history: list[tuple[dict[str, Any] | None, float | None]]) -> bool:
    """The last INERT_PLANS scored plans scored alike (``moved_nothing``) and moved more than one
    setting between them. One setting alone may be inert where the others are not (a booster's
    tree count under early stopping)."""
    scored = [(changes or {}, score) for changes, score in history if score is not None][-INERT_PLANS:]
    moved = {key for changes, _ in scored for key in changes}
    return (len(scored) == INERT_PLANS and len(moved) > 1
            and all(moved_nothing(scored[0][1], score) for _, score in scored[1:]))


def planner(call: Call) -> Reply:
    """{code_block, plans, scores} -> the next plan of a coordinate search over the block."""
    block = call.text_var("code_block")
    locus, gene = _block_gene(call, block, "planner")
    dims = dimensions(locus, gene, call.kind)
    plans = [str(p) for p in call.list_var("plans")]
    scores = [as_float(s) for s in call.list_var("scores")]
    history = [(parse_changes(p, dims), scores[i] if i < len(scores) else None) for i, p in enumerate(plans)]
    if call.metric not in LABEL_METRICS and _inert(history):
        raise CannotAnswer(f"builtin planner: the last {INERT_PLANS} plans on this block, moving different "
                           "settings, all scored alike: its settings do not reach the score here")

    def wider() -> list[dict[str, Any]]:
        return [{ADD_MEMBER: key} for key in partners(gene, call.kind, call.classes)]

    changes = propose(dims, history, call.score_rule, call.rng("planner"), wider if locus == "MODEL" else None)
    if not changes:
        raise CannotAnswer("builtin planner: every setting of this block near the best plan was tried")
    best = call.score_rule.best((s for _, s in history), lambda s: s, Ties.FIRST_WINS)
    context = ""
    if best is not None:
        context = f"Best score so far {best:.6f} over {len(history)} plans; moving one setting from the best plan."
    return Reply(text=plan_text(locus, dims, changes, context))
