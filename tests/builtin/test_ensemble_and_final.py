"""Phase 3 (ens_planner, ensembler) and finalization (test, subsampling, contamination)."""

from __future__ import annotations

import json
import re
import textwrap
import time

import pytest
from conftest import Env

from engine.agents.builtin.coordinate_search import partners
from engine.agents.builtin.ensembling import bagged_members, settings_of
from engine.agents.builtin.render import render_section
from engine.agents.builtin.render_final import GROWN_BAG
from engine.agents.builtin.render_train import render_train
from engine.agents.builtin.spec import parse_spec, section_block
from events.agent_outputs import DataContaminationResult
from events.core import AgentCallCompleted
from events.domain import PipelineConfig


@pytest.fixture(scope="module")
def small_multiclass(tmp_path_factory) -> Env:
    """The multiclass table at 480 rows, for the seed-bag tests: how many fits a bag makes and
    keeps does not depend on the table's size, and every fit of a bag costs less on it."""
    return Env("multiclass-480", tmp_path_factory.mktemp("multiclass-480"))


@pytest.fixture(scope="module")
def small_regression(tmp_path_factory) -> Env:
    return Env("regression-480", tmp_path_factory.mktemp("regression-480"))


def _solution(env, model):
    return env.ok("init", task_description="", model_name=model, example_code="").code


def test_ens_planner_walks_through_methods_guided_by_scores(regression):
    sols = [_solution(regression, "random forest"), _solution(regression, "svm")]
    first = regression.ok("ens_planner", solutions=sols, plans=[], scores=[]).text
    second = regression.ok("ens_planner", solutions=sols, plans=[first], scores=[0.8]).text
    third = regression.ok("ens_planner", solutions=sols, plans=[first, second], scores=[0.8, 0.7]).text
    methods = [re.search(r'"combine": "(\w+)"', p).group(1) for p in (first, second, third)]
    assert methods[:2] == ["mean", "weighted"]
    assert methods[2] == "stacking"            # a learned blend won (lower RMSE) -> the other learned one
    assert len(set(methods)) == 3


def test_ensembler_runs_and_beats_its_members(regression):
    sols = [_solution(regression, "random forest"), _solution(regression, "svm")]
    plan = regression.ok("ens_planner", solutions=sols, plans=["x [builtin-ensemble: {\"combine\": \"mean\"}]"],
                         scores=[0.9]).text
    ens = regression.ok("ensembler", solutions=sols, plan=plan).code
    spec = parse_spec(ens)
    assert spec["train"]["combine"] == "weighted"
    run = regression.run(ens)
    assert run.rc == 0, run.stderr
    members = [float(v) for v in re.findall(r"Member \S+: validation rmse = ([\d.]+)", run.stdout)]
    assert len(members) == 2
    assert run.score <= min(members) + 1e-9
    # The weights are learned on the members' out-of-fold predictions; the score reported is
    # cross-fitted (each fold blended with weights learned on the others), never the in-sample one,
    # which greedy selection makes at least as good as the best member by construction.
    in_sample = float(re.search(r"Blend learned and scored on the same rows: rmse = ([\d.]+)", run.stdout).group(1))
    assert in_sample <= min(members) + 1e-9
    assert run.score >= in_sample - 1e-9
    assert run.score != in_sample


