"""bench/automl_media_peers.py: the text and image tasks' first-try peers fit for real (a
subprocess, as bench_automl.py --media runs them) and write submissions the grader accepts; the
report keeps the sets and the kinds apart; the PNG reader without Pillow says what it cannot read."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.grading.grader import grade_submission
from engine.tasks import load_task
from engine.tasks.bundled_image_files import png_bytes
from engine.tasks.metrics import metric_info
from tests.builtin.image_tasks import png_bytes as filtered_png_bytes
from tests.builtin.text_datasets import review_task

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("automl_media_peers", ROOT / "bench" / "automl_media_peers.py")
peers = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(peers)


def _digits_task(dest: Path) -> Path:
    """scikit-learn's 8x8 digit scans in the bundled image layout (public/ with train/ and test/
    folders of unfiltered PNGs, private/answers.csv), 600 of them, a quarter held out."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images, labels = np.clip(digits.images[:600] * 16, 0, 255).astype(np.uint8), digits.target[:600]
    public, private = dest / "public", dest / "private"
    for folder in (public / "train", public / "test", private):
        folder.mkdir(parents=True)
    ids, cut = np.arange(len(images)), 450
    for i in ids:
        (public / ("train" if i < cut else "test") / f"{i}.png").write_bytes(png_bytes(images[i]))
    pd.DataFrame({"id": ids[:cut], "digit": labels[:cut]}).to_csv(public / "train.csv", index=False)
    pd.DataFrame({"id": ids[cut:], "digit": 0}).to_csv(public / "sample_submission.csv", index=False)
    pd.DataFrame({"id": ids[cut:], "digit": labels[cut:]}).to_csv(private / "answers.csv", index=False)
    (public / "description.md").write_text("# Digits\n\nPredict `digit`.\n\n## Evaluation\n\nAccuracy.\n")
    return dest


def _fit(peer: str, task_dir: Path, kind: str, tmp_path: Path) -> float:
    task = load_task(task_dir)
    out = tmp_path / f"{peer}.csv"
    job = tmp_path / f"{peer}.json"
    job.write_text(json.dumps({
        "peer": peer, "kind": kind, "train": str(task.train_file),
        "test": str(task.test_file) if task.test_file else None, "sample": str(task.sample_submission),
        "public": str(task.public_dir), "id_column": task.id_column, "target": task.target_columns[0],
        "target_columns": list(task.target_columns), "metric_kind": metric_info(task.metric).kind,
        "seed": 0, "limit": 60, "out": str(out)}))
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "automl_media_peers.py"), str(job)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = grade_submission(task, out)
    assert report.valid_submission, report
    return report.score


def test_tfidf_logreg_reads_the_text_column_and_beats_the_commonest_class(tmp_path):
    task_dir = review_task(tmp_path / "reviews", n=600)
    assert _fit("tfidf-logreg", task_dir, "text", tmp_path) > 0.6     # three balanced classes: 1/3 by chance


def test_tfidf_logreg_takes_the_numbers_beside_the_text(tmp_path):
    task_dir = review_task(tmp_path / "reviews", n=600, extra_number=True)
    assert _fit("tfidf-logreg", task_dir, "mixed", tmp_path) > 0.6


@pytest.mark.parametrize("peer", ["pixels-logreg", "pixels-hgb"])
def test_the_pixel_peers_read_the_image_folders(peer, tmp_path):
    task_dir = _digits_task(tmp_path / "digits")
    assert _fit(peer, task_dir, "image", tmp_path) > 0.8                # ten digits: 0.1 by chance


def test_the_reader_without_pillow_refuses_a_filtered_png_by_name(tmp_path):
    image = np.arange(48, dtype=np.uint8).reshape(6, 8)
    plain, filtered = tmp_path / "plain.png", tmp_path / "filtered.png"
    plain.write_bytes(png_bytes(image))
    filtered.write_bytes(filtered_png_bytes(image))
    assert np.array_equal(peers._read_plain_png(plain.read_bytes(), plain), image)
    with pytest.raises(SystemExit, match="filtered.png: a filtered PNG; install Pillow"):
        peers._read_plain_png(filtered.read_bytes(), filtered)


