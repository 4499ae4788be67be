"""Methods that hold on unseen tables (issue 28), each checked by running the script it renders:
a Poisson loss for counts, native categories and native gaps for both boosters, calendar numbers
from date text; and the ablation's variants that put each of them to the validation test inside a
run."""

from __future__ import annotations

import json
import textwrap

import pytest

from engine.agents.builtin.ablation_variants import ablation_variant as _variant
from engine.agents.builtin.catalog import FAMILIES
from engine.agents.builtin.coordinate_search import dimensions
from engine.agents.builtin.render import new_spec, render_solution

# Scripts are run whole, as the engine runs them; their run time is how busy the machine is (on a
# loaded one a single script passed 120 s), never something a test here asserts. The limits are
# safety nets against a hang: one script's, and the test's beside its scripts (up to four).
SCRIPT_TIMEOUT_S = 900
pytestmark = [pytest.mark.skipif("lightgbm" not in FAMILIES, reason="needs the ml extra (LightGBM)"),
              pytest.mark.timeout(4 * SCRIPT_TIMEOUT_S)]


def _run(env, code: str):
    return env.run(code, timeout=SCRIPT_TIMEOUT_S)


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    from conftest import Env

    return Env("dated-counts", tmp_path_factory.mktemp("dated-counts"))


def _spec(kind: str, metric: str, **changes):
    spec = new_spec(kind, metric, 7, None, FAMILIES["lightgbm"])
    for key, value in changes.items():
        gene, _, field = key.partition("__")
        spec[gene][field] = value
    return spec


def _probe(env, spec, expression: str):
    """Run the rendered script, then print ``expression`` evaluated in its namespace as JSON."""
    run = _run(env, render_solution(spec) + f"\nprint('PROBE ' + json.dumps({expression}, default=str))\n"
                  .replace("print('PROBE", "import json\nprint('PROBE"))
    assert run.rc == 0, run.stderr
    line = [ln for ln in run.stdout.splitlines() if ln.startswith("PROBE ")][-1]
    return json.loads(line[len("PROBE "):]), run


def test_a_poisson_loss_reaches_the_booster_only_for_a_non_negative_target(counts):
    spec = _spec("regression", "rmse", loss__target_transform="poisson")
    # The last probe shifts the target below zero first: then no family gets the Poisson loss.
    kwargs, run = _probe(counts, spec, '[loss_kwargs("lightgbm"), loss_kwargs("random_forest"), '
                                       'members[0][1].named_steps["model"].get_params()["estimator__objective"], '
                                       '(y.__isub__(100) is not None) and loss_kwargs("lightgbm")]')
    assert kwargs == [{"objective": "poisson"}, {}, "poisson", {}]
    assert run.score is not None and (run.submission["sales"] >= 0).all()  # a log link predicts no negatives


def test_native_encoding_makes_lightgbm_split_on_category_sets(counts):
    spec = _spec("regression", "rmse", data__prep={**FAMILIES["lightgbm"].prep, "encode": "native"})
    found, _ = _probe(counts, spec, 'sorted({n["decision_type"] for t in members[0][1].named_steps["model"]'
                                    '.estimator_.booster_.dump_model()["tree_info"] for n in [t["tree_structure"]] '
                                    'if "decision_type" in n})')
    assert "==" in found  # a categorical split; ordinal codes only ever give "<="
    ordinal, _ = _probe(counts, _spec("regression", "rmse"), 'category_kwargs(PREP)')
    assert ordinal == {}


def test_native_encoding_makes_the_histogram_booster_split_on_categories_up_to_its_bins(counts):
    """scikit-learn's histogram booster is told its category columns too (a run whose Phase 1 took
    it over LightGBM could not reach native categories before); a column of more levels than its
    bins stays codes to it rather than failing the fit. On 30 stores and 240 date texts, native
    categories score better than codes in their arbitrary order."""
    spec = new_spec("regression", "rmse", 7, None, FAMILIES["hist_gradient_boosting"])
    spec["data"]["prep"] = {**FAMILIES["hist_gradient_boosting"].prep, "encode": "native"}
    probe = '[CAT_COLS, members[0][1].named_steps["model"].estimator_.is_categorical_.tolist()]'
    (cats, flags), native = _probe(counts, spec, probe)
    assert cats == ["date", "store"] and flags[:2] == [True, True] and not any(flags[2:])
    code = render_solution(spec).replace("HIST_LEVELS = 255 ", "HIST_LEVELS = 100 ")
    assert "HIST_LEVELS = 100 " in code
    capped = _run(counts, code + "\nprint('PROBE', members[0][1].named_steps['model'].estimator_.is_categorical_[:2].tolist())\n")
    assert capped.rc == 0, capped.stderr
    assert "PROBE [False, True]" in capped.stdout       # 240 dates over the cap, 30 stores under it
    spec["data"]["prep"]["encode"] = "ordinal"
    kwargs, ordinal = _probe(counts, spec, 'category_kwargs(PREP, "hist_gradient_boosting")')
    assert kwargs == {} and native.score < ordinal.score


