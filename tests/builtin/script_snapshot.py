"""Every kind of script the builtin agent renders, for a broad, seeded set of specs.

A tool for changing the renderers without changing what they write: ``python -m
tests.builtin.script_snapshot write FILE`` stores a digest of each rendered script, and ``check
FILE`` after the change names every script that came out different. The set covers every learner
(alone and in blends, with its own preprocessing), every DATA, LOSS and TRAINING_TRICKS option
(features, encodings, scalers, gaps, extra and side tables, subsampling; class weights, target
transforms; the five blends, early stopping, seed bags, grown bags, folds fitted to the window,
calibration, the test versions of ``test_gene``), both task kinds and every metric, single
sections, ablation studies and the retriever's example code.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.agents.builtin.ablation_variants import COMPONENT_LOCUS, ablation_variant
from engine.agents.builtin.catalog import FAMILIES, example_code
from engine.agents.builtin.render import new_spec, render_ablation, render_section, render_solution, with_families
from engine.agents.builtin.render_data import FEATURE_OPTIONS
from engine.agents.builtin.render_final import GROWN_BAG, test_gene
from engine.agents.builtin.render_train import COMBINE_METHODS
from engine.agents.builtin.spec import CLASSIFICATION_METRICS, LOCI, REGRESSION_METRICS, clone

KINDS = {"classification": sorted(CLASSIFICATION_METRICS), "regression": sorted(REGRESSION_METRICS)}
ENCODINGS = ("ordinal", "onehot", "native")
SCALES = ("none", "standard", "robust", "quantile")
IMPUTES = ("median", "native", "mean")
TARGET_TRANSFORMS = ("none", "standardize", "log1p", "poisson")


def _families(kind: str) -> list[str]:
    return [k for k, f in FAMILIES.items() if (f.clf_class if kind == "classification" else f.reg_class)]


def _random_spec(rng: random.Random, kind: str) -> dict[str, Any]:
    """One spec with every gene drawn at random from the options the agent can write."""
    keys = _families(kind)
    families = [FAMILIES[k] for k in rng.sample(keys, rng.choice((1, 1, 2, 3)))]
    spec = new_spec(kind, rng.choice(KINDS[kind]), rng.randrange(5), rng.choice((None, 3000)), families[0])
    if len(families) > 1 or rng.random() < 0.2:
        spec = with_families(spec, families)
    data = spec["data"]
    data["features"] = [f for f in FEATURE_OPTIONS if rng.random() < 0.4]
    data["prep"] = {"num_impute": rng.choice(IMPUTES), "indicators": rng.random() < 0.5,
                    "scale": rng.choice(SCALES), "encode": rng.choice(ENCODINGS)}
    data["val_size"] = rng.choice((0.2, 0.25))
    if rng.random() < 0.15:
        data["extra_train"] = ["extra.csv"]
    if rng.random() < 0.15:
        data["extra_join"] = [{"file": "side.csv", "key": "id"}]
    if kind == "classification":
        spec["loss"] = {"class_weight": rng.choice((None, "balanced"))}
    else:
        spec["loss"] = {"target_transform": rng.choice(TARGET_TRANSFORMS)}
    train = spec["train"]
    train["combine"] = rng.choice(COMBINE_METHODS)
    train["early_stop"] = rng.random() < 0.6
    train["final_fit"] = rng.choice(("full", "full", "holdout"))
    for key, values in (("seeds", (1, 3, 5)), ("window_folds", (True,)), ("rounds", (10, 40)),
                        ("meta_c", (0.1, 10.0)), ("calibrate", (True,))):
        if rng.random() < 0.3:
            train[key] = rng.choice(values)
    return spec


def _unit_specs() -> Iterator[tuple[str, dict[str, Any]]]:
    """One spec per learner, kind and metric, as the agent's first draft writes it."""
    for kind, metrics in KINDS.items():
        for metric in metrics:
            for key in _families(kind):
                yield f"new/{kind}/{metric}/{key}", new_spec(kind, metric, 0, None, FAMILIES[key])


def specs(count: int = 400, seed: int = 0) -> Iterator[tuple[str, dict[str, Any]]]:
    yield from _unit_specs()
    rng = random.Random(seed)
    for i in range(count):
        yield f"random/{i}", _random_spec(rng, rng.choice(sorted(KINDS)))


def _test_versions(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for grow in (0, GROWN_BAG):
        out = clone(spec)
        out["train"] = test_gene(spec["train"], spec["metric"], 3000, grow_seeds=grow)
        out["data"]["subsample"] = None
        yield f"test-grow{grow}", out


def scripts(count: int = 400, seed: int = 0) -> Iterator[tuple[str, str]]:
    """(name, text) of every rendered script, section, study and example of the set."""
    for name, spec in specs(count, seed):
        yield f"{name}/solution", render_solution(spec)
        for locus in LOCI:
            yield f"{name}/section/{locus}", render_section(spec, locus)
        for suffix, version in _test_versions(spec):
            yield f"{name}/{suffix}", render_solution(version)
        variants = [("baseline", "the solution as it is", spec)]
        for component in sorted(COMPONENT_LOCUS):
            found = ablation_variant(spec, component)
            if found is not None:
                variants.append((component, found[0], found[1]))
        yield f"{name}/ablation", render_ablation(spec, variants)
    for kind in KINDS:
        for key in _families(kind):
            yield f"example/{kind}/{key}", example_code(FAMILIES[key], kind)


def digests(count: int = 400, seed: int = 0) -> dict[str, str]:
    return {name: hashlib.sha256(text.encode()).hexdigest() for name, text in scripts(count, seed)}


def main(argv: list[str]) -> int:
    """``write FILE`` stores the digests; ``check FILE`` lists the scripts that differ from them."""
    if len(argv) != 2 or argv[0] not in ("write", "check"):
        print("usage: python -m tests.builtin.script_snapshot write|check FILE", file=sys.stderr)
        return 2
    path = Path(argv[1])
    now = digests()
    if argv[0] == "write":
        path.write_text(json.dumps(now, indent=0, sort_keys=True) + "\n")
        print(f"{len(now)} scripts written to {path}")
        return 0
    before = json.loads(path.read_text())
    changed = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
    for name in changed:
        print("changed:", name)
    print(f"{len(now)} scripts, {len(changed)} changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