def test_stacking_ensemble_and_test_script_on_multiclass(multiclass):
    sols = [_solution(multiclass, "extra trees"), _solution(multiclass, "logistic regression")]
    ens = multiclass.ok("ensembler", solutions=sols, plan="Stack the models with a meta learner.").code
    assert parse_spec(ens)["train"]["combine"] == "stacking"
    stacked = multiclass.run(ens)
    assert stacked.rc == 0, stacked.stderr
    # The meta-model learns from the members' out-of-fold predictions; its reported score is
    # cross-fitted, below what it scores on the rows it learned from.
    in_sample = float(re.search(r"Blend learned and scored on the same rows: accuracy = ([\d.]+)",
                                stacked.stdout).group(1))
    assert stacked.score is not None and stacked.score < in_sample

    # Finalization: extract and remove subsampling, then the full-data test script.
    block = multiclass.ok("test", "subsampling_extract", **{"final solution": ens}).code
    assert block in ens and "SUBSAMPLE_LIMIT" in block
    no_sub = multiclass.ok("test", "subsampling_remove", **{"code block with subsampling": block}).code
    assert ".sample(" not in no_sub
    final_solution = ens.replace(block, no_sub, 1)
    assert multiclass.ok("test", "subsampling_extract", **{"final solution": final_solution}).code is None

    test_script = multiclass.ok("test", **{"task description": multiclass.task.description,
                                           "final solution": final_solution}).code
    assert 'FINAL_FIT = "full"' in test_script and "subsampling: begin" not in test_script
    run = multiclass.run(test_script)
    assert run.rc == 0, run.stderr
    assert run.score is not None and run.score > 0.6
    sub = run.submission
    test = multiclass.data_dir.joinpath("test.csv").read_text().splitlines()
    assert list(sub.columns) == ["PassengerId", "label"]
    assert len(sub) == len(test) - 1
    assert set(sub["label"]) <= {"high", "mid", "low"}
    assert "final fit: full" in run.stdout


def test_a_fixed_combination_s_test_script_fits_on_all_rows_without_scoring_again(multiclass):
    """zip-state at 120 s: the final script re-ran the out-of-fold scoring the run had measured
    already (11.5 s of the 24.5 s it needed; finalization had 21.8 s, so it was cut and the
    search's own submission went out). A mean, median or rank blend, or one model, learns nothing
    from those predictions: its test script only fits every model on all rows, and writes the
    submission the scoring script would have. A learned blend (and a calibrated log-loss) still
    scores: its weights come from out-of-fold predictions."""
    sols = [_solution(multiclass, "random forest"), _solution(multiclass, "ridge")]
    mean = multiclass.ok("ensembler", solutions=sols, plan=_plan({"combine": "mean"})).code
    test_script = multiclass.ok("test", **{"task description": "", "final solution": mean}).code
    assert parse_spec(test_script)["train"]["rescore"] is False
    scoring = test_script.replace('"rescore": false', '"rescore": true')
    scoring = scoring.replace(section_block(scoring, "TRAINING_TRICKS"),
                              render_section(parse_spec(scoring), "TRAINING_TRICKS"), 1)
    fitted, scored = multiclass.run(test_script), multiclass.run(scoring)
    assert fitted.rc == 0 and scored.rc == 0, fitted.stderr + scored.stderr
    assert fitted.score is None and "validation accuracy" not in fitted.stdout
    assert scored.score is not None and "validation accuracy" in scored.stdout
    assert fitted.submission.equals(scored.submission) and "final fit: full" in fitted.stdout
    stacked = multiclass.ok("ensembler", solutions=sols, plan=_plan({"combine": "stacking"})).code
    stacked_test = multiclass.ok("test", **{"task description": "", "final solution": stacked}).code
    assert "rescore" not in parse_spec(stacked_test)["train"]


def test_test_script_for_binary_auc_writes_probabilities(binary):
    script = _solution(binary, "gradient boosting")
    test_script = binary.ok("test", **{"task description": "", "final solution": script}).code
    run = binary.run(test_script)
    assert run.rc == 0, run.stderr
    sub = run.submission
    assert list(sub.columns) == ["id", "target"]
    assert sub["target"].between(0, 1).all() and sub["target"].nunique() > 10


def test_generic_subsampling_extract_and_remove(binary):
    foreign = ("import pandas as pd\ntrain = pd.read_csv('./input/train.csv')\n"
               "if len(train) > 30000:\n    train = train.sample(n=30000, random_state=0)\nprint(len(train))\n")
    block = binary.ok("test", "subsampling_extract", **{"final solution": foreign}).code
    assert block in foreign and ".sample(" in block and block.startswith("if ")
    removed = binary.ok("test", "subsampling_remove", **{"code block with subsampling": block}).code
    assert ".sample(" not in removed and "if len" not in removed