@pytest.mark.parametrize("encode", ["ordinal", "onehot"])
def test_a_category_of_many_levels_reaches_the_model_as_cross_fitted_target_means(counts, encode):
    """30 stores (more levels than MANY_LEVELS, the one-hot cap) and 240 date texts: ordinal codes
    put the stores in an arbitrary order and one-hot lumps eleven of them into one column. As target
    means, fitted inside the member's pipeline on its training rows alone, the store's effect
    reaches the model whole: the validation RMSE falls below the same script's with the wide
    columns left to the ordinal or one-hot encoder (MANY_LEVELS raised above their counts)."""
    spec = _spec("regression", "rmse", data__prep={**FAMILIES["lightgbm"].prep, "encode": encode})
    probe = ('[WIDE_CAT_COLS, NARROW_CAT_COLS, '
             'sorted(members[0][1].named_steps["prep"].named_transformers_["wide"]'
             '.named_steps["encode"].get_feature_names_out().tolist())]')
    (wide, narrow, names), means = _probe(counts, spec, probe)
    assert wide == ["date", "store"] and narrow == []
    assert names == ["date", "store"]  # one mean per column for a continuous target
    code = render_solution(spec).replace("MANY_LEVELS = 20\n", "MANY_LEVELS = 10_000\n")
    assert "MANY_LEVELS = 10_000" in code
    coded = _run(counts, code)
    assert coded.rc == 0, coded.stderr
    assert means.score is not None and coded.score is not None
    assert means.score < coded.score


@pytest.fixture(scope="module")
def more_counts(tmp_path_factory):
    from conftest import Env

    return Env("dated-counts-3k", tmp_path_factory.mktemp("dated-counts-3k"))


def test_early_stopping_keeps_the_given_size_below_a_thousand_rows(counts):
    spec = _spec("regression", "rmse")
    assert spec["train"]["early_stop"] is True  # on by default; the coordinate search may turn it off
    found, _ = _probe(counts, spec, '[type(members[0][1].named_steps["model"]).__name__, '
                                    'members[0][1].named_steps["model"].n_rounds_, STOPPING_ROUNDS]')
    assert found == ["EarlyStopped", 400, {}]  # 720 training rows: a tenth of them is too few to read
    plain, _ = _probe(counts, _spec("regression", "rmse", train__early_stop=False),
                      'type(members[0][1].named_steps["model"]).__name__')
    assert plain == "LGBMRegressor"


@pytest.mark.parametrize(("family", "size_param"), [("lightgbm", "n_estimators"),
                                                    ("hist_gradient_boosting", "max_iter"),
                                                    ("gradient_boosting", "n_estimators")])
def test_early_stopping_sizes_every_booster_on_held_out_rows_then_refits_on_all(more_counts, family, size_param):
    """A booster given 300 rounds at a learning rate of 0.5 over-fits the noisy counts long before
    the 300th: sized on a held-out tenth, it stops short of it (LightGBM at 131, scikit-learn's
    HistGB at 10, its GBM at 59 here), and every fit of the script
    (the folds, the final fit on all rows) uses that one stopping point."""
    spec = new_spec("regression", "rmse", 7, None, FAMILIES[family])
    spec["model"]["members"][0]["params"].update({size_param: 300, "learning_rate": 0.5})
    found, run = _probe(more_counts, spec, '[type(members[0][1].named_steps["model"]).__name__, '
                                           'members[0][1].named_steps["model"].n_rounds_, '
                                           f'members[0][1].named_steps["model"].estimator_.{size_param}, '
                                           '[found[0] for found in STOPPING_ROUNDS.values()]]')
    name, rounds, refit, probed = found
    assert name == "EarlyStopped" and refit == rounds and probed == [rounds]
    assert 1 <= rounds < 300  # it could have gone on to 4 × 300
    assert run.score is not None
    fixed, _ = _probe(more_counts, {**spec, "train": {**spec["train"], "early_stop": False}},
                      f'members[0][1].named_steps["model"].{size_param}')
    assert fixed == 300


