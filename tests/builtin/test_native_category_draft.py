"""On a task with category columns, Phase 1 drafts its first booster twice: on codes and target
means, and with the categories as native categories; validation picks between them
(docs/decisions/0037-native-categories-drafted-beside-codes.md)."""

from __future__ import annotations

import pytest

from engine.agents.builtin.catalog import FORESTS, MANY_CLASSES, retrieval_order
from engine.agents.builtin.feature_columns import feature_columns
from engine.agents.builtin.retrieval import NATIVE_CATEGORIES, retrieved_families
from engine.agents.builtin.spec import parse_spec
from events.agent_outputs import RetrieverOutput


def test_the_task_s_columns_are_read_by_modality_without_its_id(multiclass, binary):
    # multiclass's id ("p00001", ...) is short and all different: a category by the values alone.
    assert feature_columns(multiclass.data_dir, "categorical") == ("color", "size")
    assert feature_columns(multiclass.data_dir, "numeric") == ("a", "b", "c", "d")
    assert feature_columns(binary.data_dir, "categorical") == ()
    assert feature_columns(multiclass.root / "nowhere", "categorical") == ()
    assert feature_columns(None, "text") == ()


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_the_native_draft_follows_the_booster_and_the_linear_model_paired_with_it(kind):
    order = retrieval_order(kind)
    drafts = retrieved_families(kind, None, 8, categories=True)
    assert drafts[:3] == [(order[0], False), ("linear", False), (order[0], True)]
    assert [key for key, native in drafts if not native] == order[:7], "the other families keep their order"
    assert retrieved_families(kind, None, 8, categories=False) == [(key, False) for key in order[:8]]
    assert retrieved_families(kind, None, 2, categories=True) == [(order[0], False), ("linear", False)]


def test_where_forests_lead_the_native_draft_follows_the_first_booster():
    drafts = retrieved_families("classification", MANY_CLASSES + 1, 8, categories=True)
    keys = [key for key, _ in drafts]
    assert keys[0] in FORESTS
    booster = keys.index("lightgbm")
    assert drafts[booster + 1] == ("lightgbm", True)
    assert sum(native for _, native in drafts) == 1


def test_a_task_with_categories_gets_a_runnable_native_draft_beside_the_coded_one(multiclass):
    models = RetrieverOutput.model_validate(multiclass.ok("retriever", task_description="", M=4).structured).models
    names = [m.model_name for m in models]
    assert len(names) == 4
    assert NATIVE_CATEGORIES in names[2] and "LGBMClassifier" in names[2], names
    assert not any(NATIVE_CATEGORIES in name for name in names[:2] + names[3:]), names

    scores = {}
    for name in (names[0], names[2]):
        code = multiclass.ok("init", task_description="", model_name=name, example_code="").code
        spec = parse_spec(code)
        assert spec is not None
        encode = spec["data"]["prep"]["encode"]
        run = multiclass.run(code)
        assert run.rc == 0, run.stderr[-2000:]
        assert run.score is not None and len(run.submission) == 240
        scores[encode] = run.score
    assert set(scores) == {"ordinal", "native"}


def test_a_task_without_categories_is_retrieved_as_before(binary):
    models = RetrieverOutput.model_validate(binary.ok("retriever", task_description="", M=8).structured).models
    assert not any(NATIVE_CATEGORIES in m.model_name for m in models)
    assert len(models) == 8