def test_contamination_verdicts(binary):
    script = _solution(binary, "random forest")
    same = binary.ok("test", "contamination", **{"reference discussion": "Here is my code:\n" + script,
                                                 "final solution": script}).structured
    novel = binary.ok("test", "contamination", **{"reference discussion": "We used CatBoost with 10 folds.",
                                                  "final solution": script}).structured
    assert DataContaminationResult.model_validate(same).verdict == "Same"
    assert DataContaminationResult.model_validate(novel).verdict == "Novel"


def test_test_script_scores_on_a_search_sized_sample_and_refits_on_all_rows(binary):
    """Issue 19 (a 120 s run's finalization overran): the full-data test script of a learned blend
    learns its score and weights from out-of-fold predictions on a sample of the search's size
    (800 of 960 rows here), then refits every model on all rows and predicts every test row."""
    sols = [_solution(binary, "random forest"), _solution(binary, "ridge")]
    script = binary.ok("ensembler", solutions=sols, plan=_plan({"combine": "weighted"})).code
    test_script = binary.ok("test", **{"task description": "", "final solution": script}).code
    assert "SCORE_ROWS = 800" in test_script and 'FINAL_FIT = "full"' in test_script
    run = binary.run(test_script)
    assert run.rc == 0, run.stderr
    assert run.score is not None and 0.5 < run.score <= 1.0
    assert "final fit: full" in run.stdout
    test_rows = len(binary.data_dir.joinpath("test.csv").read_text().splitlines()) - 1
    assert len(run.submission) == test_rows
    assert "SCORE_ROWS" not in script   # search scripts score on their own (subsampled) rows


def test_ablation_studies_use_three_folds_and_solutions_five(binary):
    spec = parse_spec(_solution(binary, "random forest"))
    assert "CV_FOLDS = 3 if" in render_train(spec, mode="ablation")
    assert "CV_FOLDS = 5 if" in render_train(spec)


def _plan(settings: dict) -> str:
    return f"x [builtin-ensemble: {json.dumps(settings, sort_keys=True)}]"


def _planned(env, sols, settings_and_scores):
    text = env.ok("ens_planner", solutions=sols, plans=[_plan(s) for s, _ in settings_and_scores],
                  scores=[score for _, score in settings_and_scores]).text
    return settings_of(text)


def test_ens_planner_bags_seeds_on_the_best_blend_once_the_methods_are_tried(regression):
    """Issue 28: a long Phase 3 used to end when the methods ran out (11 combinations); it goes
    on with seed bags of the best combination, interleaved with its own setting's variants."""
    sols = [_solution(regression, "random forest"), _solution(regression, "ridge")]
    history = [({"combine": "mean"}, 0.9), ({"combine": "weighted"}, 0.7), ({"combine": "stacking"}, 0.8),
               ({"combine": "median"}, 0.95)]
    first = _planned(regression, sols, history)
    assert first == {"combine": "weighted", "seeds": 3}
    history.append((first, 0.69))           # the bag won (lower RMSE): a bigger bag next
    assert _planned(regression, sols, history) == {"combine": "weighted", "seeds": 5}
    history.append(({"combine": "weighted", "seeds": 5}, 0.72))
    # It did not win: the best bag's own setting, then the biggest bag.
    assert _planned(regression, sols, history) == {"combine": "weighted", "seeds": 3, "rounds": 50}
    history.append(({"combine": "weighted", "seeds": 3, "rounds": 50}, 0.72))
    assert _planned(regression, sols, history) == {"combine": "weighted", "seeds": 3, "rounds": 10}
    history.append(({"combine": "weighted", "seeds": 3, "rounds": 10}, 0.72))
    assert _planned(regression, sols, history) == {"combine": "weighted", "seeds": 8}

    # Nothing in a ridge-and-SVM ensemble varies with the seed: no bag is offered.
    linear = [_solution(regression, "ridge"), _solution(regression, "svm")]
    assert "seeds" not in _planned(regression, linear, history[:4])


