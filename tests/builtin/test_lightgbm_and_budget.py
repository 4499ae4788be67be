"""Issue 19: LightGBM where installed (scikit-learn fallback), search rows sized by the time
limit, and the final refit on every training row."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import lightgbm  # noqa: F401  (the ml extra, which make test installs: the agent must use it)
import pytest

from engine.agents.builtin.catalog import FAMILIES, PREFERENCE, family_for_name
from engine.agents.builtin.search_rows import MIN_SEARCH_ROWS, search_rows
from engine.agents.builtin.spec import parse_spec
from events.agent_outputs import RetrieverOutput
from events.domain import PipelineConfig

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("limit,cap,rows", [(120, 30000, 3600), (3600, 30000, 30000), (10, 30000, MIN_SEARCH_ROWS),
                                            (600, 5000, 5000)])
def test_search_rows_grow_with_the_time_limit_up_to_the_cap(limit, cap, rows):
    assert search_rows(PipelineConfig(time_limit_seconds=limit, subsample_limit=cap)) == rows


def test_lightgbm_is_the_first_family_where_installed():
    assert PREFERENCE["classification"][0] == PREFERENCE["regression"][0] == "lightgbm"
    assert family_for_name("LightGBM").key == "lightgbm"
    assert family_for_name("HistGradientBoostingRegressor").key == "hist_gradient_boosting"


def test_without_lightgbm_the_agent_falls_back_to_scikit_learn():
    """A Python where `import lightgbm` fails: no LightGBM family, and the name maps to HistGBM."""
    probe = textwrap.dedent("""
        import sys
        sys.modules["lightgbm"] = None   # what an interpreter without the package sees
        from engine.agents.builtin.catalog import FAMILIES, PREFERENCE, family_for_name
        assert "lightgbm" not in FAMILIES, list(FAMILIES)
        assert all("lightgbm" not in keys for keys in PREFERENCE.values())
        print(family_for_name("LightGBM").key, PREFERENCE["regression"][0])
    """)
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["hist_gradient_boosting", "hist_gradient_boosting"]


def test_retriever_proposes_lightgbm_first(multiclass):
    out = RetrieverOutput.model_validate(multiclass.ok("retriever", task_description="", M=2).structured)
    assert "LGBMClassifier" in out.models[0].model_name
    example = multiclass.run(out.models[0].example_code)
    assert example.rc == 0, example.stderr


def test_lightgbm_script_handles_text_categories_and_gaps_and_refits_on_all_rows(multiclass):
    """The multiclass task has string labels, missing values and two text columns."""
    code = multiclass.ok("init", task_description="", model_name="LightGBM", example_code="").code
    spec = parse_spec(code)
    assert spec["model"]["members"][0]["family"] == "lightgbm"
    assert spec["train"]["final_fit"] == "full"
    assert "LGBMClassifier(" in code and "n_jobs=CORES" in code
    run = multiclass.run(code)
    assert run.rc == 0, run.stderr
    assert "final fit: full" in run.stdout
    train = multiclass.train()
    assert run.score > train["label"].value_counts(normalize=True).max() + 0.05
    assert run.submission["label"].isin(set(train["label"])).all()


def test_every_family_knows_its_hyper_parameters():
    for family in FAMILIES.values():
        for kind in ("classification", "regression"):
            for name in {**family.model_params[kind], **family.reg_params[kind]}:
                assert name in family.space, (family.key, name)