def _row(task, task_set, kind, ours, **theirs):
    row = {"task": task, "set": task_set, "kind": kind, "metric": "accuracy", "maximize": True, "seed": 0,
           "limit": 120, "mle-star": {"score": ours, "wall_s": 110.0}}
    return row | {peer: {"score": score, "wall_s": 30.0} for peer, score in theirs.items()}


def test_the_report_keeps_the_sets_and_the_kinds_apart_each_with_its_own_peers():
    rows = [_row("quotes", "dev", "text", 0.5, **{"tfidf-logreg": 0.4, "ag-medium-media": 0.45}),
            _row("icons", "heldout", "image", 0.7, **{"pixels-logreg": 0.6, "pixels-hgb": 0.72,
                                                      "ag-medium-media": 0.65}),
            _row("glosses", "heldout", "text", 0.8, **{"tfidf-logreg": 0.82, "ag-medium-media": 0.7})]
    text = peers.media_report(rows, ["mle-star"])
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert heads == ["## Development set (tuned on): text tasks", "## Held-out set (not tuned on): text tasks",
                     "## Held-out set (not tuned on): image tasks"]
    image_part = text.split("## Held-out set (not tuned on): image tasks")[1]
    assert "pixels + HGB" in image_part and "TF-IDF + LR" not in image_part
    assert "vs pixels + HGB: ahead on 0/1" in image_part and "vs pixels + LR: ahead on 1/1" in image_part
    assert "vs TF-IDF + LR: ahead on 0/1, within 1 % on 0/1" in text.split("image tasks")[0].split("## Held-out")[1]


def test_kept_rows_report_a_burned_task_apart_and_a_later_row_replaces_an_earlier_one(tmp_path):
    """``bench_automl.py --media --report``: rules 6 and 8, a burned task stays in the report, apart."""
    from engine.tasks.protocol import MEDIA_BURNED, MEDIA_HELD_OUT, kind_of

    burned, blind = next(iter(MEDIA_BURNED)), MEDIA_HELD_OUT[0]
    kinds = {burned: kind_of(burned), blind: kind_of(blind)}
    def row(task, ours, limit=120):
        return {**_row(task, "heldout", kinds[task], ours, **dict.fromkeys(peers.PEERS_BY_KIND[kinds[task]], 0.4)),
                "limit": limit}

    first, later = tmp_path / "first.json", tmp_path / "later.json"
    first.write_text(json.dumps([row(burned, 0.5), row(blind, 0.5)]))
    later.write_text(json.dumps([row(blind, 0.9), row(blind, 0.1, limit=600)]))
    rows = peers.kept_media_rows([first, later], 120, [0, 1, 2])
    assert sorted((r["task"], r["mle-star"]["score"], r["from"]) for r in rows) == sorted(
        [(burned, 0.5, "first.json"), (blind, 0.9, "later.json")])
    heads = [line for line in peers.media_report(rows, ["mle-star"]).splitlines() if line.startswith("## ")]
    assert f"## Held-out set (not tuned on): {kinds[blind]} tasks" in heads
    assert f"## Burned held-out tasks (read to debug or to decide a change; still reported): {kinds[burned]} tasks" in heads


def test_the_media_tasks_of_each_set_and_a_name_that_is_none_refused():
    from engine.tasks.protocol import MEDIA_DEVELOPMENT, MEDIA_EVER_HELD_OUT

    assert peers.media_tasks("dev", None) == list(MEDIA_DEVELOPMENT)
    assert peers.media_tasks("heldout", None) == list(MEDIA_EVER_HELD_OUT)
    assert sorted(peers.media_tasks("all", None)) == sorted({*MEDIA_DEVELOPMENT, *MEDIA_EVER_HELD_OUT})
    with pytest.raises(SystemExit, match="not a text or image task: penguins"):
        peers.media_tasks("all", ["penguins"])
