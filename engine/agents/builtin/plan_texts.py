"""The prose the builtin agent says in its plans, kept as data in ``plan_texts.json``: why a
setting is worth moving (the coordinate search's plans, ``coordinate_search.py``) and what each
blend method does (Phase 3's plans, ``ensembling.py``).

The plans quote these texts word for word and recorded runs hold the plans, so a change to a text
is a change to what the agent says (``tests/builtin/test_fixture_scripts.py`` asks it again).
"""

from __future__ import annotations

import json
from importlib import resources

_TEXTS = json.loads(resources.files("engine.agents.builtin").joinpath("plan_texts.json").read_text(encoding="utf-8"))
# Per setting (the last part of a change-set key: ``reg.lightgbm.reg_lambda`` -> ``reg_lambda``).
SETTING_REASONS: dict[str, str] = _TEXTS["setting_reasons"]
# Per blend method (``render_train.COMBINE_METHODS``).
COMBINE_DESCRIPTIONS: dict[str, str] = _TEXTS["combine_descriptions"]