def test_a_fit_on_many_more_rows_reads_its_own_stopping_point_when_its_time_allows(more_counts):
    """The submitted model is fit on every row after the search scored a sample of them: a stopping
    point read on the sample would size it for the sample. A fit on twice the rows or more reads
    its own, unless the engine's deadline (ENGINE_EVAL_DEADLINE) leaves no time for it."""
    code = render_solution(_spec("regression", "rmse")) + textwrap.dedent("""
        import json
        model = clone(members[0][1])
        readings = []
        for deadline in (float("inf"), time.time()):   # none; one already passed
            DEADLINE = deadline
            STOPPING_ROUNDS.clear()
            model.fit(X_cv.iloc[:1100], y_cv[:1100])
            model.fit(X_cv.iloc[:2000], y_cv[:2000])   # under twice the rows: the first reading holds
            held = [found[1] for found in STOPPING_ROUNDS.values()]
            model.fit(X_cv, y_cv)                      # 2,400 rows
            readings.append([held, [found[1] for found in STOPPING_ROUNDS.values()],
                             model.named_steps["model"].n_rounds_ == list(STOPPING_ROUNDS.values())[0][0]])
        print("PROBE " + json.dumps(readings))
    """)
    run = _run(more_counts, code)
    assert run.rc == 0, run.stderr
    no_deadline, deadline_now = json.loads(run.stdout.split("PROBE ")[-1])
    assert no_deadline == [[1100], [2400], True]
    assert deadline_now == [[1100], [1100], True]


def test_a_test_version_on_many_more_rows_than_the_search_grows_its_trees_where_held_out_rows_say(more_counts):
    """population-by-age (119,000 rows): leaves sized on the search's 3,600-row sample under-fit
    every row (15 leaves scored an RMSE of 580,000 on its test rows, 63 leaves 349,000, 255 leaves
    272,000). A fit on RESIZE_ROWS times the search's rows (SEARCH_ROWS, a test version's) reads
    the tree size as well as the rounds: the leaves grow fourfold while the held-out tenth's loss
    improves and the time left holds another reading. With the deadline passed the size given
    stays, and a search script (SEARCH_ROWS 0) never reads it."""
    code = render_solution(_spec("regression", "rmse")) + textwrap.dedent("""
        import json
        readings = []
        for search_rows, deadline in ((300, float("inf")), (300, time.time()), (0, float("inf"))):
            SEARCH_ROWS, DEADLINE = search_rows, deadline
            STOPPING_ROUNDS.clear()
            CAPACITY.clear()
            stumps = clone(members[0][1]).set_params(model__estimator__num_leaves=2).fit(X_cv, y_cv)
            readings.append([list(CAPACITY.values()), stumps.named_steps["model"].estimator_.num_leaves])
        print("PROBE " + json.dumps(readings))
    """)
    run = _run(more_counts, code)
    assert run.rc == 0, run.stderr
    grown, hurried, search = json.loads(run.stdout.split("PROBE ")[-1])
    assert grown[0] == [{"num_leaves": grown[1]}] and grown[1] in (8, 32, 128, 512)
    assert "Trees grown on 2400 rows: num_leaves = " in run.stdout
    assert hurried == [[{}], 2] and search == [[], 2]


def test_date_text_becomes_calendar_numbers_also_for_dates_never_seen_in_training(counts):
    spec = _spec("regression", "rmse")
    assert spec["data"]["features"] == ["dates", "name_words"]  # on by default; the ablation may take them away
    found, _ = _probe(counts, spec, '{"columns": sorted(c for c in X_test.columns if c.startswith("fe_")), '
                                    '"unseen_missing": int(X_test["fe_date_days"].isna().sum()), '
                                    '"weekdays": sorted(X_test["fe_date_dayofweek"].unique().tolist())}')
    assert found["columns"] == sorted(f"fe_date_{p}" for p in ("days", "dayofweek", "dayofyear", "hour", "month", "year"))
    assert found["unseen_missing"] == 0 and found["weekdays"] == [0, 1, 2, 3, 4, 5, 6]


def test_text_that_is_not_a_date_gets_no_calendar_columns(multiclass):
    found, _ = _probe(multiclass, _spec("classification", "accuracy"),
                      'sorted(c for c in X.columns if c.startswith("fe_"))')
    assert found == []


@pytest.fixture(scope="module")
def products(tmp_path_factory):
    from conftest import Env

    return Env("named-products", tmp_path_factory.mktemp("named-products"))


