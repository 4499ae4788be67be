"""Finalization roles (A_test and its variants) and the data-usage check (A_data)."""

from __future__ import annotations

import re
from pathlib import Path

import structlog

from engine.agents.builtin.call import Call, CannotAnswer, Reply, block_reply, code_reply, require_spec
from engine.agents.builtin.refinement import render_gene
from engine.agents.builtin.render import render_solution
from engine.agents.builtin.render_final import GROWN_BAG, rescores, test_gene
from engine.agents.builtin.search_rows import search_rows
from engine.agents.builtin.spec import SUBSAMPLE_RE, parse_gene_block, section_block
from handlers.step_policy import time_driven

log = structlog.get_logger(__name__)
ALL_USED = "All the provided information is used."
_SAMPLE_LINE = re.compile(r"^(\s*)(\w+)\s*=\s*\2\.(sample|head)\(.*$|^(\s*)(\w+)\s*=\s*\5\[\s*:\s*\w+\s*\]\s*$", re.M)
_DOC_SUFFIXES = {".md", ".txt", ".html", ".pdf"}


def test(call: Call) -> Reply:
    """{task description, final solution} -> same script, final models refit on ALL training rows."""
    script = call.text_var("final solution")
    require_spec(script, "test")
    block = section_block(script, "TRAINING_TRICKS")
    parsed = parse_gene_block(block or "")
    if block is None or parsed is None:
        raise CannotAnswer("builtin test: the TRAINING_TRICKS section has no builtin gene")
    gene = test_gene(parsed[1], call.metric, search_rows(call.ctx.config),
                     grow_seeds=GROWN_BAG if time_driven(call.ctx.config) else 0)
    rescore = rescores(gene)
    new_block = render_gene(call, "TRAINING_TRICKS", gene)
    how = ("The validation score and blend come from out-of-fold predictions on a sample of the search's size"
           + ("; class probabilities are calibrated on them" if gene.get("calibrate") else "") + "; then"
           if rescore else "The combination is fixed and the run measured its validation score, so")
    return code_reply(script.replace(block, new_block, 1),
                      how + " every model is refit on the full training data, predicts all test rows and "
                      "./final/submission.csv is written.")


def subsampling_extract(call: Call) -> Reply:
    """{final solution} -> the subsampling block, verbatim."""
    script = call.text_var("final solution")
    m = SUBSAMPLE_RE.search(script)
    if m:
        return block_reply(m.group(0))
    hit = _SAMPLE_LINE.search(script)
    if hit is None:
        # An empty fenced block is the finalization handler's "no subsampling" (REQ-FN-008).
        return Reply(text="No subsampling code was found in the script.\n\n```python\n```")
    lines = script.split("\n")
    row = script[: hit.start()].count("\n")
    start = row
    indent = len(lines[row]) - len(lines[row].lstrip())
    if row > 0 and lines[row - 1].lstrip().startswith("if ") and len(lines[row - 1]) - len(lines[row - 1].lstrip()) < indent:
        start = row - 1
    return block_reply("\n".join(lines[start: row + 1]))


def subsampling_remove(call: Call) -> Reply:
    """{code block with subsampling} -> the block without subsampling (no new variables)."""
    block = call.text_var("code block with subsampling", "code_block")
    if SUBSAMPLE_RE.search(block):
        return block_reply(SUBSAMPLE_RE.sub("# Subsampling removed: the full training set is used.", block))
    lines = [line for line in block.split("\n") if not _SAMPLE_LINE.match(line)]
    kept: list[str] = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        body_follows = nxt.strip() and len(nxt) - len(nxt.lstrip()) > len(line) - len(line.lstrip())
        if line.rstrip().endswith(":") and line.lstrip().startswith("if ") and not body_follows:
            continue                                 # an `if` whose only body was the subsampling
        kept.append(line)
    if "\n".join(kept) == block:
        raise CannotAnswer("builtin test: no subsampling statement found in the given block")
    return block_reply("\n".join(kept) or "# Subsampling removed: the full training set is used.")


def _normalise(code: str) -> list[str]:
    lines = [re.sub(r"#.*", "", line).strip() for line in code.split("\n")]
    return [re.sub(r"\s+", " ", line) for line in lines if line]


def contamination(call: Call) -> Reply:
    """{reference discussion, final solution} -> "Same" when the solution copies the reference."""
    reference = call.text_var("reference discussion")
    solution = call.text_var("final solution")
    ref, sol = set(_normalise(reference)), _normalise(solution)
    shared = sum(1 for line in sol if line in ref and len(line) > 12)
    share = shared / max(1, len([line for line in sol if len(line) > 12]))
    verdict = "Same" if share >= 0.6 else "Novel"
    return Reply(text=verdict, structured={"verdict": verdict})


def _data_files(task_dir: Path) -> list[str]:
    if not task_dir.is_dir():
        return []
    return sorted(str(p.relative_to(task_dir)) for p in task_dir.rglob("*")
                  if p.is_file() and p.suffix.lower() not in _DOC_SUFFIXES and not p.name.startswith("."))


def _header(path: Path) -> list[str]:
    with path.open(encoding="utf-8", errors="replace") as fh:
        return [c.strip().strip('"') for c in fh.readline().strip().split(",")]


def data(call: Call) -> Reply:
    """{initial solution, task description} -> unused input files folded in, or the sentinel sentence."""
    script = call.text_var("initial solution", "solution")
    task_dir = Path(call.ctx.task_dir)
    files = _data_files(task_dir)
    unused = [f for f in files if Path(f).name not in script]
    if not unused:
        return Reply(text=f"The script reads every data file ({', '.join(files)}). {ALL_USED}")
    extra_train: list[str] = []
    extra_join: list[dict] = []
    if (task_dir / "train.csv").is_file() and (task_dir / "test.csv").is_file():
        train_cols, test_cols = _header(task_dir / "train.csv"), _header(task_dir / "test.csv")
        for name in unused:
            if not name.lower().endswith(".csv"):
                continue
            cols = _header(task_dir / name)
            if set(train_cols) <= set(cols):
                extra_train.append(name)
            else:
                keys = [c for c in cols if c in train_cols and c in test_cols]
                if len(keys) == 1 and len(cols) > 1:
                    extra_join.append({"file": name, "key": keys[0]})
    spec = require_spec(script, "data") if (extra_train or extra_join) else None
    if spec is None:
        reason = ", ".join(unused)
        return Reply(text=f"Not read by the script: {reason}; none of them is a table that extends or joins "
                          f"the training data, so there is nothing to add. {ALL_USED}")
    spec["data"]["extra_train"] = sorted(set(spec["data"].get("extra_train", []) + extra_train))
    spec["data"]["extra_join"] = spec["data"].get("extra_join", []) + extra_join
    log.info("builtin.data.revised", extra_train=extra_train, extra_join=[j["file"] for j in extra_join])
    parts = [f"{f} adds labelled training rows" for f in extra_train]
    parts += [f"{j['file']} is joined on {j['key']}" for j in extra_join]
    return code_reply(render_solution(spec), "Now also used: " + "; ".join(parts) + ".")
