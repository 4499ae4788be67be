"""The builtin agent still writes the scripts its recorded runs hold.

Every agent call of the replay fixtures recorded with the builtin agent is asked again, with the
recorded request, task, settings and seed, and the script of the answer must be the recorded one,
byte for byte. Replaying a fixture reads the recorded answers and never asks the agent, so only
this test notices a renderer that writes something else.

Some of what the agent writes is newer than the recordings. The scores on fixed groups of the
scored rows (``script_blocks/score_groups.py``, written after the validation score) are cut from
the new script before the comparison. These are put back to the text the recordings hold, only
these and exactly as they are rendered:

- the REGULARIZATION block's rule for wide matrices (docs/decisions/0031-wide-matrices-cheaper-trees.md);
- the early-stopping block's pace (docs/decisions/0032-drafts-sized-to-their-window.md; the block
  as it was is kept in ``recorded_blocks/``);
- the regression predictions kept within the training target's range (``script_blocks/training.py``,
  ``blend_stacking.py``);
- the names past ten classes read as their alphabetical rank (``script_blocks/data.py``,
  ``preprocessor.py``; docs/decisions/0036-names-as-alphabetical-rank.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from engine.agents.base import AgentContext
from engine.agents.builtin import BuiltinBackend
from engine.agents.builtin.blocks import SCRIPT_MARK, block, insert, source
from engine.agents.builtin.render_train import score_groups_code
from engine.run.lifecycle import prepare_task
from events.core import AgentCallCompleted, AgentCallRequested, RunStarted
from events.domain import PipelineConfig
from tests.replays.fixtures import FIXTURES, FixtureSpec, read_fixture

BUILTIN = [f for f in FIXTURES if f.agent == "builtin"]
# The score-groups block as render_train.score_groups_code writes it (module docstring).
SCORE_GROUPS_BLOCK = re.compile(
    r"^SCORE_GROUPS = \d+\nif len\(y_score\) >= 2 \* SCORE_GROUPS:\n(?:    .*\n)+?"
    r"    print\(\"Validation Score Groups:\".*\n", re.M)


def recorded_calls(fixture: FixtureSpec) -> tuple[RunStarted, list[tuple[AgentCallRequested, AgentCallCompleted]]]:
    """The run's start and every (request, completed answer) pair of the fixture, in log order."""
    envelopes = read_fixture(fixture.path)
    started = envelopes[0].event()
    assert isinstance(started, RunStarted)
    requests: dict[str, AgentCallRequested] = {}
    pairs = []
    for envelope in envelopes:
        event: Any = envelope.event()
        if isinstance(event, AgentCallRequested):
            requests[event.effect_id] = event
        elif isinstance(event, AgentCallCompleted):
            pairs.append((requests[event.effect_id], event))
    return started, pairs


# The REGULARIZATION block after its gene, as rendered now and as the recordings hold it.
REGULARIZATION_NOW = block("regularization").split("REG_CFG = {}\n", 1)[1]
REGULARIZATION_RECORDED = '''

# Below this many columns every boosted tree sees them all: a fraction of two columns is one,
# and trees that each split on a single column cannot learn how the columns interact.
FEW_COLUMNS = 8


def reg_kwargs(name, family):
    """Regularisation strength of one model: by member name first, else by family."""
    kwargs = dict(REG_CFG.get(name, REG_CFG.get(family, {})))
    if X_tr.shape[1] < FEW_COLUMNS:
        kwargs.pop("colsample_bytree", None)
    return kwargs
'''


def _early_stop_before_search_rows(source: str) -> str:
    """The early-stopping block as rendered (its deadline inserted), up to its SEARCH_ROWS line,
    the one constant the renderer sets."""
    text = source.partition(SCRIPT_MARK + "\n")[2].partition("\nSEARCH_ROWS = ")[0]
    return insert(text, deadline=block("deadline"))


RECORDED_BLOCKS = Path(__file__).parent / "recorded_blocks"
EARLY_STOP_NOW = _early_stop_before_search_rows(source("early_stop"))
EARLY_STOP_RECORDED = _early_stop_before_search_rows((RECORDED_BLOCKS / "early_stop_before_0032.txt").read_text())
# A regression member's predictions kept within the training target's range: the training block's
# end and two lines of the stacking blend, as rendered now and as the recordings hold them.
TARGET_RANGE_NOW = "    return in_target_range(" + source("training").partition("    return in_target_range(")[2].rstrip("\n")
TARGET_RANGE_RECORDED = "    return model.predict(data)"
STACKING_LINES = (("oof = [in_target_range(cross_val_predict(clone(m), X_tr, y_tr, cv=folds)) for _, m in members]",
                   "oof = [cross_val_predict(clone(m), X_tr, y_tr, cv=folds) for _, m in members]"),
                  ("return in_target_range(meta.predict(stack_features(preds)))",
                   "return meta.predict(stack_features(preds))"))