def test_a_name_that_differs_on_every_row_reaches_the_model_as_its_first_and_last_words(products):
    """The maker is the first word of a name no two rows share: as a category the name is useless
    (every test name is unseen); its words carry the class. A missing name has no words, and a
    date column, text that differs on nearly every row too, is read as a date, not as a name."""
    spec = _spec("classification", "accuracy")
    probe = ('[NAME_COLS, DATE_COLS, '
             'X_test.loc[test_df["name"].notna(), ["name_first_word", "name_last_word"]].head(3).values.tolist(), '
             'test_df["name"].dropna().head(3).tolist(), int(X["fe_name_words"].max()), '
             'bool(X.loc[train_df["name"].isna(), ["name_first_word", "fe_name_words"]].isna().all().all()), '
             'sorted(set(X_test["name_first_word"].dropna()) - set(X["name_first_word"].dropna()))]')
    (names, dates, words, texts, most_words, gaps_kept, unseen), with_words = _probe(products, spec, probe)
    assert names == ["name"] and dates == ["listed"]
    # "Tortix Power TO-00817": the maker first, the code's letters last (digits are not words).
    assert words == [[t.split()[0].lower(), t.split()[-1].split("-")[0].lower()] for t in texts]
    assert most_words == 3 and gaps_kept and unseen == []
    without = _run(products, render_solution(_spec("classification", "accuracy", data__features=["dates"])))
    assert without.rc == 0, without.stderr
    assert with_words.score > 0.95 > 0.5 > without.score   # the maker tells the class; the watts do not


def test_past_many_classes_a_name_gets_no_word_columns(products):
    """A word's target means take one column per class; past MANY_CLASSES the words are left out
    (here four classes against a bound lowered to three)."""
    code = render_solution(_spec("classification", "accuracy")).replace("MANY_CLASSES = 10\n", "MANY_CLASSES = 3\n")
    assert "MANY_CLASSES = 3\n" in code
    run = _run(products, code + "\nprint('PROBE', NAME_COLS, [c for c in X.columns if 'word' in c])\n")
    assert run.rc == 0, run.stderr
    assert "PROBE [] []" in run.stdout


def test_the_ablation_puts_poisson_native_categories_and_dates_to_the_validation_test():
    spec = _spec("regression", "rmse")
    assert _variant(spec, "loss_weighting")[1]["loss"]["target_transform"] == "poisson"
    log_metric = _spec("regression", "rmsle")
    assert _variant(log_metric, "loss_weighting")[1]["loss"]["target_transform"] == "log1p"
    assert _variant(spec, "categorical_encoding")[1]["data"]["prep"]["encode"] == "native"
    histogram = new_spec("regression", "rmse", 7, None, FAMILIES["hist_gradient_boosting"])
    assert _variant(histogram, "categorical_encoding")[1]["data"]["prep"]["encode"] == "native"
    forest = new_spec("regression", "rmse", 7, None, FAMILIES["random_forest"])
    assert _variant(forest, "categorical_encoding")[1]["data"]["prep"]["encode"] == "onehot"
    added = _variant(spec, "feature_engineering")[1]["data"]["features"]
    assert added == ["missing_count", "row_stats", "dates", "name_words"]
    assert _variant({**spec, "data": {**spec["data"], "features": added}}, "feature_engineering")[1]["data"][
        "features"] == ["dates", "name_words"]
    keys = {d.key: d.values for d in dimensions("LOSS", spec["loss"], "regression")}
    assert "poisson" in keys["target_transform"]
    keys = {d.key: d.values for d in dimensions("DATA", spec["data"], "regression")}
    assert "native" in keys["prep.encode"] and (False, True) == keys["feature.dates"]
    keys = {d.key: d.values for d in dimensions("TRAINING_TRICKS", spec["train"], "regression")}
    assert keys["early_stop"] == (False, True)


@pytest.fixture(scope="module")
def rare(tmp_path_factory):
    from conftest import Env

    return Env("rare-class", tmp_path_factory.mktemp("rare-class"))


@pytest.mark.parametrize("family", ["lightgbm", "hist_gradient_boosting", "gradient_boosting"])
def test_early_stopping_reads_its_stopping_point_when_a_class_has_one_training_row(rare, family):
    """A class of two training rows leaves one in a fit on part of them; scikit-learn's boosters
    hold out a stratified tenth to read their stopping point, which one row cannot be split into
    (solar-module-technology's ablation run failed so at 120 s, and the debugger knew no fix). The
    reading leaves such a class out, the fit that follows keeps it, and the script scores."""
    spec = new_spec("classification", "accuracy", 7, None, FAMILIES[family])
    found, run = _probe(rare, spec, '[(lambda m: [m.n_rounds_ >= 1, sorted(m.classes_.tolist())])('
                                    'clone(members[0][1].named_steps["model"]).fit('
                                    'np.arange(3000.0).reshape(1500, 2), np.r_[np.zeros(749, int), np.ones(750, int), [2]])), '
                                    'len(STOPPING_ROUNDS) > 0]')
    assert found == [[True, [0, 1, 2]], True]
    assert run.score is not None


