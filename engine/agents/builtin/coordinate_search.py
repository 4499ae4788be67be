"""The search over one gene's settings: its dimensions, plans as change-sets, coordinate moves.

A plan is text for people plus a ``[builtin-changes: {json}]`` tag for the coder. The planner
reads the history of (plan, score), takes the best change-set so far as the incumbent and moves
one coordinate from it: further along a direction that paid off first, then untried neighbours.
That is a real coordinate search, so different histories give different plans.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.agents.builtin.catalog import FAMILIES, retrieval_order
from engine.agents.builtin.plan_texts import SETTING_REASONS
from engine.agents.builtin.render_data import FEATURE_OPTIONS
from engine.agents.builtin.render_train import COMBINE_METHODS
from engine.agents.builtin.spec import clone
from engine.agents.builtin.text_task import TEXT_MODELS, TEXT_NGRAMS, TEXT_VOCABULARIES
from events.score import Score

TARGET_TRANSFORMS = ("none", "standardize", "log1p", "poisson")
CHANGES_RE = re.compile(r"\[builtin-changes: (\{.*?\})\]", re.S)
_PREP_SPACE: dict[str, list[str | bool]] = {
    "scale": ["none", "standard", "robust", "quantile"], "encode": ["ordinal", "onehot", "native"],
    "num_impute": ["median", "mean"], "indicators": [False, True],
}
# Widening the MODEL block: a member of a family the block lacks, as a change-set entry
# ``{"members.add": "<family>"}``. A model unlike the current ones errs differently, so a blend
# can beat every setting of them; the planner tries it once the settings near the best plan are
# known (a one-model block has few: a k-NN's ten).
ADD_MEMBER = "members.add"
# Narrowing it: ``{"members.drop": ["<name>", ...]}`` takes members out of the blend, as the
# ablation's "only <first> (other models dropped)" variant does. Each member is one more fit in
# every run, so one the blend does better without costs search time as well as score
# (football-goals at 600 s: a blend gave its booster weight 0 and kept fitting it in every run).
DROP_MEMBERS = "members.drop"
MAX_MEMBERS = 3   # as the evolutionary mutation: each member is one more fit in every run


@dataclass(frozen=True)
class Dim:
    key: str
    values: tuple[Any, ...]
    current: Any
    ordered: bool

    @property
    def index(self) -> int:
        return self.values.index(self.current)


def _dim(key: str, values: list[Any], current: Any, ordered: bool = True) -> Dim:
    vals = list(values)
    if current not in vals:
        vals.append(current)
        if ordered and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            vals.sort()
    return Dim(key, tuple(vals), current, ordered)


def family_of(name: str) -> str | None:
    base = re.sub(r"_\d+$", "", name)
    return base if base in FAMILIES else None


def dimensions(locus: str, gene: dict[str, Any], kind: str) -> list[Dim]:
    dims: list[Dim] = []
    if locus == "DATA":
        for key, values in _PREP_SPACE.items():
            dims.append(_dim(f"prep.{key}", values, gene["prep"].get(key), ordered=False))
        for feature in FEATURE_OPTIONS:
            dims.append(_dim(f"feature.{feature}", [False, True], feature in gene.get("features", []), False))
        if gene.get("text"):  # a task with free text: its TF-IDF block's settings
            dims.append(_dim("text.model", ["auto", *TEXT_MODELS], gene["text"]["model"], False))
            dims.append(_dim("text.ngrams", list(TEXT_NGRAMS), gene["text"]["ngrams"], False))
            dims.append(_dim("text.vocabulary", list(TEXT_VOCABULARIES), gene["text"]["vocabulary"]))
    elif locus == "MODEL":
        for member in gene["members"]:
            family = FAMILIES[member["family"]]
            for param, value in member["params"].items():
                if param in family.space:
                    numeric = all(isinstance(v, (int, float)) for v in family.space[param] if v is not None)
                    dims.append(_dim(f"{member['name']}.{param}", family.space[param], value, numeric))
    elif locus == "REGULARIZATION":
        for name, params in gene.items():
            named = FAMILIES.get(family_of(name) or "")
            for param, value in (params or {}).items():
                if named and param in named.space:
                    dims.append(_dim(f"{name}.{param}", named.space[param], value, param != "max_depth"))
    elif locus == "LOSS":
        if kind == "classification":
            dims.append(_dim("class_weight", [None, "balanced"], gene.get("class_weight"), False))
        else:
            dims.append(_dim("target_transform", list(TARGET_TRANSFORMS), gene.get("target_transform", "none"), False))
    elif locus == "TRAINING_TRICKS":
        dims.append(_dim("combine", list(COMBINE_METHODS), gene.get("combine", "mean"), False))
        dims.append(_dim("early_stop", [False, True], bool(gene.get("early_stop")), False))
        if gene.get("combine") == "weighted":
            dims.append(_dim("rounds", [10, 25, 50], gene.get("rounds", 25)))
        if gene.get("combine") == "stacking":
            dims.append(_dim("meta_c", [0.1, 0.3, 1.0, 3.0, 10.0], gene.get("meta_c", 1.0)))
    return dims


def new_member(gene: dict[str, Any], family_key: str, kind: str) -> dict[str, Any]:
    """A member of ``family_key`` for a MODEL gene: the family's defaults and preparation, under
    a name no member of ``gene`` has."""
    family = FAMILIES[family_key]
    names = {m["name"] for m in gene["members"]}
    name, i = family.key, 2
    while name in names:
        name, i = f"{family.key}_{i}", i + 1
    return {"name": name, "family": family.key, "params": dict(family.model_params[kind]), "prep": dict(family.prep)}


def partners(gene: dict[str, Any], kind: str, classes: int | None = None, cap: int = MAX_MEMBERS) -> list[str]:
    """The families a MODEL gene could add, in the order retrieval drafts them (a regularised
    linear model right after the first booster: the model least like it), none it already has;
    none once it has ``cap`` members."""
    if len(gene["members"]) >= cap:
        return []
    present = {m["family"] for m in gene["members"]}
    return [key for key in retrieval_order(kind, classes) if key not in present]


def apply_changes(locus: str, gene: dict[str, Any], changes: dict[str, Any], kind: str | None = None) -> dict[str, Any]:
    """``gene`` with ``changes`` made; adding a member (``ADD_MEMBER``) needs the task's ``kind``."""
    out = clone(gene)
    for key, value in changes.items():
        head, _, param = key.partition(".")
        if locus == "MODEL" and key == ADD_MEMBER:
            if kind is None or not isinstance(value, str) or value not in FAMILIES:
                raise ValueError(f"cannot add a member of family {value!r} (known: {', '.join(FAMILIES)})")
            out["members"].append(new_member(out, value, kind))
        elif locus == "MODEL" and key == DROP_MEMBERS:
            out["members"] = without_members(out["members"], value)
        elif locus == "DATA" and head == "prep":
            out["prep"][param] = value
        elif locus == "DATA" and head == "text":
            out["text"] = {**out["text"], param: value}
        elif locus == "DATA" and head == "feature":
            features = [f for f in out.get("features", []) if f != param]
            out["features"] = [f for f in FEATURE_OPTIONS if f in features or (value and f == param)]
        elif locus == "MODEL":
            for member in out["members"]:
                if member["name"] == head:
                    member["params"][param] = value
        elif locus == "REGULARIZATION":
            out.setdefault(head, {})[param] = value
        else:
            out[key] = value
    return out