# Names past ten classes reach the models as their alphabetical rank (script_blocks/data.py,
# preprocessor.py): the lines as rendered now and as the recordings hold them.
DATA_NOW = source("data")
PREPROCESSOR_NOW = source("preprocessor")
# A line taken out is matched with the line break before it: each text is compared without its
# trailing ones.
NAME_RANK_LINES = (
    ("\n# There the names themselves" + DATA_NOW.partition("\n# There the names themselves")[2].partition(
        "\nMANY_CLASSES = ")[0], ""),
    ("\nNAME_RANK_COLS = []", ""),
    ("    NAME_COLS, NAME_RANK_COLS = [], NAME_COLS", "    NAME_COLS = []"),
    ("\nRANK_COLS = [c for c in CAT_COLS if c in NAME_RANK_COLS]", ""),
    ("WIDE_CAT_COLS = [c for c in CAT_COLS if X[c].nunique() > MANY_LEVELS and c not in RANK_COLS]\n"
     "NARROW_CAT_COLS = [c for c in CAT_COLS if c not in WIDE_CAT_COLS and c not in RANK_COLS]",
     "WIDE_CAT_COLS = [c for c in CAT_COLS if X[c].nunique() > MANY_LEVELS]\n"
     "NARROW_CAT_COLS = [c for c in CAT_COLS if c not in WIDE_CAT_COLS]"),
    ("\n\n\nclass AlphabeticalRank" + PREPROCESSOR_NOW.partition("\n\n\nclass AlphabeticalRank")[2].partition(
        "\n\n\ndef make_preprocessor(")[0], ""),
    ('\n    ranks = Pipeline([("impute", SimpleImputer(strategy="most_frequent")), ("rank", AlphabeticalRank())])', ""),
    ('("wide", wide, WIDE_CAT_COLS), ("rank", ranks, RANK_COLS)])', '("wide", wide, WIDE_CAT_COLS)])'),
)
NEWER_BLOCKS = ((REGULARIZATION_NOW, REGULARIZATION_RECORDED), (EARLY_STOP_NOW, EARLY_STOP_RECORDED),
                (TARGET_RANGE_NOW, TARGET_RANGE_RECORDED), *STACKING_LINES, *NAME_RANK_LINES)


def without_score_groups(script: str | None) -> str | None:
    """The script as the recordings' renderer wrote it (module docstring)."""
    if script is None:
        return None
    script = SCORE_GROUPS_BLOCK.sub("", script)
    for pad in ("", "    ", "        "):   # a script's own block, or one inside an ablation's function
        for block_now, block_recorded in NEWER_BLOCKS:
            now, recorded = (_indented(text.rstrip("\n"), pad) for text in (block_now, block_recorded))
            script = script.replace(now, recorded)
    return script


def _indented(text: str, pad: str) -> str:
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


@pytest.mark.parametrize("fixture", BUILTIN, ids=[f.name for f in BUILTIN])
def test_the_agent_writes_the_recorded_scripts_again(fixture: FixtureSpec, tmp_path: Path) -> None:
    started, pairs = recorded_calls(fixture)
    task = prepare_task(fixture.task, tmp_path / "task")
    ctx = AgentContext(run_id=fixture.run_id, run_dir=tmp_path, work_dir=tmp_path, task=started.task,
                       task_dir=task.public_dir, config=PipelineConfig(**started.config), seed=started.seed)
    scripts = 0
    for request, recorded in pairs:
        answer = BuiltinBackend().answer(request, ctx)
        assert isinstance(answer, AgentCallCompleted), (request.effect_id, answer)
        assert without_score_groups(answer.code) == recorded.code, request.effect_id
        scripts += recorded.code is not None and "# builtin-spec:" in recorded.code
    assert scripts >= 5, "the fixture should hold the builtin agent's scripts"


def test_only_the_score_groups_block_is_cut() -> None:
    """The cut removes the block as rendered and nothing around it: the final score's line before
    it stays, and so does the refit after it."""
    rendered = score_groups_code("val_blend").rstrip("\n") + "\n"
    final_score, block = rendered.split("\n", 1)
    assert final_score == 'print(f"Final Validation Performance: {val_score}")' and block.startswith("SCORE_GROUPS =")
    after = "FIT_STARTED = time.monotonic()\n"
    assert without_score_groups(rendered + after) == final_score + "\n" + after
    assert without_score_groups(final_score + "\n" + after) == final_score + "\n" + after
