"""The peers of the text and image tasks (issue 62; docs/heldout-protocol.md, "Text and image
tasks"): what a user would try first, and AutoGluon-Tabular ``medium_quality`` given the table.

    python bench/automl_media_peers.py JOB.json        # one fit (bench_automl.py --media writes the job)

Per kind of task:

- text, and a table with a text column (``mixed``): ``tfidf-logreg``, a word TF-IDF (unigrams and
  bigrams, sublinear counts) of each text column beside the scaled numbers, into a logistic
  regression; ``ag-medium-media``, AutoGluon ``medium_quality`` on train.csv as it is (its own
  text n-gram features read the text column);
- images: ``pixels-logreg``, the raw pixels scaled to [0, 1] into a logistic regression;
  ``pixels-hgb``, a histogram gradient booster on the same pixels; ``ag-medium-media``,
  AutoGluon ``medium_quality`` on one column per pixel.

AutoGluon is given the bench's limit (``time_limit``); the first-try models need no budget and
take what they take. Like bench/automl_peers.py, the fitting half imports neither the engine nor
anything beyond numpy, pandas, scikit-learn and the peer's package, so it runs in whichever
interpreter holds AutoGluon (``.venv-automl``); images are read with Pillow where it is installed,
else with the small reader below (the PNGs ``engine tasks prepare`` writes: 8-bit, unfiltered).
The bench half (``media_bench``) runs our engine and these peers on every task and seed and
reports the development and held-out sets apart, and each kind apart, with bench_automl's tables.
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
PEERS_BY_KIND = {"text": ("tfidf-logreg", "ag-medium-media"), "mixed": ("tfidf-logreg", "ag-medium-media"),
                 "image": ("pixels-logreg", "pixels-hgb", "ag-medium-media")}
MEDIA_PEER_TITLES = {"tfidf-logreg": "TF-IDF + LR", "pixels-logreg": "pixels + LR", "pixels-hgb": "pixels + HGB",
                     "ag-medium-media": "AG medium (table)"}
# What a kept row records each peer's version by.
MEDIA_PEER_DISTRIBUTIONS = {"tfidf-logreg": "scikit-learn", "pixels-logreg": "scikit-learn",
                            "pixels-hgb": "scikit-learn", "ag-medium-media": "autogluon.tabular"}
KINDS = ("text", "mixed", "image")


def read_png(path: Path) -> np.ndarray:
    """A PNG's pixels, (height, width) or (height, width, channels) uint8."""
    try:
        from PIL import Image
    except ImportError:
        return _read_plain_png(path.read_bytes(), path)
    with Image.open(path) as image:
        return np.asarray(image)


def _read_plain_png(data: bytes, path: Path) -> np.ndarray:
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I", data[pos:pos + 4])[0], data[pos + 4:pos + 8]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", data[pos + 8:pos + 21])
        elif kind == b"IDAT":
            idat.append(data[pos + 8:pos + 8 + length])
        pos += 12 + length
    if header is None or header[2] != 8 or header[3] not in (0, 2) or header[6]:
        raise SystemExit(f"{path}: only 8-bit grey or RGB PNGs are read without Pillow; install Pillow")
    width, height, channels = header[0], header[1], 1 if header[3] == 0 else 3
    rows = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(height, width * channels + 1)
    if rows[:, 0].any():
        raise SystemExit(f"{path}: a filtered PNG; install Pillow to read it")
    return rows[:, 1:].reshape(height, width, channels).squeeze(-1 if channels == 1 else ())


def _pixels(folder: Path, ids: pd.Series) -> np.ndarray:
    return np.stack([read_png(folder / f"{i}.png").reshape(-1) for i in ids]).astype(np.float64)


