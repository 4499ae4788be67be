"""``engine lineage``: the final submission's ancestry reaches back to the retrieved models."""

from __future__ import annotations

import json

import pytest

from engine.audit.lineage import build_lineage, retrieved_models
from engine.audit.runlog import AuditError, RunLog, load_run
from events.agent_outputs import RetrievedModel
from events.base import NewEvent
from events.core import RunCompleted, RunStarted, SolutionEvaluated, SolutionRecorded
from events.domain import PipelineConfig, solution_id_of
from events.phase1 import ModelsRetrieved
from replay.state import fold
from store.sqlite import SQLiteEventStore
from tests.audit.helpers import engine
from tests.support.sim import make_task


def assert_reaches_models(lineage, log) -> None:
    """Every root of the ancestry is a draft of a retrieved model; every recorded parent is in it."""
    models = set(retrieved_models(log))
    assert models, "the run retrieved no models"
    for node in lineage.nodes.values():
        for parent in node.parents:
            assert parent in lineage.nodes, f"{node.solution_id}: parent {parent} missing from the lineage"
    roots = [node for node in lineage.nodes.values() if not node.parents]
    assert roots
    for root in roots:
        assert root.retrieved_model in models, (root.origin, root.solution_id, root.source_model)
    assert set(lineage.models_reached()) <= models


def walk(tree: dict) -> list[dict]:
    out = [tree]
    for p in tree.get("parents", []):
        out += walk(p)
    return out


def test_sim_pipeline_lineage_goes_from_the_final_solution_to_the_models(sim_run):
    log = sim_run.log
    lineage = build_lineage(log)
    final_content = log.state.result["final_solution"]["content"]
    assert lineage.final_id == solution_id_of(final_content)
    assert lineage.selected_by == "RunCompleted.result.final_solution"
    assert_reaches_models(lineage, log)
    origins = {n.origin for n in lineage.nodes.values()}
    assert {"init", "merge", "refinement", "ensemble"} <= origins
    merge = next(n for n in lineage.nodes.values() if n.origin == "merge")
    assert len(set(merge.parents)) == 2
    assert any(d["type"] == "MergeDecided" and d["accepted"] for d in merge.decisions)
    refined = [n for n in lineage.nodes.values() if n.origin == "refinement"]
    assert refined and all("plan" in n.detail and "code_block" in n.detail for n in refined)
    assert any(d["type"] == "RefinementAttempted" for n in refined for d in n.decisions)
    ensemble = next(n for n in lineage.nodes.values() if n.origin == "ensemble")
    assert any(d["type"] == "EnsembleRoundCompleted" and d["plan"] for d in ensemble.decisions)
    assert ensemble.score == 0.9


def test_sim_phase1_lineage_reaches_every_merged_model(sim_phase1):
    lineage = build_lineage(sim_phase1.log)
    assert lineage.selected_by == "best SolutionEvaluated"
    assert_reaches_models(lineage, sim_phase1.log)
    assert len(lineage.models_reached()) >= 2  # the merges folded in more than one draft


