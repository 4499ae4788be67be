"""`engine ui` in a real browser (Debian's Chromium), on SQLite and on PostgreSQL: pages follow
the log as it is appended, without a reload; hostile text from the log renders as text."""

from __future__ import annotations

from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.support.ui import Select

from engine.ui.pages_run import EVENT_ROWS
from events.campaign import CampaignCell
from tests.ui.browser import serve_ui as serve
from tests.ui.browser import text_of, wait_for
from tests.ui.writer import CampaignWriter, RunWriter

SCRIPT_V1 = "import pandas as pd\nmodel = 'rf'\nprint('Final Validation Performance: 0.7')\n"
SCRIPT_V2 = "import pandas as pd\nmodel = 'gbm'\nprint('Final Validation Performance: 0.9')\n"


def _mark(driver) -> None:
    """A value that lives only as long as this document: a reload would lose it."""
    driver.execute_script("window.__sameDocument = 'kept';")


def _same_document(driver) -> bool:
    return driver.execute_script("return window.__sameDocument === 'kept';")


def test_run_page_follows_phase_and_best_score_without_reload(browser, backend):
    run = RunWriter(backend.store, "live-run")
    run.phase("phase1")
    with serve(backend.db) as url:
        browser.get(url + "run/live-run")
        wait_for(lambda: text_of(browser, "live-state") == "live", "the page to connect to the live feed")
        assert text_of(browser, "run-phase") == "phase1"
        assert text_of(browser, "run-best") == "-"
        _mark(browser)
        run.solution("s1", SCRIPT_V1)
        run.evaluated("s1", 0.7)
        wait_for(lambda: text_of(browser, "run-best") == "0.7", "the best score to reach 0.7")
        run.phase("phase2")
        run.solution("s2", SCRIPT_V2, parents=("s1",), scope="phase2/path-0", phase="refined", origin="refinement")
        run.evaluated("s2", 0.9, scope="phase2/path-0")
        wait_for(lambda: text_of(browser, "run-phase") == "phase2", "the phase to become phase2")
        wait_for(lambda: text_of(browser, "run-best") == "0.9", "the best score to reach 0.9")
        # the new events arrived on top of the events table, and the solutions table grew
        wait_for(lambda: browser.find_element("css selector", "#events-body tr").get_attribute("data-type")
                 == "SolutionEvaluated", "the newest event on top of the table")
        assert "s2" in text_of(browser, "sec-solutions")
        assert _same_document(browser), "the page was reloaded"


def test_runs_list_sorts_filters_and_follows_new_runs(browser, backend):
    a = RunWriter(backend.store, "run-a", task="wine")
    a.solution("a1", SCRIPT_V1)
    a.evaluated("a1", 0.9)
    b = RunWriter(backend.store, "run-b", task="iris")
    b.solution("b1", SCRIPT_V1)
    b.evaluated("b1", 0.4)
    visible = lambda: [r.get_attribute("data-run") for r in browser.find_elements("css selector", "#runs-body tr")
                       if r.is_displayed()]
    with serve(backend.db) as url:
        browser.get(url)
        wait_for(lambda: text_of(browser, "live-state") == "live", "the page to connect to the live feed")
        _mark(browser)
        browser.find_element("css selector", 'th[data-col="6"]').click()  # best score, ascending
        assert visible() == ["run-b", "run-a"]
        browser.find_element("css selector", 'th[data-col="6"]').click()  # descending
        assert visible() == ["run-a", "run-b"]
        RunWriter(backend.store, "run-c", task="wine").fail("no working solution")
        # The run's events land in more than one write: wait for its last one (failed), or the
        # status filter below could meet the row while it still says "running".
        wait_for(lambda: "run-c" in visible() and browser.find_element("css selector", 'tr[data-run="run-c"]')
                 .get_attribute("data-status") == "failed", "the new run to appear in the list as failed")
        assert visible()[-1] == "run-c"  # still sorted by best score (run-c has none)
        browser.find_element("id", "runs-filter").send_keys("wine")
        assert sorted(visible()) == ["run-a", "run-c"]
        Select(browser.find_element("id", "runs-status")).select_by_value("failed")
        assert visible() == ["run-c"]
        a.complete(0.9)  # a change arrives while filtered: the filter holds, run-a now completed
        wait_for(lambda: browser.find_element("css selector", 'tr[data-run="run-a"]').get_attribute("data-status")
                 == "completed", "run-a to show as completed")
        assert visible() == ["run-c"]
        assert _same_document(browser), "the page was reloaded"