def test_ens_planner_on_one_model_bags_it_then_blends_it_with_another_family(regression):
    """Paths that changed nothing hand Phase 3 the same solution twice (zip-state at 120 s ran two
    21 s rounds of it, each the model itself): every blend of it is the model, so a seed bag comes
    first, then a learned blend with one model of a family it lacks; past those, no answer."""
    forest = _solution(regression, "random forest")
    history: list[tuple[dict, float]] = []
    for seeds in (3, 5, 8):
        settings = _planned(regression, [forest, forest], history)
        assert settings == {"combine": "mean", "seeds": seeds}
        history.append((settings, 1.0))
    others = partners(parse_spec(forest)["model"], "regression", cap=2)
    for family in others:
        settings = _planned(regression, [forest, forest], history)
        assert settings == {"combine": "weighted", "add": family}
        history.append((settings, 1.0))
    done = regression.ask("ens_planner", solutions=[forest, forest], plans=[_plan(s) for s, _ in history],
                          scores=[1.0] * len(history))
    assert not isinstance(done, AgentCallCompleted)
    assert "every seed bag of it was tried, and every family it could be blended with was tried" in done.error
    # A model whose fits do not vary with the seed has no bag: the blends come first.
    ridge = _solution(regression, "ridge")
    assert _planned(regression, [ridge, ridge], []) == {"combine": "weighted", "add": "lightgbm"}


def test_a_converged_phase_3_blends_in_a_family_none_of_the_solutions_has(regression):
    """Issue 28 (spend the budget): held-out senator-tenure at 600 s ended Phase 3 after eight
    rounds with a fifth of its limit left: two k-NN paths, every blend and setting tried, nothing
    to bag. The next plan adds one model of another family, blended by the learned method that
    scored best; the ensembler's script fits it beside the solutions' models and runs."""
    knn = _solution(regression, "k-nearest neighbours")
    spec = parse_spec(knn)
    spec["model"]["members"][0]["params"]["n_neighbors"] = 40
    from engine.agents.builtin.render import render_solution
    sols = [knn, render_solution(spec)]
    history = [({"combine": m}, 1.0) for m in ("mean", "weighted", "stacking", "median")]
    history[2] = ({"combine": "stacking"}, 0.8)
    history += [({"combine": "stacking", "meta_c": 0.1}, 1.0), ({"combine": "stacking", "meta_c": 10.0}, 1.0),
                ({"combine": "weighted", "rounds": 50}, 1.0), ({"combine": "weighted", "rounds": 10}, 1.0)]
    plan = regression.ok("ens_planner", solutions=sols, plans=[_plan(s) for s, _ in history],
                         scores=[score for _, score in history]).text
    first = partners(parse_spec(knn)["model"], "regression")[0]
    assert settings_of(plan) == {"combine": "stacking", "add": first}
    assert "a family none of the solutions has" in plan

    ens = regression.ok("ensembler", solutions=sols, plan=plan).code
    merged = parse_spec(ens)
    assert [m["family"] for m in merged["model"]["members"]] == ["knn", "knn", first]
    assert merged["train"]["combine"] == "stacking" and "add" not in merged["train"]
    run = regression.run(ens)
    assert run.rc == 0 and run.score is not None, run.stderr
    assert len(re.findall(r"Member \S+: validation rmse", run.stdout)) == 3


