"""A builtin solution's machine-readable description, and the gene sections that carry it.

Every script the builtin agent writes carries one ``# builtin-spec: {json}`` line in its preamble
(task-wide facts: kind, metric, seed) and one ``# builtin-gene: {json}`` line at the top of each
non-stub ``# [SECTION: X]``. Keeping each gene's settings inside its own section means a textual
gene merge (evolution) or a block rewrite (MLE-STAR coder) keeps script and spec consistent:
whoever swaps a section swaps its settings with it.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from engine.tasks.metric_registry import canonical_metric as registry_metric
from engine.tasks.metric_registry import metric_info
from events.domain import TaskType

LOCI = ("DATA", "MODEL", "LOSS", "OPTIMIZER", "REGULARIZATION", "INITIALIZATION", "TRAINING_TRICKS")
STUB_LOCI = ("OPTIMIZER", "INITIALIZATION")
GENE_KEY = {"DATA": "data", "MODEL": "model", "LOSS": "loss", "REGULARIZATION": "reg",
            "TRAINING_TRICKS": "train"}

MARKER_RE = re.compile(r"^# \[SECTION: ([A-Z_]+)\][ \t]*$", re.M)
SPEC_RE = re.compile(r"^# builtin-spec: (\{.*\})[ \t]*$", re.M)
GENE_RE = re.compile(r"^# builtin-gene: (\{.*\})[ \t]*$", re.M)
SUBSAMPLE_BEGIN = "# --- subsampling: begin ---"
SUBSAMPLE_END = "# --- subsampling: end ---"
SUBSAMPLE_RE = re.compile(re.escape(SUBSAMPLE_BEGIN) + r".*?" + re.escape(SUBSAMPLE_END), re.S)
SUBSAMPLE_LIMIT_RE = re.compile(r"SUBSAMPLE_LIMIT\s*=\s*(\d+)")

# --- metrics -------------------------------------------------------------------------------

# The metric names are the registry's (engine/tasks/metric_registry.py: what `engine start`
# accepts and `engine grade` scores); a script writes its metric as a function of
# script_blocks/metrics.py, named as below where the two names differ.
_SCRIPT_NAMES = {"quadratic_weighted_kappa": "qwk"}
# Two metrics the scripts can print that the registry does not grade.
_SCRIPT_ONLY_ALIASES = {
    "mcc": ["mcc", "matthewscorrcoef", "matthewscorrelationcoefficient"],
    "medae": ["medae", "medianabsoluteerror"],
}
CLASSIFICATION_METRICS = {"roc_auc", "accuracy", "balanced_accuracy", "logloss", "f1", "mcc", "qwk"}
REGRESSION_METRICS = {"rmse", "mse", "mae", "rmsle", "r2", "medae"}
# Registry metrics a single-target draft never starts from: several targets (scored per target,
# then averaged), macro F1 on two classes, and MAP@k ("map@3": the k best classes per row).
MULTI_TARGET_METRICS = {"mcrmse": "rmse", "mean_columnwise_roc_auc": "roc_auc"}
# Metrics that count labels: two different models often score exactly alike on them.
LABEL_METRICS = {"accuracy", "balanced_accuracy", "f1", "f1_macro", "mcc", "qwk"}
LOWER_IS_BETTER = {"logloss", "rmse", "mse", "mae", "rmsle", "medae", "mcrmse"}


def canonical_metric(name: str) -> str | None:
    """The script's name of a metric the registry knows (or of mcc, medae), else None."""
    known = registry_metric(name or "")
    if known is not None:
        return _SCRIPT_NAMES.get(known, known)
    key = re.sub(r"[^a-z0-9]", "", (name or "").lower())
    return next((canon for canon, aliases in _SCRIPT_ONLY_ALIASES.items() if key in aliases), None)


def metric_function(metric: str) -> str:
    """The function of script_blocks/metrics.py that scores ``metric`` on one target."""
    if metric.startswith("map@"):
        return "map_at_k"
    return MULTI_TARGET_METRICS.get(metric, metric)


def _metric_kind(metric: str) -> str:
    if metric in REGRESSION_METRICS:
        return "regression"
    if metric in CLASSIFICATION_METRICS:
        return "classification"
    registry_name = {script: known for known, script in _SCRIPT_NAMES.items()}.get(metric, metric)
    task_type = metric_info(registry_name).task_type
    return "regression" if task_type == TaskType.regression else "classification"


