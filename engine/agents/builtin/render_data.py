"""The preamble (imports, task constants, metric) and the DATA gene, assembled from their blocks.

The code is in ``script_blocks/``: ``preamble.py`` and ``metrics.py``; ``data.py`` (with
``extra_train.py``, ``side_table.py``, ``target.py``, ``subsample.py``, ``features.py``,
``labels.py``, ``text_features.py`` and ``holdout_split.py`` going in at its insertion points) and
``preprocessor.py``.
"""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.blocks import block, body, definitions, fill, functions, insert, lines
from engine.agents.builtin.catalog import MANY_CLASSES, NATIVE_MISSING_FAMILIES
from engine.agents.builtin.render_image import render_image_data
from engine.agents.builtin.spec import LOWER_IS_BETTER, dumps, metric_function, py_repr

# The features a DATA gene may ask for: the functions of script_blocks/features.py, in its order.
FEATURE_OPTIONS = functions("features")
TITLE_SUFFIX = "(written by the builtin offline agent)"


def quoted(text: str) -> str:
    """A string as the scripts write it: in double quotes."""
    return f'"{text}"'


def render_preamble(spec: dict[str, Any], *, suffix: str = TITLE_SUFFIX) -> str:
    head = {k: spec[k] for k in ("kind", "metric", "seed", "title")}
    if spec.get("targets"):
        head["targets"] = list(spec["targets"])
    metric = spec["metric"]
    prepare = "proper_probabilities" if spec["kind"] == "classification" else "plain_values"
    code = block("preamble", SEED=str(int(spec["seed"])), TASK_KIND=quoted(spec["kind"]), METRIC=quoted(metric),
                 GREATER_IS_BETTER=str(metric not in LOWER_IS_BETTER))
    score = lines(body("metrics", prepare), body("metrics", metric_function(metric)))
    title = f'"""{spec["title"]} {suffix}."""\n# builtin-spec: {dumps(head)}\n'
    if spec.get("targets"):
        # Several targets: each scored alone (multi_target_score.py), the mean printed.
        per_target = insert(block("multi_target_score"), score=score)
        return title + definitions(insert(code, score=body("metrics", "mean_over_targets")), per_target) + "\n"
    return title + insert(code, score=score)


def render_subsample_block(limit: int) -> str:
    return block("subsample", SUBSAMPLE_LIMIT=str(int(limit))).rstrip("\n")


def _tables(data: dict[str, Any]) -> str:
    """The extra labelled rows and side tables the gene names, read in that order."""
    extra = [fill(block("extra_train"), FILE=name) for name in data.get("extra_train", [])]
    side = [fill(block("side_table"), FILE=join["file"], KEY=join["key"]) for join in data.get("extra_join", [])]
    return lines(*extra, *side)


def _features(data: dict[str, Any]) -> str:
    return lines(*(body("features", feature) for feature in data.get("features", [])))


def _text(data: dict[str, Any]) -> str:
    """The free-text columns' stacked predictions (``text_features.py``), when the gene reads them."""
    text = data.get("text")
    if not text:
        return ""
    return block("text_features", TEXT_MODEL=quoted(text["model"]), TEXT_NGRAMS=quoted(text["ngrams"]),
                 TEXT_VOCABULARY=str(int(text["vocabulary"])))


def _labelled_rows(data: dict[str, Any]) -> dict[str, str]:
    """What ``data.py`` and ``image_data.py`` share, at their insertion points of these names: the
    target found, the search's row cap, the labels and the validation split."""
    subsample = render_subsample_block(int(data["subsample"])) if data.get("subsample") else ""
    return {"target": block("target"), "subsample": subsample, "labels": block("labels"),
            "split": block("holdout_split", VAL_SIZE=str(float(data.get("val_size", 0.2))))}


def render_data(spec: dict[str, Any], *, indent: str = "") -> str:
    data = spec["data"]
    gene = {k: v for k, v in data.items() if k != "subsample"}
    if data.get("images"):
        code = render_image_data(data, _labelled_rows(data))
    else:
        code = insert(block("data", MANY_CLASSES=str(MANY_CLASSES)), tables=_tables(data),
                      features=_features(data), free_text=_text(data), **_labelled_rows(data))
    prep = block("preprocessor", NATIVE_MISSING_FAMILIES=repr(NATIVE_MISSING_FAMILIES), PREP=py_repr(data["prep"]))
    targets = block("multi_target_data", TARGETS=repr(list(spec["targets"]))) if spec.get("targets") else None
    text = lines(f"# builtin-gene: {dumps(gene)}", code, prep, targets)
    return "\n".join(indent + line if line else line for line in text.split("\n"))