def test_seed_bagged_ensemble_fits_each_seed_varying_member_per_seed(small_regression):
    """The bag's seeds give the forest different fits; the ensemble keeps the solutions' early
    stopping (it dropped it before), and a bad seeds value in a plan means one seed."""
    sols = [_solution(small_regression, "random forest"), _solution(small_regression, "lightgbm")]
    assert all(parse_spec(s)["train"]["early_stop"] for s in sols)
    plain = small_regression.ok("ensembler", solutions=sols, plan=_plan({"combine": "mean"})).code
    bagged = small_regression.ok("ensembler", solutions=sols, plan=_plan({"combine": "mean", "seeds": 3})).code
    assert parse_spec(plain)["train"]["early_stop"] and "class EarlyStopped" in plain
    assert "SeedBagged" not in plain
    assert parse_spec(bagged)["train"]["seeds"] == 3 and "BAG_SEEDS = 3" in bagged
    odd = small_regression.ok("ensembler", solutions=sols, plan=_plan({"combine": "mean", "seeds": "many"})).code
    assert "SeedBagged" not in odd and "seeds" not in parse_spec(odd)["train"]

    probe = bagged + ("\nfor name, model in members:\n"
              "    if isinstance(model, SeedBagged):\n"
              "        fits = [m.predict(X_val) for m in model.estimators_]\n"
              "        print('FITS', name, len(fits), len({round(float(f[0]), 9) for f in fits}))\n")
    run = small_regression.run(probe)
    assert run.rc == 0, run.stderr
    fits = re.findall(r"FITS (\S+) (\d+) (\d+)", run.stdout)
    assert {name for name, _, _ in fits} == {"random_forest", "lightgbm"}
    assert all(int(n) == 3 and int(distinct) == 3 for _, n, distinct in fits)
    assert run.score is not None

    # Finalization rewrites the TRAINING_TRICKS section alone: the bag must render from its gene.
    test_script = small_regression.ok("test", **{"task description": "", "final solution": bagged}).code
    assert "BAG_SEEDS = 3" in test_script and 'FINAL_FIT = "full"' in test_script
    final = small_regression.run(test_script)
    assert final.rc == 0, final.stderr
    # a mean of the members: the run measured its score, the test script only fits on all rows
    assert final.score is None and "not recomputed" in final.stdout and "final fit: full" in final.stdout


def test_bagged_members_vary_with_the_seed_or_are_boosters_bagged_on_rows(regression):
    """Forests and LightGBM always draw; scikit-learn's GBM on a row sample (subsample < 1, its
    REGULARIZATION gene's default 0.9); its HistGB, and its GBM on all rows, do not, and are
    bagged on row samples instead; a ridge is never bagged."""
    forest = parse_spec(_solution(regression, "random forest"))
    gbm = parse_spec(_solution(regression, "gradient boosting"))
    hist = parse_spec(_solution(regression, "hist gradient boosting"))
    ridge = parse_spec(_solution(regression, "ridge"))
    assert bagged_members(forest) == ["random_forest"]
    assert bagged_members(gbm) == ["gradient_boosting"] and gbm["reg"]["gradient_boosting"]["subsample"] < 1
    gbm["reg"]["gradient_boosting"]["subsample"] = 1.0
    assert bagged_members(gbm) == ["gradient_boosting"] and bagged_members(hist) == ["hist_gradient_boosting"]
    assert bagged_members(ridge) == []


def test_a_booster_the_seed_does_not_change_is_bagged_on_row_samples(small_multiclass):
    """football-goals at 300 s ended Phase 3 out of plans at 68 % of its limit: its two HistGB
    members do not vary with the seed, so no bag was offered. Bagged, each fit learns from its own
    seeded nine tenths of the rows; a class a sample misses still gets its column (zero) in the
    average, so the probabilities stay one row per class and sum to one."""
    sols = [_solution(small_multiclass, "hist gradient boosting"), _solution(small_multiclass, "ridge")]
    assert "seeds" in _planned(small_multiclass, sols, [({"combine": m}, 0.5) for m in ("mean", "weighted", "stacking",
                                                                                  "rank", "median")])
    bagged = small_multiclass.ok("ensembler", solutions=sols, plan=_plan({"combine": "mean", "seeds": 3})).code
    probe = bagged + textwrap.dedent("""
        for name, model in members:
            if isinstance(model, SeedBagged):
                fits = [m.predict_proba(X_val) for m in model.estimators_]
                print("FITS", name, model.rows, len(fits), len({round(float(f[0, 0]), 9) for f in fits}))
        rare = y_cv.copy()
        rare[0] = rare.max() + 1        # a class of one row: most nine-tenths samples miss it
        bag = SeedBagged(members[0][1].estimator, 5, rows=0.5).fit(X_cv, rare)
        proba = bag.predict_proba(X_cv.iloc[:4])
        missed = sum(len(m.classes_) < len(bag.classes_) for m in bag.estimators_)
        print("RARE", proba.shape[1] == len(np.unique(rare)), bool(np.allclose(proba.sum(axis=1), 1)), missed)
    """)
    run = small_multiclass.run(probe)
    assert run.rc == 0, run.stderr
    assert re.findall(r"FITS (\S+) (\S+) (\d+) (\d+)", run.stdout) == [("hist_gradient_boosting", "0.9", "3", "3")]
    shaped, sums, missed = re.search(r"RARE (\w+) (\w+) (\d+)", run.stdout).groups()
    assert shaped == "True" and sums == "True" and int(missed) >= 1
    assert run.score is not None


