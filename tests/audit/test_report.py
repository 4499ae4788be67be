"""``engine report``: one valid, self-contained HTML page with the SVG plots and every evaluation."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from engine.audit.report import render_report
from tests.audit.helpers import engine

VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "source", "wbr"}


class Checker(HTMLParser):
    """Tag balance (HTML and SVG), and every attribute that could load something."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.links: list[str] = []
        self.tags: dict[str, int] = {}
        self.eval_seqs: list[int] = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "action", "data") and value:
                self.links.append(value)
            if name == "data-seq":
                self.eval_seqs.append(int(value))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name == "data-seq":
                self.eval_seqs.append(int(value))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> (open: {self.stack[-3:]})")
            return
        self.stack.pop()


def check(html: str) -> Checker:
    assert html.startswith("<!DOCTYPE html>")
    c = Checker()
    c.feed(html)
    c.close()
    assert not c.errors, c.errors[:5]
    assert c.stack == [], c.stack
    return c


def assert_self_contained(html: str, c: Checker) -> None:
    assert all(not re.match(r"\s*(https?:)?//", link) for link in c.links), c.links
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*https?://""", html, re.I)
    assert "<script" not in html.lower() and "<link" not in html.lower() and "@import" not in html
    assert "url(http" not in html


def assert_complete(html: str, c: Checker, log) -> None:
    assert c.tags.get("svg", 0) >= 5  # score plot, three bar panels, lineage graph
    points = log.state.evaluations
    assert points
    assert sorted(c.eval_seqs) == sorted(p.seq for p in points)  # every evaluation point, once
    assert 'class="best"' in html  # the best-so-far curve
    for section in ("Score over driven time", "Cost, agent calls and time per phase", "Lineage of the final submission",
                    "Notes and warnings"):
        assert section in html
    s = log.state
    for fact in (s.strategy, s.backend, s.status, f"{s.events} events", str(s.agent_call_count)):
        assert fact in html


def test_report_of_a_simulated_pipeline_run(sim_run, tmp_path):
    html = render_report(sim_run.log)
    c = check(html)
    assert_self_contained(html, c)
    assert_complete(html, c, sim_run.log)
    assert "retrieved model" in html and "★ final" in html
    for scope in ("phase1", "phase2/path-0", "phase2/path-1", "phase3", "final"):
        assert f"{scope}</span>" in html  # legend entries, coloured per phase/path scope
    assert "$0.1080" in html  # total cost card
    (tmp_path / "sim.html").write_text(html, encoding="utf-8")


def test_best_so_far_respects_the_metric_direction():
    from engine.audit.svg_plots import Point, best_so_far
    from events.score import Score

    up, down = Score.of("maximize"), Score.of("minimize")
    pts = [Point(i + 1, "s", "p", "x", float(i), v, False) for i, v in enumerate([0.5, 0.4, 0.6, 0.3, 0.7])]
    assert [v for _, v, _ in best_so_far(pts, up)] == [0.5, 0.6, 0.7]
    assert [v for _, v, _ in best_so_far(pts, down)] == [0.5, 0.4, 0.3]
    pts.append(Point(9, "s", "p", "x", 9.0, None, True))
    assert len(best_so_far(pts, up)) == 3
    pts.append(Point(10, "s", "p", "x", 10.0, 0.7, False))   # an equal score is no improvement
    assert len(best_so_far(pts, up)) == 3


def test_cli_report_of_a_real_engine_run(scripted_run, tmp_path):
    out = tmp_path / "r" / "report.html"
    proc = engine("report", scripted_run.run_id, "--db", scripted_run.db, "-o", out)
    assert proc.returncode == 0, proc.stderr
    html = out.read_text(encoding="utf-8")
    c = check(html)
    assert_self_contained(html, c)
    assert_complete(html, c, scripted_run.log)


def test_cli_report_unknown_run_exits_2(scripted_run, tmp_path):
    proc = engine("report", "nope", "--db", scripted_run.db, "-o", tmp_path / "x.html")
    assert proc.returncode == 2 and "no run" in proc.stderr
    assert not (tmp_path / "x.html").exists()


@pytest.mark.slow
def test_report_of_a_real_mle_star_builtin_run(iris_run):
    html = render_report(iris_run.log)
    c = check(html)
    assert_self_contained(html, c)
    assert_complete(html, c, iris_run.log)


def test_report_of_a_run_without_solutions_or_evaluations_still_renders(tmp_path):
    from engine.audit.runlog import load_run
    from events.base import NewEvent
    from events.core import Note, RunStarted
    from events.domain import PipelineConfig
    from store.sqlite import SQLiteEventStore
    from tests.support.sim import make_task

    store = SQLiteEventStore(tmp_path / "e.db")
    store.create_run("E", strategy="t", task="sim-task")
    started = RunStarted(strategy="t", backend="t", seed=0, config=PipelineConfig().model_dump(mode="json"),
                         task=make_task(), task_dir="/nonexistent", run_dir="/nonexistent")
    store.append("E", [NewEvent(event=started, scope="run"),
                       NewEvent(event=Note(level="warning", message="nothing <happened>"), scope="run")], expected_seq=0)
    html = render_report(load_run(store, "E"))
    check(html)
    assert "no solutions" in html and "No evaluation was recorded" in html
    assert "nothing &lt;happened&gt;" in html  # notes are escaped