def _frames(job: dict[str, Any]) -> tuple[Any, pd.Series, Any, pd.Series]:
    """Features, labels, test features and test ids; images as one row of pixels each."""
    train, target, id_column = pd.read_csv(job["train"]), job["target"], job["id_column"]
    if job["kind"] == "image":
        ids = pd.read_csv(job["sample"])[id_column]
        public = Path(job["public"])
        return _pixels(public / "train", train[id_column]), train[target], _pixels(public / "test", ids), ids
    test = pd.read_csv(job["test"])
    features = [c for c in train.columns if c not in (id_column, target)]
    return train[features], train[target], test[features], test[id_column]


def _tfidf_logreg(X: pd.DataFrame) -> Any:
    from sklearn.compose import ColumnTransformer
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    text = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numbers = [c for c in X.columns if c not in text]
    as_text = FunctionTransformer(lambda col: col.fillna("").astype(str))
    parts = [(f"tfidf-{c}", make_pipeline(as_text, TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)), c)
             for c in text]
    if numbers:
        parts.append(("numbers", make_pipeline(SimpleImputer(), StandardScaler()), numbers))
    return make_pipeline(ColumnTransformer(parts), LogisticRegression(max_iter=1000))


def first_try_model(peer: str, X: Any, seed: int) -> Any:
    """The scikit-learn pipeline a user would fit first for this peer."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    if peer == "tfidf-logreg":
        return _tfidf_logreg(X)
    scaled = FunctionTransformer(lambda x: x / 255.0)
    if peer == "pixels-logreg":
        return make_pipeline(scaled, LogisticRegression(max_iter=1000))
    return HistGradientBoostingClassifier(random_state=seed)


def _submission(job: dict[str, Any], ids: pd.Series, classes: list[Any], proba: np.ndarray | None,
                labels: np.ndarray | None) -> pd.DataFrame:
    """One label per row, or one probability column per class (the sample's columns)."""
    out = pd.DataFrame({job["id_column"]: np.asarray(ids)})
    if job["metric_kind"] == "label":
        out[job["target_columns"][0]] = labels
        return out
    assert proba is not None
    names = [str(c) for c in classes]
    for column in job["target_columns"]:
        out[column] = proba[:, names.index(str(column))]
    return out


def run_first_try(job: dict[str, Any]) -> pd.DataFrame:
    X, y, X_test, ids = _frames(job)
    model = first_try_model(job["peer"], X, int(job["seed"])).fit(X, y)
    if job["metric_kind"] == "label":
        return _submission(job, ids, [], None, model.predict(X_test))
    return _submission(job, ids, list(model.classes_), model.predict_proba(X_test), None)


def run_autogluon(job: dict[str, Any], work: Path) -> pd.DataFrame:
    from autogluon.tabular import TabularPredictor

    X, y, X_test, ids = _frames(job)
    if job["kind"] == "image":  # one column per pixel
        X = pd.DataFrame(X, columns=[f"px{i}" for i in range(X.shape[1])])
        X_test = pd.DataFrame(X_test, columns=X.columns)
    target = job["target"]
    train = X.assign(**{target: np.asarray(y)})
    # The seed reaches AutoGluon as the order of the training rows (bench/automl_peers.py).
    train = train.iloc[np.random.default_rng(int(job["seed"])).permutation(len(train))].reset_index(drop=True)
    problem = "binary" if y.nunique() == 2 else "multiclass"
    metric = "accuracy" if job["metric_kind"] == "label" else "log_loss"
    predictor = TabularPredictor(label=target, problem_type=problem, eval_metric=metric, path=str(work), verbosity=0)
    predictor.fit(train, time_limit=float(job["limit"]), presets="medium_quality")
    if job["metric_kind"] == "label":
        return _submission(job, ids, [], None, predictor.predict(X_test).to_numpy())
    proba = predictor.predict_proba(X_test, as_multiclass=True)
    return _submission(job, ids, list(proba.columns), proba.to_numpy(), None)


def fit_main(job_file: Path) -> None:
    job = json.loads(job_file.read_text())
    if job.get("peer") not in MEDIA_PEER_TITLES:
        sys.exit(f"{job_file}: peer must be one of {', '.join(MEDIA_PEER_TITLES)}, not {job.get('peer')!r}")
    if job["peer"] == "ag-medium-media":
        submission = run_autogluon(job, job_file.parent / f"{job_file.stem}-models")
    else:
        submission = run_first_try(job)
    submission.to_csv(job["out"], index=False)


# --- the bench: our engine and these peers on the text and image tasks -----------------------


def media_job(peer: str, task: Any, kind: str, seed: int, limit: int, out: Path) -> dict:
    """What a fit needs from a loaded task (engine.tasks.LoadedTask): plain paths and names."""
    from engine.tasks.metrics import metric_info

    return {"peer": peer, "kind": kind, "train": str(task.train_file),
            "test": str(task.test_file) if task.test_file else None, "sample": str(task.sample_submission),
            "public": str(task.public_dir), "id_column": task.id_column,
            "target": task.answer_column or task.target_columns[0], "target_columns": list(task.target_columns),
            "metric_kind": metric_info(task.metric).kind, "seed": seed, "limit": limit, "out": str(out)}


def run_media_peer(peer: str, task_dir: Path, kind: str, seed: int, limit: int, work: Path, python: str) -> dict:
    from bench.bench_automl import _grade
    from engine.tasks import load_task

    stem = work / f"{peer}-{task_dir.name}-{seed}"
    job = stem.with_suffix(".json")
    job.write_text(json.dumps(media_job(peer, load_task(task_dir), kind, seed, limit, stem.with_suffix(".csv"))))
    start = time.monotonic()
    proc = subprocess.run([python, str(Path(__file__).resolve()), str(job)], capture_output=True, text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        return {"score": None, "wall_s": wall, "error": proc.stderr.strip()[-300:]}
    return {"score": _grade(task_dir, stem.with_suffix(".csv")), "wall_s": wall}


def _versions(python: str) -> dict[str, str]:
    probe = ("import importlib.metadata as m\nfor d in ('scikit-learn', 'autogluon.tabular'):\n"
             "    try: print(d, m.version(d))\n    except m.PackageNotFoundError: print(d, '')")
    out = subprocess.run([python, "-c", probe], capture_output=True, text=True).stdout
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def media_tasks(task_set: str, named: list[str] | None) -> list[str]:
    """The text and image tasks of ``task_set`` (dev, heldout: every one ever held out, all)."""
    from engine.tasks.protocol import MEDIA_EVER_HELD_OUT, MEDIA_KINDS, MEDIA_SETS

    chosen = MEDIA_EVER_HELD_OUT if task_set == "heldout" else MEDIA_SETS.get(task_set, tuple(MEDIA_KINDS))
    tasks = named or list(chosen)
    unknown = [t for t in tasks if t not in MEDIA_KINDS]
    if unknown:
        sys.exit(f"not a text or image task: {', '.join(unknown)} (they are: {', '.join(MEDIA_KINDS)})")
    return tasks


def media_bench(args: argparse.Namespace, python: str, work: Path) -> list[dict]:
    """Every strategy of ours and every peer of the task's kind, per task and seed, one at a time
    (the order flips with the seed); a row is printed, and written to ``--json``, when complete."""
    from bench.automl_results import keep_row, provenance
    from bench.bench_automl import run_engine_in
    from engine.tasks import load_task, prepare_bundled
    from engine.tasks.protocol import kind_of, media_set_of
    from events.score import Score

    measured_on = {**provenance(python, []), "peers": _versions(python)}
    rows: list[dict] = []
    for name in media_tasks(args.task_set, args.tasks):
        task_dir, kind = prepare_bundled(name, args.tasks_dir / name), kind_of(name)
        task = load_task(task_dir)
        rule = Score(task.direction)
        for seed in args.seeds:
            row = {"task": name, "set": media_set_of(name), "kind": kind, "metric": task.metric,
                   "maximize": rule.maximize, "seed": seed, "limit": args.time_limit, "preset": args.preset,
                   "provenance": measured_on}
            contenders = [*args.strategies, *PEERS_BY_KIND[kind]]
            for who in contenders[::-1] if seed % 2 else contenders:
                if who in MEDIA_PEER_TITLES:
                    row[who] = run_media_peer(who, task_dir, kind, seed, args.time_limit, work, python)
                else:
                    row[who] = run_engine_in(work, name, task_dir, who, args.preset, seed, args.time_limit, rule)
            keep_row(rows, row, args.json_out)
    return rows


def media_report(rows: list[dict], strategies: list[str]) -> str:
    """The development set, the blind held-out set and the burned held-out tasks apart (a task in
    the set the protocol puts it in now: rules 6 and 8 of docs/heldout-protocol.md), and within
    each every kind apart: a table and a summary each, against the peers of that kind."""
    from bench.automl_tables import SET_TITLES, summary, table
    from engine.tasks.protocol import MEDIA_BURNED

    rows = [{**r, "set": "burned"} if r["task"] in MEDIA_BURNED else r for r in rows]
    blocks = []
    for key in ("dev", "heldout", "burned"):
        for kind in KINDS:
            part = [r for r in rows if r.get("set") == key and r.get("kind") == kind]
            if part:
                peers = list(PEERS_BY_KIND[kind])
                blocks.append("\n".join([f"## {SET_TITLES[key]}: {kind} tasks", "", table(part, strategies, peers),
                                          "", *summary(part, strategies, peers)]))
    return "\n\n".join(blocks) or "no row of a text or image task"


def kept_media_rows(paths: list[Path], limit: int, seeds: list[int]) -> list[dict]:
    """The rows of ``paths`` run at ``limit`` with one of ``seeds``; of several for a task and seed,
    the one measured on the latest commit (``provenance``), then the one of the later file."""
    from bench.automl_results import read_rows
    from bench.heldout_tables import commit_time
    from engine.tasks.protocol import MEDIA_KINDS

    found = [{**row, "from": path.name} for path in paths for row in read_rows(path)
             if int(row["limit"]) == limit and int(row["seed"]) in seeds and row["task"] in MEDIA_KINDS]
    times = {c: commit_time(c) or 0 for c in {str((r.get("provenance") or {}).get("commit", "")) for r in found} if c}
    found.sort(key=lambda r: times.get(str((r.get("provenance") or {}).get("commit", "")), 0))   # stable: file order
    return list({(r["task"], int(r["seed"])): r for r in found}.values())


def media_main(args: argparse.Namespace, python: str) -> None:
    """``bench_automl.py --media``: the text and image tasks against their own peers; with
    ``--report``, the report of kept rows alone (the commit each row was measured on is named)."""
    import contextlib
    import tempfile

    if args.report is not None:
        rows = kept_media_rows(args.report, args.time_limit, args.seeds)
        commits = sorted({str((r.get("provenance") or {}).get("commit", "?"))[:7] for r in rows})
        print(f"--time-limit {args.time_limit} s, seeds {args.seeds}; kept rows from "
              f"{', '.join(sorted({r['from'] for r in rows}))}, measured on commits {', '.join(commits)}")
        print(media_report(rows, args.strategies))
        return
    with contextlib.ExitStack() as stack:
        if args.keep is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-media-")))
        else:
            work = args.keep
            work.mkdir(parents=True, exist_ok=True)
        rows = media_bench(args, python, work)
    print(f"\npreset {args.preset}, --time-limit {args.time_limit} s for our runs and AutoGluon, seeds "
          f"{args.seeds}; scores are means over seeds of the private-answer grades, (n %) the mean "
          "fraction of the limit used")
    print(media_report(rows, args.strategies))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: automl_media_peers.py JOB.json (written by bench/bench_automl.py --media)")
    fit_main(Path(sys.argv[1]))