def test_a_bag_fit_on_all_rows_keeps_the_fits_the_engine_s_deadline_leaves_time_for(small_multiclass):
    """flight-delay at 120 s: bags of five seeds of two boosters, fit on all 35,000 rows, outran
    finalization's 12 s; the script was killed and the search's own submission (fit on 3,600 rows)
    went out. Each bag's fits on all rows now stop when the next would not end before its part of
    the time left (ENGINE_EVAL_DEADLINE): with the deadline already passed every bag keeps its
    first fit and the script still writes its submission; the validation score, settled before,
    is the same; with no deadline every seed is fit."""
    sols = [_solution(small_multiclass, "random forest"), _solution(small_multiclass, "hist gradient boosting")]
    bagged = small_multiclass.ok("ensembler", solutions=sols, plan=_plan({"combine": "mean", "seeds": 3})).code
    probe = bagged + textwrap.dedent("""
        print("FITS", [len(model.estimators_) for _, model in members if isinstance(model, SeedBagged)])
    """)
    unhurried = small_multiclass.run(probe)
    hurried = small_multiclass.run(probe, env={"ENGINE_EVAL_DEADLINE": str(time.time())})
    assert unhurried.rc == 0 and hurried.rc == 0, unhurried.stderr + hurried.stderr
    assert "FITS [3, 3]" in unhurried.stdout and "Seed bag cut" not in unhurried.stdout
    assert "FITS [1, 1]" in hurried.stdout
    assert hurried.stdout.count("Seed bag cut to 1 of 3 fits") == 2
    # Its cross-validation, fit to the same passed deadline, scored the rows of two folds
    # (test_window_folds); with no deadline it scored all five.
    assert "Cross-validation cut to 2 of 5 folds" in hurried.stdout and "Cross-validation cut" not in unhurried.stdout
    assert hurried.score is not None and unhurried.score is not None
    assert len(hurried.submission) == len(unhurried.submission) > 0


def test_ens_planner_tries_every_method_s_bags_and_settings_before_it_gives_up(regression):
    """Past the best combination's refinements, each other method gets its own (bird-strike-
    damage at 120 s ran out after 12 rounds with a fifth of its time left): 4 methods, 3 bags
    each, 2 settings each for the weighted blend and stacking, then a blend with each family the
    solutions lack, every plan once, then no answer."""
    sols = [_solution(regression, "random forest"), _solution(regression, "ridge")]
    history: list[tuple[dict, float]] = []
    while True:
        call = regression.ask("ens_planner", solutions=sols, plans=[_plan(s) for s, _ in history],
                              scores=[score for _, score in history])
        if not isinstance(call, AgentCallCompleted):
            assert "every combination method it knows was tried" in call.error
            break
        settings = settings_of(call.text)
        history.append((settings, 0.7 if settings == {"combine": "weighted"} else 1.0))
        assert len(history) <= 40
    plans = [json.dumps(s, sort_keys=True) for s, _ in history]
    # Then one blend per family the solutions lack, by the learned method that scored best.
    others = partners({"members": [{"family": "random_forest"}, {"family": "linear"}]}, "regression")
    assert len(plans) == len(set(plans)) == 4 + 3 * 4 + 2 * 2 + len(others)
    assert {"combine": "median", "seeds": 8} in [s for s, _ in history]
    assert [s for s, _ in history[-len(others):]] == [{"combine": "weighted", "add": f} for f in others]