@pytest.fixture(scope="module")
def gaps(tmp_path_factory):
    from conftest import Env

    return Env("faint-gaps", tmp_path_factory.mktemp("faint-gaps"))


@pytest.mark.parametrize("family", ["lightgbm", "hist_gradient_boosting"])
def test_a_booster_draft_sees_numeric_gaps_as_gaps(gaps, family):
    """Both boosters are drafted with native gaps: the numeric columns reach the model with every
    NaN the training rows have (the gap is information), and the script scores and submits."""
    spec = new_spec("regression", "rmse", 7, None, FAMILIES[family])
    assert spec["data"]["prep"]["num_impute"] == "native"
    (missing, passed), run = _probe(gaps, spec, '[int(X_tr["brightness"].isna().sum()), '
                                               'int(np.isnan(members[0][1].named_steps["prep"].fit_transform(X_tr)).sum())]')
    assert passed == missing > 0
    assert run.score is not None and run.submission["distance"].notna().all()


def test_native_gaps_beat_medians_where_the_gap_says_far(gaps):
    """The point of it, measured by the script's own cross-validation: on the faint-gaps table a
    median brightness makes a far object look near; the gap itself tells the booster it is far."""
    native = _run(gaps, render_solution(_spec("regression", "rmse")))
    medians = _run(gaps, render_solution(_spec("regression", "rmse",
                                             data__prep={**FAMILIES["lightgbm"].prep, "num_impute": "median"})))
    assert native.rc == 0 and medians.rc == 0, native.stderr + medians.stderr
    assert native.score < medians.score


def test_a_member_that_cannot_take_gaps_gets_medians_under_the_same_data_gene(gaps):
    """A linear member blended into a booster solution whose DATA gene says "native" (the merge
    keeps one DATA gene) still gets medians: the gaps reach only the families that split on them."""
    spec = new_spec("regression", "rmse", 7, None, FAMILIES["lightgbm"])
    linear = dict(spec["model"]["members"][0], name="linear", family="linear", params={}, prep=None)
    spec["model"]["members"].append(linear)
    spec["reg"]["linear"] = dict(FAMILIES["linear"].reg_params["regression"])
    found, run = _probe(gaps, spec, '[int(np.isnan(m.named_steps["prep"].fit_transform(X_tr)).sum()) for _, m in members]')
    assert found[0] > 0 and found[1] == 0
    assert run.score is not None


def test_the_ablation_puts_native_gaps_against_medians():
    spec = _spec("regression", "rmse")
    said, changed = _variant(spec, "missing_indicators")
    assert changed["data"]["prep"]["num_impute"] == "median" and "medians" in said
    forest = new_spec("regression", "rmse", 7, None, FAMILIES["random_forest"])
    said, changed = _variant(forest, "missing_indicators")
    assert changed["data"]["prep"]["indicators"] is True and changed["data"]["prep"]["num_impute"] == "median"


def test_a_numeric_column_without_a_value_is_left_out_where_gaps_pass_through(gaps):
    """vowel-speaker's speech frames have columns empty on every row: medians drop them (nothing
    to impute from), and so must the pass-through, since the histogram booster cannot bin a column
    of gaps alone ("window shape cannot be larger than input array shape")."""
    spec = new_spec("regression", "rmse", 7, None, FAMILIES["hist_gradient_boosting"])
    found, _ = _probe(gaps, spec, '(lambda A: [list(KeepObserved().fit_transform(A).shape), len(NUM_COLS), '
                                  'bool(np.isnan(KeepObserved().fit_transform(A)).any()), '
                                  'HistGradientBoostingRegressor(max_iter=5).fit(KeepObserved().fit_transform(A), y_tr)'
                                  '.n_iter_, type({n: t for n, t, _ in make_preprocessor(**PREP, family="hist_gradient_boosting")'
                                  '.transformers}["num"].named_steps["impute"]).__name__])'
                                  '(np.c_[X_tr[NUM_COLS].to_numpy(dtype=float), np.full(len(X_tr), np.nan)])')
    (rows, columns), numeric, gaps_kept, rounds, step = found
    assert columns == numeric and gaps_kept and rounds == 5 and step == "KeepObserved"