def test_cli_json_is_nested_and_text_is_a_tree(sim_run):
    proc = engine("lineage", sim_run.run_id, "--db", sim_run.db, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["lineage"]["solution_id"] == data["final_solution_id"]
    nodes = walk(data["lineage"])
    leaves = [n for n in nodes if not n.get("parents") and not n.get("ref")]
    assert leaves and all(n["retrieved_model"] in data["retrieved_models"] for n in leaves)
    for n in nodes:
        if not n.get("ref"):
            assert {"solution_id", "origin", "phase", "scope", "score", "source_model", "detail", "decisions"} <= set(n)
    text = engine("lineage", sim_run.run_id, "--db", sim_run.db)
    assert text.returncode == 0, text.stderr
    assert "★ final" in text.stdout and "retrieved model: model-0" in text.stdout
    assert "MergeDecided" in text.stdout and "EnsembleRoundCompleted" in text.stdout


def test_real_engine_run_lineage(scripted_run):
    lineage = build_lineage(scripted_run.log)
    assert lineage.final_id == solution_id_of(scripted_run.log.state.result["final_solution"]["content"])
    assert_reaches_models(lineage, scripted_run.log)


@pytest.mark.slow
def test_real_mle_star_builtin_run_lineage_reaches_the_retrieved_models(iris_run):
    lineage = build_lineage(iris_run.log)
    assert_reaches_models(lineage, iris_run.log)
    proc = engine("lineage", iris_run.run_id, "--db", iris_run.db)
    assert proc.returncode == 0 and "retrieved model:" in proc.stdout


def _store_with(tmp_path, events: list[tuple[str, object]]):
    db = tmp_path / "e.db"
    store = SQLiteEventStore(db)
    store.create_run("X", strategy="test", task="sim-task")
    store.append("X", [NewEvent(event=e, scope=s) for s, e in events], expected_seq=0)
    return db, store


def _started() -> RunStarted:
    return RunStarted(strategy="t", backend="t", seed=0, config=PipelineConfig().model_dump(mode="json"),
                      task=make_task(), task_dir="/nonexistent", run_dir="/nonexistent")


def test_unknown_run_and_run_without_solutions_exit_2(tmp_path):
    db, _ = _store_with(tmp_path, [("run", _started())])
    proc = engine("lineage", "nope", "--db", db)
    assert proc.returncode == 2 and "no run 'nope'" in proc.stderr
    proc = engine("lineage", "X", "--db", db)
    assert proc.returncode == 2 and "no solutions" in proc.stderr
    proc = engine("lineage", "X", "--db", tmp_path / "missing.db")
    assert proc.returncode == 2


def _evolution_log(tmp_path, *, link_nodes: bool):
    """Two drafts and a gene-level merge naming its gene sources by evolution node id."""
    a, b, c = "print('a')\n", "print('b')\n", "print('c')\n"
    ida, idb, idc = map(solution_id_of, (a, b, c))
    events = [
        ("run", _started()),
        ("evolve", ModelsRetrieved(models=[RetrievedModel(model_name="m1", example_code="x"),
                                           RetrievedModel(model_name="m2", example_code="y")], requested=2)),
        ("evolve", SolutionRecorded(solution_id=ida, content=a, phase="init", origin="draft", source_model="m1")),
        ("evolve", SolutionRecorded(solution_id=idb, content=b, phase="init", origin="draft", source_model="m2")),
        ("evolve", SolutionRecorded(solution_id=idc, content=c, phase="merged", origin="evo_merge", parents=[ida],
                                    detail={"gene_sources": {"MODEL": "n0", "FEATURES": "n1", "LOSS": "n2"}})),
        ("evolve", SolutionEvaluated(solution_id=idc, requested_solution_id=idc, score=0.7, is_executable=True,
                                     purpose="evolve")),
        ("run", RunCompleted(submission_path="", best_score=0.7, result={"final_solution_id": idc})),
    ]
    _, store = _store_with(tmp_path, events)
    envs = list(store.read("X"))
    if link_nodes:  # decisions naming node_id and solution_id (the shape of EvoNodeAppended) link them
        for i, (node, sid) in enumerate((("n0", ida), ("n1", idb))):
            envs.insert(5 + i, envs[4].model_copy(update={"type": "EvoNodeAppended",
                                                          "payload": {"node_id": node, "solution_id": sid}}))
    return RunLog(run_id="X", envelopes=envs, state=fold(envs)), (ida, idb, idc)


def test_evolution_gene_sources_unknown_node_ids_are_shown_not_followed(tmp_path):
    log, (ida, idb, idc) = _evolution_log(tmp_path, link_nodes=False)
    lineage = build_lineage(log)
    assert lineage.selected_by == "RunCompleted.result.final_solution_id"
    assert lineage.nodes[idc].gene_sources == {"MODEL": "n0", "FEATURES": "n1", "LOSS": "n2"}
    assert set(lineage.nodes) == {ida, idc}


def test_evolution_gene_sources_resolve_to_solutions_and_are_followed(tmp_path):
    log, (ida, idb, idc) = _evolution_log(tmp_path, link_nodes=True)
    lineage = build_lineage(log)
    assert lineage.nodes[idc].gene_sources == {"MODEL": ida, "FEATURES": idb, "LOSS": "n2"}
    assert set(lineage.nodes) == {ida, idb, idc}
    assert lineage.models_reached() == ["m1", "m2"]
    assert lineage.to_json()["lineage"]["gene_sources"]["FEATURES"] == idb


def test_a_run_with_no_solutions_has_no_lineage(tmp_path):
    _, store = _store_with(tmp_path, [("run", _started())])
    with pytest.raises(AuditError, match="no solutions"):
        build_lineage(load_run(store, "X"))
