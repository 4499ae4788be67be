"""The final submission's ancestry: SolutionRecorded parents walked back to the retrieved models.

Generic by construction: a node is any recorded solution; its edges are its ``parents`` (plus,
for evolution nodes, the solutions named in ``detail.gene_sources``); its decisions are every
decision event whose payload names it in a ``*solution_id`` / ``*solution_ids`` field. New event
types of other strategies therefore show up without changes here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from engine.audit.runlog import AuditError, RunLog, fmt_score, kind_of, short
from events.domain import solution_id_of

if TYPE_CHECKING:  # rich is imported only when a tree is drawn
    from rich.tree import Tree

# Decisions that are plumbing rather than a verdict about a solution.
_NOT_VERDICTS = frozenset({"SolutionRecorded", "SolutionEvaluated", "EvaluationRequested", "AgentCallRequested",
                           "TimerRequested", "EffectCancelled"})
_DETAIL_ORDER = ("model_name", "candidate", "outer_step", "k", "round", "attempt", "plan", "code_block")


@dataclass
class LineageNode:
    solution_id: str
    origin: str
    phase: str
    scope: str
    seq: int
    score: float | None
    source_model: str | None
    parents: list[str]
    detail: dict[str, Any]
    depth: int = 0                                   # distance from the final solution
    decisions: list[dict[str, Any]] = field(default_factory=list)
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    gene_sources: dict[str, str] | None = None
    retrieved_model: str | None = None               # set on roots drafted from a retrieved model

    def flat(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Lineage:
    run_id: str
    final_id: str
    selected_by: str
    maximize: bool
    nodes: dict[str, LineageNode]                    # the ancestry of the final solution only
    retrieved_models: list[str]
    all_nodes: dict[str, LineageNode] = field(default_factory=dict)  # every solution of the run

    def models_reached(self) -> list[str]:
        return sorted({n.retrieved_model for n in self.nodes.values() if n.retrieved_model})

    def to_json(self) -> dict[str, Any]:
        seen: set[str] = set()

        def nest(sid: str) -> dict[str, Any]:
            node = self.nodes[sid]
            if sid in seen:  # a DAG: a shared ancestor is written out once, then referenced
                return {"solution_id": sid, "ref": True, "origin": node.origin}
            seen.add(sid)
            out = node.flat()
            out["parents"] = [nest(p) for p in _unique(node.parents) if p in self.nodes]
            out["parent_ids"] = list(node.parents)
            return out

        return {"run_id": self.run_id, "final_solution_id": self.final_id, "selected_by": self.selected_by,
                "metric_direction": "maximize" if self.maximize else "minimize",
                "retrieved_models": self.retrieved_models, "models_reached": self.models_reached(),
                "solutions_in_lineage": len(self.nodes), "solutions_in_run": len(self.all_nodes),
                "lineage": nest(self.final_id)}


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --- building -------------------------------------------------------------------------------


def final_solution(log: RunLog) -> tuple[str, str]:
    """The solution the run ended with, and how it was found."""
    s = log.state
    known = s.solutions
    if not known:
        raise AuditError(f"run {log.run_id} recorded no solutions; there is no lineage to show")
    result = s.result or {}
    for key in ("final_solution_id", "best_solution_id"):
        value = _find_key(result, key)
        if isinstance(value, str) and value in known:
            return value, f"RunCompleted.result.{key}"
    final = result.get("final_solution")
    if isinstance(final, dict) and isinstance(final.get("content"), str):
        sid = solution_id_of(final["content"])
        if sid in known:
            return sid, "RunCompleted.result.final_solution"
    for env in reversed(log.envelopes):
        p = env.payload
        if isinstance(p.get("final_solution_id"), str) and p["final_solution_id"] in known:
            return p["final_solution_id"], f"{env.type} (seq {env.seq})"
        named = p.get("solution_id") in known
        if named and (env.type.startswith("Final") or (env.type == "SubmissionProduced" and p.get("valid"))):
            return p["solution_id"], f"{env.type} (seq {env.seq})"
    best = s.best_solution_id  # the run's best evaluated solution, by the one rule of replay.best
    if best is not None and best in known:
        return best, "best SolutionEvaluated"
    last = max(known.values(), key=lambda n: n.seq)
    return last.solution_id, "last SolutionRecorded (nothing was scored)"


def _find_key(value: Any, key: str, depth: int = 0) -> Any:
    """``key`` at the shallowest level of nested dicts (top level first)."""
    if not isinstance(value, dict) or depth > 3:
        return None
    if key in value:
        return value[key]
    for child in value.values():
        found = _find_key(child, key, depth + 1)
        if found is not None:
            return found
    return None


def _node_aliases(log: RunLog) -> dict[str, str]:
    """Evolution-style node ids → solution ids, from any decision naming both."""
    aliases: dict[str, str] = {}
    for env in log.envelopes:
        p = env.payload
        node, sid = p.get("node_id"), p.get("solution_id")
        if isinstance(node, str) and isinstance(sid, str) and sid in log.state.solutions:
            aliases[node] = sid
    return aliases


def _all_nodes(log: RunLog) -> dict[str, LineageNode]:
    s = log.state
    aliases = _node_aliases(log)
    models = retrieved_models(log)
    nodes: dict[str, LineageNode] = {}
    for sid, sol in s.solutions.items():
        node = LineageNode(solution_id=sid, origin=sol.origin, phase=sol.phase, scope=sol.scope, seq=sol.seq,
                           score=sol.score, source_model=sol.source_model, parents=list(sol.parents),
                           detail=short(dict(sol.detail)))
        genes = sol.detail.get("gene_sources")
        if isinstance(genes, dict):
            node.gene_sources = {str(k): aliases.get(str(v), str(v)) for k, v in genes.items()}
        if not node.parents and sol.source_model and (sol.source_model in models or not models):
            node.retrieved_model = sol.source_model
        nodes[sid] = node
    for ev in s.evaluations:
        if ev.solution_id in nodes:
            nodes[ev.solution_id].evaluations.append({"seq": ev.seq, "purpose": ev.purpose, "score": ev.score,
                                                      "is_error": ev.is_error, "elapsed_s": ev.elapsed_s})
    for env in log.envelopes:
        if env.type in _NOT_VERDICTS or kind_of(env.type) not in ("decision", "remark"):
            continue
        for sid in _named_solutions(env.payload):
            if sid in nodes:
                entry = {"type": env.type, "seq": env.seq, "scope": env.scope}
                entry.update({k: short(v, 160) for k, v in env.payload.items()})
                nodes[sid].decisions.append(entry)
                genes = env.payload.get("gene_sources")
                if isinstance(genes, dict) and genes and nodes[sid].gene_sources is None:
                    nodes[sid].gene_sources = {str(k): aliases.get(str(v), str(v)) for k, v in genes.items()}
    return nodes


def _named_solutions(payload: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in payload.items():
        if key.endswith("solution_id") and isinstance(value, str):
            out.append(value)
        elif key.endswith("solution_ids") and isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str))
    return _unique(out)


def retrieved_models(log: RunLog) -> list[str]:
    names: list[str] = []
    for env in log.envelopes:
        if env.type == "ModelsRetrieved":
            names.extend(m.get("model_name", "") for m in env.payload.get("models", []))
    return _unique([n for n in names if n])


def ancestry_edges(node: LineageNode, known: dict[str, Any]) -> list[str]:
    """Parents first, then gene sources that are other known solutions (evolution merges)."""
    edges = [p for p in node.parents if p in known]
    for src in (node.gene_sources or {}).values():
        if src in known and src != node.solution_id:
            edges.append(src)
    return _unique(edges)


def build_lineage(log: RunLog) -> Lineage:
    final_id, how = final_solution(log)
    every = _all_nodes(log)
    ancestry: dict[str, LineageNode] = {}
    frontier = [(final_id, 0)]
    while frontier:  # breadth first: a node's depth is its shortest distance from the final
        nxt: list[tuple[str, int]] = []
        for sid, depth in frontier:
            if sid in ancestry:
                continue
            node = every[sid]
            node.depth = depth
            ancestry[sid] = node
            nxt.extend((p, depth + 1) for p in ancestry_edges(node, every) if p not in ancestry)
        frontier = nxt
    return Lineage(run_id=log.run_id, final_id=final_id, selected_by=how, maximize=log.maximize,
                   nodes=ancestry, retrieved_models=retrieved_models(log), all_nodes=every)


# --- text -----------------------------------------------------------------------------------


_FIRST = ("accepted", "valid", "status", "score", "best", "was_improvement", "round", "candidate_index", "check",
          "changed", "fell_back", "fallback", "outer_step", "k", "plan", "reason", "rows", "failure")
_BULKY = frozenset({"type", "seq", "scope", "solution_id", "content", "code_block", "block", "replacement",
                    "inner_loop_attempts", "ablation_summary", "path", "columns", "summary"})


def describe_decision(d: dict[str, Any], width: int = 70) -> str:
    """One line for a decision naming a solution: its type and its telling fields."""
    keys = [k for k in _FIRST if k in d] + [k for k in d if k not in _FIRST]
    parts = []
    for key in keys:
        value = d[key]
        if key in _BULKY or value in (None, "", [], {}):
            continue
        text = fmt_score(value) if isinstance(value, float) else str(value)
        text = " ".join(text.split())
        parts.append(f"{key}={text[:width] + ('…' if len(text) > width else '')}")
    return f"{d['type']} [{d['scope']}] seq {d['seq']}: " + ", ".join(parts[:7])


def node_label(node: LineageNode, final_id: str) -> str:
    star = " [bold green]★ final[/]" if node.solution_id == final_id else ""
    model = f"  model [magenta]{node.source_model}[/]" if node.source_model else ""
    return (f"[bold cyan]{node.origin}[/] [dim]{node.solution_id}[/]{star}  phase {node.phase}  "
            f"scope {node.scope}  score [bold]{fmt_score(node.score)}[/]{model}")


def detail_lines(node: LineageNode) -> list[str]:
    lines = []
    keys = [k for k in _DETAIL_ORDER if k in node.detail] + sorted(k for k in node.detail if k not in _DETAIL_ORDER)
    for key in keys:
        if key == "gene_sources":
            continue
        value = node.detail[key]
        text = str(value).replace("\n", " ⏎ ")
        lines.append(f"{key}: {text[:160]}")
    return lines


def render_tree(lineage: Lineage) -> Tree:
    """A rich Tree: the final solution at the top, parents as children, down to the models."""
    from rich.markup import escape
    from rich.tree import Tree

    head = (f"[bold]lineage of run {escape(lineage.run_id)}[/]  final {lineage.final_id} "
            f"([dim]{escape(lineage.selected_by)}[/])  {len(lineage.nodes)} of {len(lineage.all_nodes)} solutions; "
            f"models reached: {escape(', '.join(lineage.models_reached()) or 'none')}")
    tree = Tree(head)
    shown: set[str] = set()

    def add(parent: Tree, sid: str) -> None:
        node = lineage.nodes[sid]
        branch = parent.add(node_label(node, lineage.final_id) if sid not in shown else
                            f"[dim]↑ {node.origin} {sid} (shown above)[/]")
        if sid in shown:
            return
        shown.add(sid)
        for line in detail_lines(node):
            branch.add(f"[dim]{escape(line)}[/]")
        for d in node.decisions:
            branch.add(f"[yellow]{escape(describe_decision(d))}[/]")
        for locus, src in (node.gene_sources or {}).items():
            branch.add(f"[blue]gene {escape(locus)} ← {escape(src)}[/]")
        if node.retrieved_model:
            branch.add(f"[bold magenta]retrieved model: {escape(node.retrieved_model)}[/]")
        for p in ancestry_edges(node, lineage.nodes):
            add(branch, p)

    add(tree, lineage.final_id)
    return tree
