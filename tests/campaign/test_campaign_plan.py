"""Campaign requests and their stream, without Ray: the grid, the checks made before anything is
written, a changed request refused, one command per campaign, and the fold."""

from __future__ import annotations

import os

import pytest

from engine.campaign.plan import CampaignError, CampaignRequest, parse_seeds, run_id_for, same_plan, split_list
from engine.campaign.stream import fold_campaign, stream_id
from engine.run import lifecycle as runs_mod
from events.base import NewEvent
from events.campaign import CampaignAttemptFailed, CampaignCell, CampaignRunCreated, CampaignRunEnded, CampaignStarted
from tests.core.helpers import engine_env, run_engine


def test_seeds_lists_and_ranges():
    assert parse_seeds("0,1,2") == (0, 1, 2)
    assert parse_seeds("3-5, 9") == (3, 4, 5, 9)
    for bad, says in (("a", "is not a seed"), ("1,1", "repeated"), ("", "comma-separated")):
        with pytest.raises(CampaignError, match=says):
            parse_seeds(bad)
    with pytest.raises(CampaignError, match="repeated"):
        split_list("--tasks", "iris,iris")


def test_grid_order_and_stable_distinct_run_ids():
    req = CampaignRequest(name="c", tasks=("iris", "/data/My Task"), seeds=(0, 1), agents=("builtin", "claude"))
    cells = req.cells()
    assert len(cells) == 8 and [c.seed for c in cells[:2]] == [0, 1]
    ids = [run_id_for("c", c) for c in cells]
    assert len(set(ids)) == 8 and ids == [run_id_for("c", c) for c in req.cells()]
    assert ids[0].startswith("c-iris-s0-") and ids[4].startswith("c-My_Task-s0-")


def _planned_store(tmp_path, cells):
    store = runs_mod.open_store(tmp_path / "e.db")
    store.create_run(stream_id("c"), strategy="campaign", task="c")
    store.append(stream_id("c"), [NewEvent(event=CampaignStarted(name="c", cells=cells, settings={"overrides": ["x=1"]}),
                                           scope="campaign")], expected_seq=0)
    return store


def test_fold_follows_each_cell(tmp_path):
    cells = [CampaignCell(task="iris", seed=s) for s in (0, 1, 2)]
    store = _planned_store(tmp_path, cells)
    k = [c.key for c in cells]
    store.append(stream_id("c"), [NewEvent(event=e, scope="campaign") for e in (
        CampaignRunCreated(cell=k[0], run_id="r0"), CampaignRunCreated(cell=k[1], run_id="r1"),
        CampaignAttemptFailed(cell=k[1], run_id="r1", attempt=1, reason="the node running it died"),
        CampaignRunEnded(cell=k[0], run_id="r0", status="completed", attempts=1))], expected_seq=1)
    state = fold_campaign(store.read(stream_id("c")))
    assert [c.run_id for c in state.cells.values()] == ["r0", "r1", None]
    assert state.cells[k[1]].failures == ["the node running it died"] and state.cells[k[1]].attempts == 1
    assert [c.cell.seed for c in state.open_cells()] == [1, 2] and not state.finished
    assert same_plan(state, CampaignRequest(name="c", tasks=("iris",), seeds=(0, 1, 2),
                                            settings={"overrides": ["x=1"]})) is None
    differs = same_plan(state, CampaignRequest(name="c", tasks=("iris",), seeds=(0, 1), settings={}))
    assert "3 runs" in differs and "2" in differs and "settings" in differs


def _campaign(tmp_path, *args):
    return run_engine("campaign", *args, "--db", str(tmp_path / "e.db"), env=engine_env(), timeout=120, cwd=tmp_path)


def test_bad_requests_fail_before_anything_is_written(tmp_path):
    cases = [(["start", "c", "--tasks", "iris,no-such-task"], "no-such-task"),
             (["start", "c", "--tasks", "iris", "--seeds", "0,x"], "not a seed"),
             (["start", "bad name!", "--tasks", "iris"], "campaign name"),
             (["start", "c", "--tasks", "iris", "--preset", "huge"], "unknown preset"),
             (["start", "c", "--tasks", "iris", "--set", "nosuch=1"], "no such setting"),
             (["start", "c", "--tasks", "iris", "--max-attempts", "0"], "at least 1"),
             (["start", "c", "--tasks", "iris", "--cpus-per-run", "0"], "more than 0"),
             (["start", "c", "--tasks", "iris", "--ray-address", "nonsense"], "expected HOST:PORT"),
             (["start", "c", "--tasks", "iris", "--ray-address", "127.0.0.1:1"], "cannot reach a Ray cluster")]
    for args, says in cases:
        proc = _campaign(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert says in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert not (tmp_path / "e.db").exists(), args


def test_unknown_campaign_and_changed_request_are_refused(tmp_path):
    proc = _campaign(tmp_path, "status", "nope")
    assert proc.returncode == 2 and "no engine database" in proc.stderr
    store = _planned_store(tmp_path, [CampaignCell(task="iris", seed=0)])
    for args, says in ((["status", "nope"], "no campaign 'nope'"), (["start", "nope"], "no campaign 'nope'"),
                       (["start", "c", "--tasks", "wine"], "already exists and differs")):
        proc = _campaign(tmp_path, *args)
        assert proc.returncode == 2 and says in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
    token = store.acquire_lease(stream_id("c"), 60)  # this (live) process drives campaign c
    proc = _campaign(tmp_path, "start", "c")
    assert proc.returncode == 2 and f"process {os.getpid()}" in proc.stderr, proc.stderr
    store.release_lease(stream_id("c"), token)
    assert store.last_seq(stream_id("c")) == 1
    assert [r.run_id for r in store.list_runs()] == [stream_id("c")]  # "start nope" wrote nothing
    runs = run_engine("runs", "--db", str(tmp_path / "e.db"), "--json", env=engine_env(), cwd=tmp_path)
    assert runs.returncode == 0 and "campaign" not in runs.stdout


def test_a_worker_without_the_run_directory_fails_the_attempt_saying_why(tmp_path):
    """The run's files are kept under ENGINE_RUNS_DIR, not re-created: a node that cannot see
    them must not drive the run (it would fail evaluations one by one)."""
    import shutil

    from engine.campaign.ray_driver import RunDirUnreachable, drive_run
    from engine.config.presets import build_config

    db = tmp_path / "e.db"
    store = runs_mod.open_store(db)
    run_id = runs_mod.create_run(store, db=db, task_spec="iris", strategy="mle-star", backend_name="builtin",
                                 config=build_config(preset="quick"), seed=0, run_id="r")
    store.close()
    shutil.rmtree(tmp_path / run_id)
    with pytest.raises(RunDirUnreachable, match="ENGINE_RUNS_DIR must be a directory every node mounts"):
        drive_run(str(db), run_id, lease_wait_s=1)


def test_ray_address_is_the_one_given_else_env_else_our_own_local_ray(monkeypatch):
    """Never Ray's discovery: in CI a campaign started without an address attached to another
    xdist worker's cluster and lost its runs when that test stopped it."""
    from engine.run.ray_eval import ray_address

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert ray_address() == "local" and ray_address(None) == "local"
    monkeypatch.setenv("RAY_ADDRESS", "head:6379")
    assert ray_address() == "head:6379"
    assert ray_address("ray://other:10001") == "ray://other:10001"
