"""The campaign report on a campaign stream written by hand around real runs (issue 17, Build 4):
a graded run, a run that failed, a cell abandoned after failed attempts, a cell whose run does not
exist yet — and a task name and a reason that are hostile HTML. Mean ± SE over several graded
seeds is checked on a real campaign in test_campaign_kill.py."""

from __future__ import annotations

import json
import re

import pytest

from engine.campaign.stream import fold_campaign, stream_id
from engine.campaign.tally import build_report, mean_and_se, report_json
from engine.campaign.tally_html import render_html
from engine.run import lifecycle as runs_mod
from events.base import NewEvent
from events.campaign import CampaignAttemptFailed, CampaignCell, CampaignRunCreated, CampaignRunEnded, CampaignStarted
from tests.core.helpers import engine_env, run_engine

SCRIPTED = "tests.pipeline.scripted_agent:ScriptedBackend"
HOSTILE_TASK = '<script>alert("task")</script>'
HOSTILE_REASON = '<img src=x onerror=alert("reason")>'


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    work = tmp_path_factory.mktemp("report")
    db = work / "e.db"
    for run_id, args in (("graded", ["--agent", SCRIPTED]), ("failed", ["--agent", SCRIPTED, "--strategy", "tests.toy.strategy:fails_at_once"]),
                         ("abandoned", ["--agent", SCRIPTED])):
        proc = run_engine("start", "--task", "iris", "--preset", "quick", *args, "--run-id", run_id, "--db", db,
                          env=engine_env(), timeout=300, cwd=work)
        assert proc.returncode in (0, 1), proc.stderr[-2000:]
    cells = [CampaignCell(task="iris", seed=s) for s in (0, 1, 2, 3)] + [CampaignCell(task=HOSTILE_TASK, seed=0)]
    k = [c.key for c in cells]
    store = runs_mod.open_store(db)
    store.create_run(stream_id("r"), strategy="campaign", task="r")
    store.append(stream_id("r"), [NewEvent(event=e, scope="campaign") for e in (
        CampaignStarted(name="r", cells=cells),
        CampaignRunCreated(cell=k[0], run_id="graded"), CampaignRunCreated(cell=k[1], run_id="failed"),
        CampaignRunCreated(cell=k[2], run_id="abandoned"), CampaignRunCreated(cell=k[3], run_id="lost"),
        CampaignRunEnded(cell=k[0], run_id="graded", status="completed", attempts=1),
        CampaignRunEnded(cell=k[1], run_id="failed", status="failed", attempts=1),
        CampaignAttemptFailed(cell=k[2], run_id="abandoned", attempt=1, reason="the node running it died"),
        CampaignAttemptFailed(cell=k[2], run_id="abandoned", attempt=2, reason=HOSTILE_REASON),
        CampaignRunEnded(cell=k[2], run_id="abandoned", status="abandoned", attempts=2,
                         reason=f"2 attempts failed; last: {HOSTILE_REASON}"))], expected_seq=0)
    yield store, db, work
    store.close()


def test_report_counts_grades_and_lists_every_failure(campaign):
    store, db, _ = campaign
    report = build_report(store, fold_campaign(store.read(stream_id("r"))))
    graded = json.loads(run_engine("grade", "graded", "--db", db, "--json", env=engine_env()).stdout)["score"]
    data = report_json(report)
    assert data["counts"] == {"completed": 1, "failed": 1, "abandoned": 1, "missing": 1, "planned": 1}
    iris = data["groups"][0]
    assert (iris["task"], iris["runs"], iris["graded"]) == ("iris", 4, 1)
    assert iris["mean"] == pytest.approx(graded) and iris["se"] is None  # one graded seed: no SE
    assert iris["scores"] == [{"seed": 0, "score": graded}]
    assert iris["metric"] == "logloss" and iris["lower_is_better"] is True
    assert iris["medals"] is not None and set(iris["thresholds"]) == {"gold", "silver", "bronze", "median"}
    kinds = [(f["run_id"], f["kind"]) for f in data["failures"]]
    assert ("failed", "run failed") in kinds and ("abandoned", "abandoned") in kinds and ("lost", "missing run") in kinds
    row = next(r for r in data["runs"] if r["run_id"] == "graded")
    assert row["wall_seconds"] >= row["driven_seconds"] > 0
    assert [k for k in kinds if k == ("abandoned", "attempt failed")] == [("abandoned", "attempt failed")] * 2
    assert any("Phase 1" in f["reason"] for f in data["failures"] if f["kind"] == "run failed")
    planned = [r for r in data["runs"] if r["task"] == HOSTILE_TASK]
    assert planned == [dict(planned[0], run_id=None, status="planned", test_score=None)]
    assert set(data) == {"name", "counts", "groups", "runs", "failures"}


def test_html_is_one_escaped_page_with_a_plot(campaign):
    store, _, _ = campaign
    page = render_html(build_report(store, fold_campaign(store.read(stream_id("r")))))
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;" in page and "&lt;img src=x" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "the page must not load anything"


def test_cli_report_terminal_json_and_html(campaign):
    _, db, work = campaign
    table = run_engine("campaign", "report", "r", "--db", db, env=engine_env(), cwd=work)
    assert table.returncode == 0 and "iris" in table.stdout and "n=1, no SE" in table.stdout, table.stderr
    assert "failures" in table.stdout and "abandoned" in table.stdout
    out = work / "page.html"
    written = run_engine("campaign", "report", "r", "--db", db, "-o", out, env=engine_env(), cwd=work)
    assert written.returncode == 0 and out.read_text().startswith("<!DOCTYPE html>")
    missing = run_engine("campaign", "report", "nope", "--db", db, env=engine_env(), cwd=work)
    assert missing.returncode == 2 and "no campaign 'nope'" in missing.stderr


def test_mean_and_standard_error():
    assert mean_and_se([]) == (None, None)
    assert mean_and_se([0.5]) == (0.5, None)
    mean, se = mean_and_se([1.0, 2.0, 4.0])
    # deviations -4/3, -1/3, 5/3: sample variance (16 + 1 + 25) / 9 / 2 = 7/3; SE = sqrt(7/3) / sqrt(3)
    assert mean == pytest.approx(7 / 3) and se == pytest.approx(7 ** 0.5 / 3)
