"""Retriever, init and merger: real scripts that run and beat naive baselines."""

from __future__ import annotations

import numpy as np
import pytest

from engine.agents.builtin.catalog import LIGHTGBM_INSTALLED
from engine.agents.builtin.spec import LOCI, MARKER_RE, parse_spec, split_sections
from events.agent_outputs import RetrieverOutput


def _markers_ok(code: str) -> None:
    names = MARKER_RE.findall(code)
    assert sorted(names) == sorted(LOCI) and len(names) == 7, names


def _naive(env) -> float:
    train = env.train()
    if env.name == "regression":
        return float(np.std(train["price"]))           # RMSE of predicting the mean
    if env.name == "multiclass":
        return float(train["label"].value_counts(normalize=True).max())
    return 0.5                                        # AUC of a constant


def test_retriever_gives_m_families_with_runnable_examples(regression):
    result = regression.ok("retriever", task_description="predict price", M=4)
    out = RetrieverOutput.model_validate(result.structured)
    assert len(out.models) == 4
    assert len({m.model_name for m in out.models}) == 4
    example = regression.run(out.models[1].example_code)
    assert example.rc == 0, example.stderr


@pytest.mark.parametrize("env_name,model_name", [
    ("binary", "Random forest (RandomForestClassifier)"),
    ("multiclass", "Logistic regression"),
    ("regression", "LightGBM"),
])
def test_init_scripts_run_and_beat_naive_baseline(request, env_name, model_name):
    env = request.getfixturevalue(env_name)
    result = env.ok("init", task_description=env.task.description, model_name=model_name, example_code="")
    assert result.code and f"```python\n{result.code}```" in result.text
    _markers_ok(result.code)
    assert parse_spec(result.code) is not None
    run = env.run(result.code)
    assert run.rc == 0, run.stderr
    assert run.score is not None
    naive = _naive(env)
    if env.name == "regression":
        assert run.score < 0.8 * naive, (run.score, naive)
    else:
        assert run.score > naive + 0.05, (run.score, naive)
    assert run.submission.shape[0] == len(env.data_dir.joinpath("test.csv").read_text().strip().splitlines()) - 1


def test_subsampling_block_is_honoured(binary):
    code = binary.ok("init", task_description="", model_name="extra trees", example_code="").code
    assert "SUBSAMPLE_LIMIT = 800" in code
    assert "train_df.sample(n=SUBSAMPLE_LIMIT" in code


def test_merger_blends_base_and_reference(binary):
    base = binary.ok("init", task_description="", model_name="random forest", example_code="").code
    ref = binary.ok("init", task_description="", model_name="SVM", example_code="").code
    merged = binary.ok("merger", base_code=base, reference_code=ref).code
    _markers_ok(merged)
    spec = parse_spec(merged)
    assert [m["family"] for m in spec["model"]["members"]] == ["random_forest", "svm"]
    assert spec["model"]["members"][1]["prep"]["scale"] == "standard"   # the SVM keeps its scaling
    run = binary.run(merged)
    assert run.rc == 0, run.stderr
    assert "Member random_forest" in run.stdout and "Member svm" in run.stdout
    assert run.score > 0.8


def test_merger_fails_honestly_on_foreign_code(binary):
    base = binary.ok("init", task_description="", model_name="random forest", example_code="").code
    failed = binary.fails("merger", base_code=base, reference_code="import xgboost\nprint(1)\n")
    assert "builtin spec" in failed.error


def test_sections_are_stub_or_real(binary):
    code = binary.ok("init", task_description="", model_name="knn", example_code="").code
    bodies = split_sections(code).bodies
    assert len(bodies["OPTIMIZER"].strip()) < 20 and len(bodies["INITIALIZATION"].strip()) < 20
    for locus in ("DATA", "MODEL", "LOSS", "REGULARIZATION", "TRAINING_TRICKS"):
        assert len(bodies[locus].strip()) >= 20


@pytest.mark.parametrize("name,family", [
    ("Histogram gradient boosting (LightGBM-style GBDT) (HistGradientBoostingRegressor)", "hist_gradient_boosting"),
    # LightGBM is its own family where the ml extra installed it, else scikit-learn's HistGBM.
    ("LightGBM", "lightgbm" if LIGHTGBM_INSTALLED else "hist_gradient_boosting"),
    ("CatBoost", "hist_gradient_boosting"),
    ("Gradient Boosting Machine", "gradient_boosting"), ("Logistic Regression", "linear"), ("Ridge", "linear"),
    ("k-NN", "knn"), ("SVC", "svm"), ("TabNet", "mlp"), ("RandomForestClassifier", "random_forest"),
])
def test_model_names_map_to_families(name, family):
    from engine.agents.builtin.catalog import family_for_name
    assert family_for_name(name).key == family


def test_spec_round_trip_renders_identically():
    from engine.agents.builtin.catalog import FAMILIES
    from engine.agents.builtin.render import new_spec, render_solution, with_families
    for kind, metric in (("classification", "logloss"), ("regression", "mae")):
        for family in FAMILIES.values():
            code = render_solution(new_spec(kind, metric, 3, 100, family))
            assert render_solution(parse_spec(code)) == code
        blend = with_families(new_spec(kind, metric, 3, None, FAMILIES["linear"]), list(FAMILIES.values())[:3])
        code = render_solution(blend)
        assert render_solution(parse_spec(code)) == code and "subsampling" not in code