def test_ensembler_blends_two_paths_that_differ_only_in_preparation(binary):
    """Two refinement paths of one solution often end with the same model prepared differently
    (credit-default at 120 s: a logistic regression on one-hot, scaled columns in one path and on
    raw codes in the other). Both are models of their own: the ensemble fits and blends both, where
    it used to keep the first path's alone and score every round exactly as that path."""
    from engine.agents.builtin.render import render_solution

    base = _solution(binary, "logistic regression")
    spec = parse_spec(base)
    spec["data"]["prep"] = {**spec["data"]["prep"], "scale": "none", "encode": "ordinal"}
    other = render_solution(spec)
    assert other != base

    ens = binary.ok("ensembler", solutions=[base, other], plan="Average them.").code
    members = parse_spec(ens)["model"]["members"]
    assert len(members) == 2
    assert members[0]["prep"] is None and members[1]["prep"]["encode"] == "ordinal"
    run = binary.run(ens)
    assert run.rc == 0, run.stderr
    scores = [float(v) for v in re.findall(r"Member \S+: validation \w+ = ([\d.]+)", run.stdout)]
    assert len(scores) == 2 and scores[0] != scores[1]

    # The same model fitted the same way joins once.
    same = binary.ok("ensembler", solutions=[base, base], plan="Average them.").code
    assert len(parse_spec(same)["model"]["members"]) == 1


def test_ens_planner_does_not_propose_a_method_s_default_setting_as_a_new_plan(regression):
    """credit-default at 120 s: the weighted blend with 10 rounds was best, and the planner's next
    plan was the weighted blend with 25 rounds — its default, the plain weighted blend tried in
    round 1. A method's default setting is that method without the setting."""
    sols = [_solution(regression, "random forest"), _solution(regression, "ridge")]
    history = [({"combine": m}, 1.0) for m in ("mean", "weighted", "stacking", "median")]
    history += [({"combine": "weighted", "rounds": 50}, 1.0), ({"combine": "weighted", "rounds": 10}, 0.5)]
    following = []
    for _ in range(6):
        settings = _planned(regression, sols, history)
        following.append(settings)
        history.append((settings, 1.0))
    assert {"combine": "weighted", "rounds": 25} not in following
    assert following[0] == {"combine": "weighted", "rounds": 10, "seeds": 3}


