"""The lineage graph as inline SVG: generations left to right (retrieved models first, the final
solution last), edges parent → child, the final submission's ancestry in full colour and the
run's other solutions faded. Evolution nodes list their gene sources per locus."""

from __future__ import annotations

from html import escape

from engine.audit.lineage import Lineage, LineageNode, ancestry_edges, describe_decision
from engine.audit.runlog import fmt_score

NODE_W, BASE_H, GENE_LINE, COL_GAP, ROW_GAP = 184, 62, 13, 46, 16
MODEL_W = 184
MAX_FULL_GRAPH = 60  # above this many solutions only the ancestry is drawn


def _generations(nodes: dict[str, LineageNode]) -> dict[str, int]:
    """Longest path from a root, so every edge points to a later column."""
    gen: dict[str, int] = {}

    def g(sid: str, trail: frozenset[str]) -> int:
        if sid in gen:
            return gen[sid]
        parents = [p for p in ancestry_edges(nodes[sid], nodes) if p not in trail]
        value = 1 + max((g(p, trail | {sid}) for p in parents), default=0)
        gen[sid] = value
        return value

    for sid in sorted(nodes, key=lambda s: nodes[s].seq):
        g(sid, frozenset())
    return gen


def gene_lines(node: LineageNode) -> list[tuple[str, str]]:
    """Gene sources grouped by source: (short line, full loci list) — ``7 loci ← own``."""
    groups: dict[str, list[str]] = {}
    for locus, src in (node.gene_sources or {}).items():
        groups.setdefault(src, []).append(locus)
    out = []
    for src, loci in groups.items():
        who = "own" if src == node.solution_id else src[:8]
        what = loci[0][:14] if len(loci) == 1 else f"{len(loci)} loci"
        out.append((f"{what} ← {who}", f"{', '.join(loci)} ← {src}"))
    return out


def _height(node: LineageNode) -> int:
    lines = gene_lines(node)
    return BASE_H + (GENE_LINE * len(lines) + 6 if lines else 0)


def _short_model(name: str, limit: int = 30) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def lineage_svg(lineage: Lineage, colours: dict[str, str]) -> tuple[str, bool]:
    """The SVG, and whether the whole run (True) or only the ancestry (False) is drawn."""
    full = len(lineage.all_nodes) <= MAX_FULL_GRAPH
    nodes = lineage.all_nodes if full else lineage.nodes
    models = sorted({n.retrieved_model for n in nodes.values() if n.retrieved_model})
    pos, model_pos, height = _layout(lineage, nodes, models)
    width = max([x + NODE_W for x, _ in pos.values()] + [300]) + 20
    o = [f'<svg class="graph" viewBox="0 0 {width:.0f} {height:.0f}" width="100%" '
         f'style="min-width:{width * 0.8:.0f}px;max-width:{width:.0f}px" '
         f'role="img" aria-label="lineage graph">',
         '<defs><marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
         'orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#7b8494"/></marker>'
         '<marker id="arr-hi" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
         'orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#2b3445"/></marker></defs>']
    o.extend(_edges(lineage, nodes, pos, model_pos))
    for m, (x, y) in model_pos.items():
        reached = m in lineage.models_reached()
        o.append(f'<g class="model{"" if reached else " faded"}"><title>retrieved model: {escape(m)}</title>'
                 f'<rect x="{x}" y="{y}" width="{MODEL_W}" height="44" rx="22"/>'
                 f'<text x="{x + 16}" y="{y + 18}" class="m-kind">retrieved model</text>'
                 f'<text x="{x + 16}" y="{y + 33}" class="m-name">{escape(_short_model(m, 27))}</text></g>')
    for sid, node in nodes.items():
        x, y = pos[sid]
        o.append(_node(node, x, y, colours.get(node.scope, "#888"), final=sid == lineage.final_id,
                       faded=sid not in lineage.nodes))
    o.append("</svg>")
    return "".join(o), full


Point = tuple[float, float]