def without_members(members: list[dict[str, Any]], names: Any) -> list[dict[str, Any]]:
    """``members`` less the ones named; at least one must stay, and every name must be a member."""
    names = [names] if isinstance(names, str) else names
    known = [m["name"] for m in members]
    if not isinstance(names, list) or not names or any(n not in known for n in names):
        raise ValueError(f"cannot drop {names!r}: give a list of member names (members: {', '.join(known)})")
    kept = [m for m in members if m["name"] not in names]
    if not kept:
        raise ValueError("cannot drop every member of the blend: keep at least one")
    return kept


def _show(value: Any) -> str:
    return json.dumps(value)


def describe(dims: list[Dim], changes: dict[str, Any]) -> str:
    by_key = {d.key: d for d in dims}
    parts = []
    for key, value in changes.items():
        if key == ADD_MEMBER and isinstance(value, str) and value in FAMILIES:
            parts.append(f"add a {FAMILIES[value].title} model to the blend (a model unlike the "
                         "current ones errs differently, so averaging them cancels part of each one's error)")
            continue
        if key == DROP_MEMBERS:
            parts.append(f"drop {_show(value)} from the blend (the ablation scored the blend better "
                         "without it, and every member is one more fit in every run)")
            continue
        dim = by_key.get(key)
        old = _show(dim.current) if dim else "its current value"
        why = SETTING_REASONS.get(key.rpartition(".")[2], "a setting the ablation pointed at")
        parts.append(f"set {key} from {old} to {_show(value)} ({why})")
    return "; ".join(parts)


def plan_text(locus: str, dims: list[Dim], changes: dict[str, Any], context: str = "") -> str:
    body = describe(dims, changes) or "keep the block as it is"
    text = (f"In the {locus} section, {body}. Everything else in the block stays the same, so the "
            f"score change can be attributed to this edit; none of it adds noticeable run time.")
    if context:
        text = context.strip() + " " + text
    return f"{text} [builtin-changes: {json.dumps(changes, sort_keys=True)}]"


def parse_changes(plan: str, dims: list[Dim]) -> dict[str, Any] | None:
    """The change-set of a plan: from our tag, else from 'param = value' / 'param to value' text."""
    m = CHANGES_RE.search(plan or "")
    if m:
        try:
            value = json.loads(m.group(1))
            return value if isinstance(value, dict) else None
        except ValueError:
            return None
    found: dict[str, Any] = {}
    for dim in dims:
        short = re.escape(dim.key.rpartition(".")[2])
        pattern = rf"\b{short}\b[^.;\n]*?(?:=|\bto\b)\s*[\"']?([\w.\-]+)"
        hit = re.search(pattern, plan or "", re.I)
        if hit is None:
            continue
        for value in dim.values:
            if str(value).lower() == hit.group(1).lower().rstrip("."):
                found[dim.key] = value
    return found or None


