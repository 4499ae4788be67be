"""Evolution roles: draft, merge (gene substitution), mutate (one locus), review, profile_evolver.

The variable names of these roles are provisional; ``EVO_VARS`` keeps every name this module
reads in one place so they are easy to adapt when the evolution handlers settle theirs.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from engine.agents.builtin.call import Call, CannotAnswer, Reply, as_float, code_reply
from engine.agents.builtin.catalog import FAMILIES, PREFERENCE
from engine.agents.builtin.coordinate_search import MAX_MEMBERS, apply_changes, dimensions, new_member
from engine.agents.builtin.image_task import with_images
from engine.agents.builtin.refinement import render_gene
from engine.agents.builtin.render import approach_tag, new_spec, render_solution, with_families
from engine.agents.builtin.render_data import FEATURE_OPTIONS
from engine.agents.builtin.search_rows import search_rows
from engine.agents.builtin.spec import (
    GENE_KEY,
    LOCI,
    STUB_LOCI,
    join_sections,
    parse_gene_block,
    parse_spec,
    section_block,
    split_sections,
    strip_marker,
)
from engine.agents.builtin.text_task import with_text

EVO_VARS = {
    "history": ("draft_history", "history"),
    "profile": ("profile", "agent_profile", "profile_text"),
    "primary": ("primary_code", "primary_parent_code", "code"),
    "plan": ("gene_plan", "genes"),
    "code": ("code", "parent_code"),
    "locus": ("target_locus", "locus", "target_gene"),
    "output": ("output", "stdout", "execution_output"),
    "stats": ("stats", "statistics"),
    "elite": ("elite_profile", "elite"),
}
PROFILE_RE = re.compile(r"\[builtin-profile: (\{.*?\})\]")
SCORE_RE = re.compile(r"Final Validation Performance:\s*([-+\d.eE]+|nan|inf)", re.I)
UNIT_RANGE = {"roc_auc", "accuracy", "balanced_accuracy", "f1"}


def families_in(text: str) -> list[str]:
    """Families a free text mentions, in the order it mentions them."""
    low = text.lower().replace("-", " ")
    first: dict[str, int] = {}
    for key, family in FAMILIES.items():
        words = (key, key.replace("_", " "), family.tag.lower()) + family.keywords
        spots = [low.find(w) for w in words if w in low]
        if spots:
            first[key] = min(spots)
    if "hist_gradient_boosting" in first and "gradient_boosting" in first and not re.search(
            r"(?<!hist )(?<!hist_)gradient[ _]boosting", low):
        del first["gradient_boosting"]     # "hist gradient boosting" is not plain GBM
    if "lightgbm" in first and "hist_gradient_boosting" in first and "hist" not in low:
        del first["hist_gradient_boosting"]  # its keywords name LightGBM only as the fallback
    return sorted(first, key=lambda k: first[k])


def read_profile(text: str) -> dict[str, Any]:
    """Preferences in a profile: our JSON tag, else the families its draft line names and how
    bold its mutate line is (the evolution's seed profiles are plain prose)."""
    m = PROFILE_RE.search(text or "")
    if m:
        try:
            return json.loads(m.group(1))
        except ValueError:
            pass
    lines = (text or "").splitlines()
    draft_line = next((line for line in lines if line.lower().startswith("draft")), text or "")
    mutate_line = next((line for line in lines if line.lower().startswith("mutate")), "").lower()
    out: dict[str, Any] = {}
    fams = families_in(draft_line)
    if fams:
        out["families"] = fams
    if mutate_line:
        out["strength"] = 2 if any(w in mutate_line for w in ("bold", "different technique", "explore")) else 1
    return out


def _history_tags(call: Call) -> list[str]:
    tags = []
    for item in call.list_var(*EVO_VARS["history"]):
        if isinstance(item, dict):
            tags.append(str(item.get("approach_tag", "")))
        elif isinstance(item, (list, tuple)):
            tags.append(" ".join(str(x) for x in item))
        else:
            tags.extend(str(item).splitlines())
    return [t for t in tags if t.strip()]


def draft(call: Call) -> Reply:
    """{task_description, draft_history} -> a solution whose approach is not in the history yet."""
    rng = call.rng("draft")
    profile = read_profile(call.text_var(*EVO_VARS["profile"]))
    order = [f for f in profile.get("families", []) if f in FAMILIES]
    order += [f for f in PREFERENCE[call.kind] if f not in order]
    tags = _history_tags(call)
    used_single = {fams[0] for fams in (families_in(t) for t in tags) if len(fams) == 1}
    used_tags = {t.split("→")[0].split("->")[0].strip().lower() for t in tags}
    untried = [f for f in order if f not in used_single]
    base_family = FAMILIES[(untried or order)[0]]
    spec = new_spec(call.kind, call.metric, call.ctx.seed, search_rows(call.ctx.config), base_family,
                    call.targets)
    if untried:
        pick = untried[rng.randrange(min(2, len(untried)))]
        spec = new_spec(call.kind, call.metric, call.ctx.seed, search_rows(call.ctx.config), FAMILIES[pick],
                        call.targets)
    else:
        # Every single family was drafted: try a two-family blend with a seeded variation.
        for _ in range(30):
            pair = rng.sample(order[:5], 2)
            candidate = with_families(spec, [FAMILIES[k] for k in pair])
            candidate["train"]["combine"] = rng.choice(["mean", "weighted"])
            if rng.random() < 0.5:
                extra = rng.choice(FEATURE_OPTIONS)
                candidate["data"]["features"] = [f for f in FEATURE_OPTIONS
                                                  if f == extra or f in candidate["data"]["features"]]
            if approach_tag(candidate).lower() not in used_tags:
                spec = candidate
                break
    spec = with_text(with_images(spec, call.ctx.task_dir), call.ctx.task_dir)
    spec["title"] = "Draft: " + approach_tag(spec)
    return code_reply(render_solution(spec), f"Approach: {approach_tag(spec)} (not in the draft history).")


def _plan_code(entry: Any) -> str:
    if isinstance(entry, dict):
        return str(entry.get("code", entry.get("body", "")))
    return str(entry)


def merge(call: Call) -> Reply:
    """{primary_code, gene_plan} -> the primary parent with the planned sections substituted."""
    primary = call.text_var(*EVO_VARS["primary"])
    plan = call.var(*EVO_VARS["plan"], default={}) or {}
    sections = split_sections(primary)
    if not sections.valid:
        raise CannotAnswer("builtin merge: the primary parent does not carry the seven gene markers")
    if not isinstance(plan, dict):
        raise CannotAnswer("builtin merge: gene_plan is not a mapping of locus -> section")
    bodies = dict(sections.bodies)
    taken = []
    for locus, entry in plan.items():
        if locus not in LOCI:
            raise CannotAnswer(f"builtin merge: unknown locus {locus!r} in the gene plan")
        bodies[locus] = strip_marker(_plan_code(entry))
        source = entry.get("source") if isinstance(entry, dict) else None
        taken.append(f"{locus}<-{source}" if source else locus)
    return code_reply(join_sections(sections.preamble, bodies), "Merged genes: " + ", ".join(taken) + ".")


def mutate(call: Call) -> Reply:
    """{code, target_locus} -> the same script with only that gene's section changed."""
    code = call.text_var(*EVO_VARS["code"])
    locus = str(call.var(*EVO_VARS["locus"], default="")).upper()
    if locus in STUB_LOCI:
        raise CannotAnswer(f"builtin mutate: {locus} does not apply to these scikit-learn models (stub gene)")
    block = section_block(code, locus) if locus in GENE_KEY else None
    parsed = parse_gene_block(block or "")
    if block is None or parsed is None:
        raise CannotAnswer(f"builtin mutate: section {locus!r} is missing or carries no builtin gene")
    gene = parsed[1]
    rng = call.rng("mutate")
    strength = int(read_profile(call.text_var(*EVO_VARS["profile"])).get("strength", 1))
    new_gene = gene
    if locus == "MODEL" and len(gene["members"]) < MAX_MEMBERS and rng.random() < 0.25:
        present = {m["family"] for m in gene["members"]}
        spare = [f for f in PREFERENCE[call.kind] if f not in present]
        family = FAMILIES[rng.choice(spare[:4])]
        new_gene = {**gene, "members": gene["members"] + [new_member(gene, family.key, call.kind)]}
        what = f"added a {family.title.lower()} member"
    else:
        dims = dimensions(locus, gene, call.kind)
        if not dims:
            raise CannotAnswer(f"builtin mutate: section {locus} has no setting to change")
        changes: dict[str, Any] = {}
        for dim in rng.sample(dims, k=min(len(dims), max(1, strength))):
            options = [v for v in dim.values if v != dim.current]
            if dim.ordered:
                pos = dim.index
                options = [dim.values[i] for i in (pos - 1, pos + 1, pos + 2) if 0 <= i < len(dim.values)]
            changes[dim.key] = rng.choice(options)
        new_gene = apply_changes(locus, gene, changes)
        what = ", ".join(f"{k}={json.dumps(v)}" for k, v in changes.items())
    return code_reply(code.replace(block, render_gene(call, locus, new_gene), 1), f"Mutated {locus}: {what}.")


def _generic_tag(code: str) -> str:
    names = sorted(set(re.findall(r"\b(\w+(?:Classifier|Regressor|Regression|SVC|SVR))\(", code)))
    return " + ".join(names) or "unknown approach"


def review(call: Call) -> Reply:
    """{code, output} -> approach tag, summary and whether the run looks buggy (never a new score)."""
    code = call.text_var(*EVO_VARS["code"])
    output = call.text_var(*EVO_VARS["output"])
    spec = parse_spec(code)
    tag = approach_tag(spec) if spec else _generic_tag(code)
    found = SCORE_RE.findall(output)
    score = as_float(found[-1]) if found else None
    problems = []
    if "Traceback (most recent call last)" in output:
        problems.append("the run raised an exception")
    if score is None:
        problems.append("no parseable 'Final Validation Performance' line")
    elif math.isinf(score) or (call.metric in UNIT_RANGE and not 0 <= score <= 1) or (
            call.metric in ("rmse", "mse", "mae", "logloss", "rmsle") and score < 0):
        problems.append(f"implausible {call.metric} {score}")
    summary = f"{tag}; validation {call.metric} = {score if score is not None else 'n/a'}"
    members = re.findall(r"Member (\S+): validation \S+ = ([-\d.eE]+)", output)
    if members:
        summary += "; members: " + ", ".join(f"{n} {v}" for n, v in members)
    if problems:
        summary += "; problems: " + "; ".join(problems)
    structured = {"approach_tag": tag, "summary": summary, "is_buggy": bool(problems)}
    return Reply(text=json.dumps(structured), structured=structured)


def profile_evolver(call: Call) -> Reply:
    """{profile, stats} -> the profile moved toward an elite's preferences with a seeded nudge."""
    own = read_profile(call.text_var(*EVO_VARS["profile"]))
    stats = call.var(*EVO_VARS["stats"], default={}) or {}
    elite_text = call.text_var(*EVO_VARS["elite"]) or (
        str(stats.get("elite_profile", stats.get("elite", ""))) if isinstance(stats, dict) else "")
    elite = read_profile(elite_text)
    rng = call.rng("profile")
    families = [f for f in elite.get("families", [])[:2] if f in FAMILIES]
    families += [f for f in own.get("families", []) + PREFERENCE[call.kind] if f not in families and f in FAMILIES]
    i = rng.randrange(1, len(families) - 1)
    families[i], families[i + 1] = families[i + 1], families[i]
    strength = min(3, max(1, int(elite.get("strength", own.get("strength", 1))) + rng.choice([-1, 0, 1])))
    new = {"families": families, "strength": strength}
    text = (f"draft: prefer {', '.join(families[:4])}.\nmerge: keep the primary parent's skeleton.\n"
            f"mutate: change {strength} setting(s) per step.\n[builtin-profile: {json.dumps(new)}]")
    return Reply(text=text)