def _layout(lineage: Lineage, nodes: dict[str, LineageNode],
            models: list[str]) -> tuple[dict[str, Point], dict[str, Point], float]:
    """Where each solution and retrieved model is drawn, and the graph's height: a column per
    generation, each column ordered by where its parents stand (the ancestry first on a tie)."""
    gen = _generations(nodes)
    columns: dict[int, list[str]] = {}
    for sid in sorted(nodes, key=lambda s: nodes[s].seq):
        columns.setdefault(gen[sid], []).append(sid)
    pos: dict[str, Point] = {}
    top = 28
    model_pos: dict[str, Point] = {m: (10, top + i * (44 + ROW_GAP)) for i, m in enumerate(models)}
    col_heights: list[float] = [top + len(models) * (44 + ROW_GAP)]
    order_key: dict[str, float] = {m: i for i, m in enumerate(models)}
    for c in sorted(columns):
        def bary(sid: str) -> float:
            n = nodes[sid]
            refs = [order_key[p] for p in ancestry_edges(n, nodes) if p in order_key]
            if n.retrieved_model is not None and n.retrieved_model in order_key:
                refs.append(order_key[n.retrieved_model])
            in_lineage = 0 if sid in lineage.nodes else 1
            return (sum(refs) / len(refs) if refs else 1e6) + in_lineage * 0.001
        ids = sorted(columns[c], key=lambda s: (bary(s), nodes[s].seq))
        y: float = top
        x: float = 10 + (MODEL_W + COL_GAP if models else 0) + (c - 1) * (NODE_W + COL_GAP)
        for rank, sid in enumerate(ids):
            pos[sid] = (x, y)
            order_key[sid] = rank
            y += _height(nodes[sid]) + ROW_GAP
        col_heights.append(y)
    return pos, model_pos, max(col_heights) + 10


def _edges(lineage: Lineage, nodes: dict[str, LineageNode], pos: dict[str, Point],
           model_pos: dict[str, Point]) -> list[str]:
    """Every edge: parent → child (the ancestry's highlighted), gene source → node, and
    retrieved model → the draft made from it."""
    o: list[str] = []

    def edge(x1: float, y1: float, x2: float, y2: float, cls: str, tip: str) -> None:
        mid = (x1 + x2) / 2
        marker = "arr-hi" if "hi" in cls.split() else "arr"
        o.append(f'<path class="edge {cls}" d="M{x1:.1f},{y1:.1f}C{mid:.1f},{y1:.1f} {mid:.1f},{y2:.1f} '
                 f'{x2 - 2:.1f},{y2:.1f}" marker-end="url(#{marker})"><title>{escape(tip)}</title></path>')

    for sid, node in nodes.items():
        x2, y2 = pos[sid]
        in_line = sid in lineage.nodes
        for p in dict.fromkeys(node.parents):
            if p in pos:
                px, py = pos[p]
                hi = in_line and p in lineage.nodes
                edge(px + NODE_W, py + 24, x2, y2 + 24, "hi" if hi else "lo", f"{p} → {sid}")
        for locus, src in (node.gene_sources or {}).items():
            if src in pos and src not in node.parents and src != sid:
                px, py = pos[src]
                edge(px + NODE_W, py + 24, x2, y2 + 24, "gene", f"gene {locus}: {src} → {sid}")
        if node.retrieved_model is not None and node.retrieved_model in model_pos:
            mx, my = model_pos[node.retrieved_model]
            edge(mx + MODEL_W, my + 22, x2, y2 + 24, "hi" if in_line else "lo", f"{node.retrieved_model} → {sid}")
    return o


def _node(node: LineageNode, x: float, y: float, colour: str, *, final: bool, faded: bool) -> str:
    h = _height(node)
    tip = [f"{node.origin} {node.solution_id}", f"phase {node.phase} · scope {node.scope} · score {fmt_score(node.score)}"]
    if node.source_model:
        tip.append(f"model: {node.source_model}")
    for key, value in node.detail.items():
        if key != "gene_sources":
            tip.append(f"{key}: {' '.join(str(value).split())[:200]}")
    tip += [describe_decision(d, 120) for d in node.decisions[:6]]
    cls = "node" + (" final" if final else "") + (" faded" if faded else "")
    score = fmt_score(node.score)
    third = node.scope + (f" · {_short_model(node.source_model, 20)}" if node.source_model else "")
    o = [f'<g class="{cls}" data-solution="{escape(node.solution_id)}"><title>{escape(chr(10).join(tip))}</title>',
         f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{h}" rx="9" class="box"/>',
         f'<rect x="{x}" y="{y}" width="7" height="{h}" rx="3" fill="{colour}"/>',
         f'<text x="{x + 16}" y="{y + 19}" class="n-origin">{escape(_short_model(node.origin, 17))}</text>',
         f'<text x="{x + NODE_W - 10}" y="{y + 19}" class="n-score" text-anchor="end">{escape(score)}</text>',
         f'<text x="{x + 16}" y="{y + 36}" class="n-id">{escape(node.solution_id)}'
         f'{" ★ final" if final else ""}</text>',
         f'<text x="{x + 16}" y="{y + 52}" class="n-meta">{escape(_short_model(third, 31))}</text>']
    for i, (line, full) in enumerate(gene_lines(node)):
        o.append(f'<text x="{x + 16}" y="{y + BASE_H + 4 + i * GENE_LINE}" class="n-gene">'
                 f'<title>{escape(full)}</title>{escape(line)}</text>')
    o.append("</g>")
    return "".join(o)