def test_a_page_left_open_keeps_a_bounded_events_table(browser, backend):
    """New events go on top; beyond EVENT_ROWS the oldest rows leave the page (bounded memory)."""
    run = RunWriter(backend.store, "chatty-run")
    with serve(backend.db) as url:
        browser.get(url + "run/chatty-run")
        wait_for(lambda: text_of(browser, "live-state") == "live", "the page to connect to the live feed")
        _mark(browser)
        for _ in range(3):
            run.notes(250)
        top = lambda: browser.find_element("css selector", "#events-body tr").get_attribute("data-seq")
        wait_for(lambda: top() == str(run.head), f"the newest event (seq {run.head}) on top")
        rows = browser.execute_script("return document.querySelectorAll('#events-body tr').length")
        assert rows == EVENT_ROWS < run.head
        assert _same_document(browser), "the page was reloaded"


def test_campaign_page_shows_runs_finishing(browser, backend):
    cells = [CampaignCell(task="toy", seed=0), CampaignCell(task="toy", seed=1)]
    campaign = CampaignWriter(backend.store, "nightly", cells)
    runs = []
    for i, cell in enumerate(cells):
        run = RunWriter(backend.store, f"toy-s{i}")
        run.phase("phase1")
        campaign.created(cell, run.run_id)
        runs.append(run)
    with serve(backend.db) as url:
        browser.get(url + "campaign/nightly")
        wait_for(lambda: text_of(browser, "live-state") == "live", "the page to connect to the live feed")
        statuses = lambda: [c.get_attribute("data-status") for c in browser.find_elements("css selector", "td.cell")]
        assert statuses() == ["running", "running"]
        _mark(browser)
        runs[0].solution("a", SCRIPT_V1)
        runs[0].evaluated("a", 0.7)
        runs[0].complete(0.7)
        campaign.ended(cells[0], "toy-s0", "completed")
        wait_for(lambda: statuses() == ["completed", "running"], "the first run to show as completed")
        runs[1].fail("the evaluation ran out of memory")
        campaign.ended(cells[1], "toy-s1", "failed", reason="the evaluation ran out of memory")
        wait_for(lambda: statuses() == ["completed", "failed"], "the second run to show as failed")
        wait_for(lambda: "ran out of memory" in text_of(browser, "sec-failures"), "the failure and its reason")
        assert "1 completed" in text_of(browser, "campaign-counts")
        assert _same_document(browser), "the page was reloaded"
        browser.find_element("css selector", 'td.cell a[data-run="toy-s0"]').click()
        wait_for(lambda: browser.current_url.endswith("/run/toy-s0"), "the cell's link to lead to its run")


def test_solution_page_shows_the_diff_against_its_parent(browser, backend):
    run = RunWriter(backend.store, "diff-run")
    run.solution("parent1", SCRIPT_V1)
    run.evaluated("parent1", 0.7)
    run.solution("child1", SCRIPT_V2, parents=("parent1",), scope="phase2/path-0", phase="refined",
                 origin="refinement")
    run.evaluated("child1", 0.9, scope="phase2/path-0", stdout="fold 1: 0.9\nFinal Validation Performance: 0.9\n")
    with serve(backend.db) as url:
        browser.get(url + "run/diff-run/solution/child1")
        added = [e.text for e in browser.find_elements("css selector", "pre.diff .add")]
        removed = [e.text for e in browser.find_elements("css selector", "pre.diff .del")]
        assert "+model = 'gbm'" in added and "-model = 'rf'" in removed, (added, removed)
        assert "against parent1" in browser.page_source
        assert "fold 1: 0.9" in browser.find_element("css selector", ".eval pre.out").text
        assert "model = 'gbm'" in browser.find_element("css selector", "div.hl").text  # the highlighted script


def test_hostile_text_from_the_log_renders_as_text(browser, backend):
    task = "<img src=x onerror=alert(1)>"
    script = "print('</script><script>alert(2)</script>')\n# <b>not bold</b>\n"
    run = RunWriter(backend.store, "xss-run", task=task)
    run.solution("evil1", script)
    run.evaluated("evil1", 0.5, stdout="</pre><script>alert(3)</script>\n")
    with serve(backend.db) as url:
        for path, shown in (("", task), ("run/xss-run", task), ("run/xss-run/solution/evil1", "</script>")):
            browser.get(url + path)
            wait_for(lambda: browser.execute_script("return document.readyState") == "complete", "the page to load")
            try:
                alert = browser.switch_to.alert
                text = alert.text
                alert.accept()
                raise AssertionError(f"{path or '/'}: a script from the log ran (alert {text!r})")
            except NoAlertPresentException:
                pass
            assert shown in browser.find_element("tag name", "body").text, path
            assert browser.execute_script("return document.querySelectorAll('img').length") == 0, path
            assert browser.execute_script("return document.querySelectorAll('main script').length") == 0, path
            assert not browser.execute_script(
                "return Array.from(document.querySelectorAll('b')).some(b => b.textContent === 'not bold')"), path