def _key(changes: dict[str, Any]) -> str:
    return json.dumps(changes, sort_keys=True)


def propose(dims: list[Dim], history: list[tuple[dict[str, Any] | None, float | None]],
            rule: Score, rng: random.Random,
            wider: Callable[[], list[dict[str, Any]]] | None = None) -> dict[str, Any] | None:
    """Next change-set to try, relative to the original block; None when the space is exhausted.
    ``wider`` gives moves out of the block's settings (``ADD_MEMBER``), made from the best plan once
    nothing near it is left; it is called only then (it may read the task's files)."""
    if not dims and not wider:
        return None
    tried = {_key(c) for c, _ in history if c is not None}
    tried.add(_key({}))
    incumbent, best = _incumbent(history, rule)
    by_key = {d.key: d for d in dims}
    # 1. Keep going in the direction that produced the incumbent; 2. one-coordinate neighbours of
    # the incumbent, untried dimensions first, none a move that scored worse.
    candidates = _onward(incumbent, by_key) + _neighbours(dims, incumbent, _worse(history, incumbent, best, rule), rng)
    for move in candidates:
        if _key(move) not in tried:
            return move
    # 3. Everything near the incumbent is known: jump two random coordinates.
    return _jump(dims, incumbent, tried, rng) or _widened(wider() if wider else [], incumbent, tried)


def _incumbent(history: list[tuple[dict[str, Any] | None, float | None]],
               rule: Score) -> tuple[dict[str, Any], float | None]:
    """The best change-set tried so far and its score ({} and None before any scored)."""
    incumbent: dict[str, Any] = {}
    best: float | None = None
    for changes, score in history:
        if changes is not None and rule.improves(score, best):
            incumbent, best = changes, score
    return incumbent, best


def _worse(history: list[tuple[dict[str, Any] | None, float | None]], incumbent: dict[str, Any],
           best: float | None, rule: Score) -> set[str]:
    """The single moves (``key=value``) away from the incumbent of every change-set that scored worse."""
    worse: set[str] = set()
    for changes, score in history:
        if changes is not None and best is not None and score is not None and rule.improves(best, score):
            worse.update(f"{k}={_show(v)}" for k, v in changes.items() if incumbent.get(k) != v)
    return worse


def _onward(incumbent: dict[str, Any], by_key: dict[str, Dim]) -> list[dict[str, Any]]:
    """One more step along each ordered dimension, in the direction the incumbent moved it."""
    onward = []
    for key, value in incumbent.items():
        dim = by_key.get(key)
        if dim and dim.ordered and value in dim.values:
            step = 1 if dim.values.index(value) > dim.index else -1
            nxt = dim.values.index(value) + step
            if 0 <= nxt < len(dim.values):
                onward.append({**incumbent, key: dim.values[nxt]})
    return onward


def _neighbours(dims: list[Dim], incumbent: dict[str, Any], worse: set[str],
                rng: random.Random) -> list[dict[str, Any]]:
    """The incumbent moved along one dimension (a seeded order, dimensions it has not moved first)."""
    neighbours: list[dict[str, Any]] = []
    order = list(dims)
    rng.shuffle(order)
    order.sort(key=lambda d: d.key in incumbent)
    for dim in order:
        here = incumbent.get(dim.key, dim.current)
        pos = dim.values.index(here) if here in dim.values else dim.index
        options = ([dim.values[i] for i in (pos + 1, pos - 1) if 0 <= i < len(dim.values)]
                   if dim.ordered else [v for v in dim.values if v != here])
        for value in options:
            move = {**incumbent, dim.key: value}
            if value == dim.current:
                move.pop(dim.key)
            if f"{dim.key}={_show(value)}" not in worse:
                neighbours.append(move)
    return neighbours


def _jump(dims: list[Dim], incumbent: dict[str, Any], tried: set[str], rng: random.Random) -> dict[str, Any] | None:
    """The incumbent with two random coordinates set at random, not tried yet (50 draws at most)."""
    by_key = {d.key: d for d in dims}
    for _ in range(50):
        jump = dict(incumbent)
        for dim in rng.sample(dims, k=min(2, len(dims))):
            jump[dim.key] = rng.choice(dim.values)
        jump = {k: v for k, v in jump.items() if k not in by_key or v != by_key[k].current}
        if _key(jump) not in tried:
            return jump
    return None


def _widened(wider: list[dict[str, Any]], incumbent: dict[str, Any], tried: set[str]) -> dict[str, Any] | None:
    for move in wider:
        widened = {**incumbent, **move}
        if _key(widened) not in tried:
            return widened
    return None
