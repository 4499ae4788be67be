"""The two first tasks a new user points the engine at (issue 62), against what they would try first.

    PYTHONPATH=$PWD .venv/bin/python bench/newuser_cases.py --seeds 0 1 2 --time-limit 120 [--json out.json]

- ``review-sentiment``: three-class review sentiment, 1,500 rows of one free-text column, in the
  split layout (``public/``, ``private/answers.csv``); the reviews are the seeded ones the builtin
  agent's text tests use (tests/builtin/text_datasets.py), so every machine sees the same text.
- ``shapes-32``: 2,000 colour images of ten shapes, 32x32 PNGs in the Kaggle folder layout
  (``train/``, ``test/``, ``train.csv`` of id and label, a sample submission), drawn seeded by
  tests/builtin/image_tasks.py.

Both are development tasks: the agent's own tests use their generators, so they say how a first
run looks, not how the agent generalizes (the held-out text and image tasks do, bench_automl.py
--media). Each row is our engine (builtin agent, preset time) and the first-try peers of the
task's kind (bench/automl_media_peers.py: TF-IDF + logistic regression; raw pixels into logistic
regression and into a histogram gradient booster), each graded on the private answers. The peers
run in the interpreter bench_automl.py gives its peers (``.venv-automl``, which ``make
bench-automl`` builds, where it exists): the shapes are PNGs with filters, which need Pillow.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FIRST_TRY = {"text": ("tfidf-logreg",), "image": ("pixels-logreg", "pixels-hgb")}


def review_sentiment(dest: Path) -> Path:
    from tests.builtin.text_datasets import review_task

    return review_task(dest, n=1500)


def shapes_32(dest: Path) -> Path:
    from tests.builtin.image_tasks import shapes_images, write_folder_task

    images, labels = shapes_images(2000, seed=0)
    _, answers = write_folder_task(dest / "public", images, labels)
    (dest / "private").mkdir(parents=True)
    answers.to_csv(dest / "private" / "answers.csv", index=False)
    return dest


CASES = {"review-sentiment": ("text", review_sentiment), "shapes-32": ("image", shapes_32)}


def measure(name: str, seed: int, limit: int, work: Path, peers_python: str, who: list[str]) -> dict:
    """Our run and the first-try peers on one case and seed (those of ``who``), each graded."""
    from bench.automl_media_peers import run_media_peer
    from bench.bench_automl import run_engine_in
    from engine.tasks import load_task
    from events.score import Score

    kind, write = CASES[name]
    task_dir = work / "tasks" / name
    if not task_dir.exists():
        write(task_dir)
    row: dict = {"task": name, "kind": kind, "seed": seed, "limit": limit, "preset": "time"}
    if "mle-star" in who:
        row["mle-star"] = run_engine_in(work / f"seed-{seed}", name, task_dir, "mle-star", "time", seed, limit,
                                        Score(load_task(task_dir).direction))
    for peer in (p for p in FIRST_TRY[kind] if p in who):
        row[peer] = run_media_peer(peer, task_dir, kind, seed, limit, work, peers_python)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="*", choices=list(CASES), default=list(CASES))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--time-limit", type=int, default=120)
    parser.add_argument("--json", dest="json_out", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--only", nargs="*", default=None, metavar="CONTENDER",
                        help="fit only these (mle-star and peer names; default: every one of the case's kind)")
    parser.add_argument("--peers-python", default=None, help="interpreter for the peers (default: .venv-automl's)")
    args = parser.parse_args()
    from bench.bench_automl import _automl_python

    peers_python = _automl_python(args.peers_python)
    rows = []
    with tempfile.TemporaryDirectory(prefix="newuser-") as tmp:
        for name in args.cases:
            for seed in args.seeds:
                who = args.only or ["mle-star", *FIRST_TRY[CASES[name][0]]]
                rows.append(measure(name, seed, args.time_limit, Path(tmp), peers_python, who))
                print(json.dumps(rows[-1]), flush=True)
                if args.json_out:
                    args.json_out.write_text(json.dumps(rows, indent=1) + "\n")
    for name in args.cases:
        mine = [r for r in rows if r["task"] == name]
        for who in ("mle-star", *FIRST_TRY[CASES[name][0]]):
            scores = [r[who]["score"] for r in mine if who in r and r[who]["score"] is not None]
            shown = " ".join(f"{s:.4f}" for s in scores)
            print(f"{name:18s} {who:14s} {shown}  (valid {len(scores)}/{len(mine)})")


if __name__ == "__main__":
    main()
