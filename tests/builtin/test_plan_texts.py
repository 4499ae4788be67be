"""The plan prose the builtin agent reads from plan_texts.json: a text for every blend method it
can plan, and the texts its plans quote."""

from __future__ import annotations

from engine.agents.builtin.catalog import FAMILIES
from engine.agents.builtin.ensembling import COMBINE_DESCRIPTIONS
from engine.agents.builtin.plan_texts import SETTING_REASONS
from engine.agents.builtin.render_train import COMBINE_METHODS


def test_every_blend_method_has_its_description_and_no_other_method_has_one() -> None:
    assert sorted(COMBINE_DESCRIPTIONS) == sorted(COMBINE_METHODS)
    assert all(text.strip() and text.endswith(".") for text in COMBINE_DESCRIPTIONS.values())


def test_each_reason_names_a_setting_the_search_can_move() -> None:
    """A reason for a setting nobody searches would never be said: each key is a hyper-parameter
    of some family's space or a DATA, LOSS or TRAINING_TRICKS setting the search moves."""
    searched = {name for family in FAMILIES.values() for name in family.space}
    genes = {"scale", "encode", "indicators", "class_weight", "target_transform", "combine", "early_stop"}
    assert set(SETTING_REASONS) <= searched | genes, set(SETTING_REASONS) - searched - genes
    assert all(isinstance(text, str) and text.strip() for text in SETTING_REASONS.values())