def test_a_time_driven_test_version_grows_its_bags_into_the_time_it_was_given(tmp_path):
    """Issue 28 (runs use at least 90 % of their limit): the time plan sizes finalization from the
    script's estimate, which overstated boosters' refits on every row (population-by-age at
    120 s: 107 s estimated, 29 s taken, a quarter of the limit idle). A time-driven run's test
    version grows each seed-varying member's bag while its part of the time left holds another
    fit (GROW_MARGIN times the last) and the test predictions of every fit, up to GROWN_BAG fits,
    once every member has its own fits (annual-precipitation: one bag grown first left the next
    member's fit no time); a single model that does not vary with the seed is fit once, first.
    With the deadline passed it keeps one fit per member and still writes its submission; a
    fixed-step run's test version and every search script keep their bags' sizes."""
    timed = Env("regression-480", tmp_path, PipelineConfig(subsample_limit=30000, step_policy="time"))
    sols = [_solution(timed, "random forest"), _solution(timed, "lightgbm"), _solution(timed, "ridge")]
    mean = timed.ok("ensembler", solutions=sols, plan=_plan({"combine": "mean"})).code
    bagged = timed.ok("ensembler", solutions=sols, plan=_plan({"combine": "mean", "seeds": 3})).code
    assert "GROW_SEEDS" not in mean and "GROW_SEEDS = 0" in bagged   # the search's scripts
    test_script = timed.ok("test", **{"task description": "", "final solution": mean}).code
    assert parse_spec(test_script)["train"]["grow_seeds"] == GROWN_BAG
    probe = test_script + textwrap.dedent("""
        print("FITS", [(name, len(model.estimators_)) if isinstance(model, SeedBagged) else name
                       for name, model in members])
    """)
    unhurried = timed.run(probe)
    hurried = timed.run(probe, env={"ENGINE_EVAL_DEADLINE": str(time.time())})
    assert unhurried.rc == 0 and hurried.rc == 0, unhurried.stderr + hurried.stderr
    grown = [("random_forest", GROWN_BAG), ("lightgbm", GROWN_BAG), "linear"]
    assert f"FITS {grown!r}" in unhurried.stdout
    assert f"Seed bags grown by {2 * (GROWN_BAG - 1)} fits to [{GROWN_BAG}, {GROWN_BAG}]" in unhurried.stdout
    assert "FITS [('random_forest', 1), ('lightgbm', 1), 'linear']" in hurried.stdout
    assert "Seed bag grown" not in hurried.stdout and "Seed bag cut" not in hurried.stdout
    assert len(hurried.submission) == len(unhurried.submission) > 0
    assert not hurried.submission.equals(unhurried.submission)      # sixteen fits average to another model

    bagged_test = timed.ok("test", **{"task description": "", "final solution": bagged}).code
    bagged_run = timed.run(bagged_test + "\nprint('FITS', [len(m.estimators_) for _, m in members if isinstance(m, SeedBagged)])\n")
    assert bagged_run.rc == 0 and "FITS [16, 16]" in bagged_run.stdout, bagged_run.stderr
    assert "Seed bags grown by 26 fits to [16, 16]" in bagged_run.stdout

    fixed = Env("regression-480", tmp_path / "fixed", PipelineConfig(subsample_limit=30000))
    fixed_test = fixed.ok("test", **{"task description": "", "final solution": mean}).code
    assert "grow_seeds" not in parse_spec(fixed_test)["train"] and "GROW_SEEDS" not in fixed_test


def test_a_time_driven_test_version_grows_a_booster_the_seed_does_not_change_by_row_samples(tmp_path):
    """Issue 28 (runs use at least 90 % of their limit): a HistGB the seed does not change had
    nothing to grow, and its test version left the time the estimate held back idle
    (galaxy-velocity at 120 s, seed 1: 2.5 s of 10.5 s taken, the run ended at 89 %). Its bag's
    first fit learns from every row — the model the run validated — and the fits grown after it
    from their own nine tenths of the rows; with the deadline passed it is that one fit alone."""
    from conftest import Env

    timed = Env("regression", tmp_path, PipelineConfig(subsample_limit=30000, step_policy="time"))
    hgb = _solution(timed, "histogram gradient boosting")
    assert parse_spec(hgb)["model"]["members"][0]["family"] == "hist_gradient_boosting"
    test_script = timed.ok("test", **{"task description": "", "final solution": hgb}).code
    probe = test_script + textwrap.dedent("""
        bag = members[0][1]
        alone = clone(bag.estimator).fit(X, y)
        same = [bool(np.allclose(fit.predict(X_test), alone.predict(X_test))) for fit in bag.estimators_]
        print("FITS", len(bag.estimators_), "WHOLE", same[0], "SAMPLED", not any(same[1:]))
    """)
    unhurried = timed.run(probe)
    hurried = timed.run(probe, env={"ENGINE_EVAL_DEADLINE": str(time.time())})
    assert unhurried.rc == 0 and hurried.rc == 0, unhurried.stderr + hurried.stderr
    assert f"FITS {GROWN_BAG} WHOLE True SAMPLED True" in unhurried.stdout
    assert f"Seed bags grown by {GROWN_BAG - 1} fits to [{GROWN_BAG}]" in unhurried.stdout
    assert "FITS 1 WHOLE True SAMPLED True" in hurried.stdout
    assert len(hurried.submission) == len(unhurried.submission) > 0

    search_script = timed.ok("ensembler", solutions=[hgb, hgb], plan=_plan({"combine": "mean"})).code
    assert "whole_first" not in search_script   # the search's scripts keep their models unbagged