def task_kind_and_metric(task: Any) -> tuple[str, str]:
    """(classification|regression, the script's metric name) for a TaskDescription.

    The metric decides first (it is what gets printed); the task type breaks ties, and an
    unknown metric falls back to the kind's usual one, which the solution text then says.
    """
    metric = canonical_metric(getattr(task, "evaluation_metric", ""))
    task_type = str(getattr(getattr(task, "task_type", ""), "value", getattr(task, "task_type", "")))
    if metric is not None:
        return _metric_kind(metric), metric
    if "regression" in task_type:
        return "regression", "rmse"
    return "classification", "accuracy"


# --- sections ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sections:
    preamble: str
    bodies: dict[str, str]          # locus -> body text (without the marker line)
    order: tuple[str, ...]

    @property
    def valid(self) -> bool:
        return sorted(self.order) == sorted(LOCI) and len(self.order) == len(LOCI)


def split_sections(script: str) -> Sections:
    matches = list(MARKER_RE.finditer(script))
    if not matches:
        return Sections(script, {}, ())
    bodies: dict[str, str] = {}
    order: list[str] = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(script)
        name = m.group(1)
        order.append(name)
        bodies.setdefault(name, script[m.end():end].strip("\n"))
    return Sections(script[: matches[0].start()], bodies, tuple(order))


def section_block(script: str, locus: str) -> str | None:
    """The verbatim, stripped text of one section, marker line included (for code_block)."""
    matches = list(MARKER_RE.finditer(script))
    for i, m in enumerate(matches):
        if m.group(1) == locus:
            end = matches[i + 1].start() if i + 1 < len(matches) else len(script)
            return script[m.start():end].strip()
    return None


def join_sections(preamble: str, bodies: dict[str, str]) -> str:
    parts = [preamble.rstrip("\n") + "\n\n"]
    for locus in LOCI:
        parts.append(f"# [SECTION: {locus}]\n{bodies[locus].strip(chr(10))}\n\n")
    return "".join(parts).rstrip("\n") + "\n"


def strip_marker(text: str) -> str:
    """A gene's code with its own marker line removed, if it came with one."""
    return MARKER_RE.sub("", text, count=1).strip("\n") if MARKER_RE.match(text.lstrip()) else text.strip("\n")


# --- embedded spec -------------------------------------------------------------------------


def _load(match: re.Match[str] | None) -> dict[str, Any] | None:
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def gene_of(text: str) -> dict[str, Any] | None:
    return _load(GENE_RE.search(text))


def subsample_of(text: str) -> int | None:
    block = SUBSAMPLE_RE.search(text)
    if block is None:
        return None
    m = SUBSAMPLE_LIMIT_RE.search(block.group(0))
    return int(m.group(1)) if m else None


def parse_spec(script: str) -> dict[str, Any] | None:
    """The full spec of a builtin script, or None when it is not (or no longer) one of ours."""
    head = _load(SPEC_RE.search(script))
    sections = split_sections(script)
    if head is None or not sections.valid:
        return None
    spec = dict(head)
    for locus, key in GENE_KEY.items():
        gene = gene_of(sections.bodies[locus])
        if gene is None:
            return None
        spec[key] = gene
    # Subsampling is read from the code, not the JSON: finalization removes the block textually.
    spec["data"] = {**spec["data"], "subsample": subsample_of(sections.bodies["DATA"])}
    return spec


def parse_gene_block(block: str) -> tuple[str, dict[str, Any]] | None:
    """(locus, gene) of a code block that is one of our sections, else None."""
    m = MARKER_RE.search(block)
    gene = gene_of(block)
    if m is None or gene is None or m.group(1) not in GENE_KEY:
        return None
    gene = dict(gene)
    if m.group(1) == "DATA":
        gene["subsample"] = subsample_of(block)
    return m.group(1), gene


def clone(spec: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(spec)


def canonical(value: Any) -> Any:
    """Dicts with sorted keys, recursively: a rendering must not depend on JSON round trips."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def py_repr(value: Any) -> str:
    return repr(canonical(value))


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(", ", ": "))
