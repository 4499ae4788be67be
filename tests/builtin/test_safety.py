"""Leakage detection/correction, the debugger, and the data-usage check."""

from __future__ import annotations

import shutil

from events.agent_outputs import LeakageDetectionOutput

LEAKY = '''import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

train = pd.read_csv("./input/train.csv")
test = pd.read_csv("./input/test.csv")
features = [c for c in train.columns if c.startswith("f")]
X = train[features].values
y = train["target"].values
X_test = test[features].values
scaler = StandardScaler()
X = scaler.fit_transform(X)
X_test = scaler.transform(X_test)
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=0)
model = LogisticRegression().fit(X_train, y_train)
print(f"Final Validation Performance: {roc_auc_score(y_val, model.predict_proba(X_val)[:, 1])}")
'''

LEAKY_VAL = '''from sklearn.preprocessing import StandardScaler
scaler = StandardScaler()
X_train_s = scaler.fit_transform(X_train)
X_val_s = scaler.fit_transform(X_val)
'''


def test_leakage_detection_flags_scaler_fitted_before_split(binary):
    out = LeakageDetectionOutput.model_validate(binary.ok("leakage", "detection", code=LEAKY).structured)
    leaks = [a for a in out.answers if a.leakage_status == "Yes Data Leakage"]
    assert len(leaks) == 1 and leaks[0].code_block in LEAKY
    assert "fit_transform(X)" in leaks[0].code_block


def test_leakage_correction_fits_on_training_rows_and_runs(binary):
    fixed = binary.ok("leakage", "correction", code=LEAKY).code
    assert "scaler.fit(X_train)" in fixed and "fit_transform(X)" not in fixed
    again = binary.ok("leakage", "detection", code=fixed).structured
    assert all(a["leakage_status"] == "No Data Leakage" for a in again["answers"])
    run = binary.run(fixed)
    assert run.rc == 0, run.stderr
    assert run.score > 0.8


def test_leakage_on_validation_rows_and_clean_builtin_scripts(binary):
    out = binary.ok("leakage", "detection", code=LEAKY_VAL).structured
    assert [a["leakage_status"] for a in out["answers"]] == ["Yes Data Leakage"]
    assert out["answers"][0]["code_block"] == "X_val_s = scaler.fit_transform(X_val)"
    assert "X_val_s = scaler.transform(X_val)" in binary.ok("leakage", "correction", code=LEAKY_VAL).code
    ours = binary.ok("init", task_description="", model_name="svm", example_code="").code
    clean = binary.ok("leakage", "detection", code=ours).structured["answers"]
    assert clean[0]["leakage_status"] == "No Data Leakage" and clean[0]["code_block"] in ours
    test_script = binary.ok("test", **{"task description": "", "final solution": ours}).code
    assert binary.ok("leakage", "detection", code=test_script).structured["answers"][0]["leakage_status"] == \
        "No Data Leakage"


def test_debugger_fixes_missing_import(binary):
    broken = LEAKY.replace("from sklearn.model_selection import train_test_split\n", "")
    run = binary.run(broken)
    assert run.rc != 0 and "NameError" in run.stderr
    fixed = binary.ok("debugger", code=broken, bug=run.stderr).code
    assert "from sklearn.model_selection import train_test_split" in fixed
    assert binary.run(fixed).rc == 0


def test_debugger_fixes_wrong_column_and_removed_api(binary):
    broken = LEAKY.replace('train["target"]', 'train["targte"]').replace(
        "from sklearn.preprocessing import StandardScaler", "from sklearn.preprocessing import StandardScaler, OneHotEncoder\n"
        "enc = OneHotEncoder(sparse=False)")
    for expected in ("sparse_output", '"target"'):
        run = binary.run(broken)
        assert run.rc != 0
        broken = binary.ok("debugger", code=broken, bug=run.stderr).code
        assert expected in broken
    assert binary.run(broken).rc == 0


def test_debugger_fails_honestly(binary):
    failed = binary.fails("debugger", code="print('hi')\n", bug="Traceback (most recent call last):\n"
                          "  File \"solution.py\", line 1, in <module>\nZeroDivisionError: division by zero")
    assert "does not recognise" in failed.error
    binary.fails("evo_debug", code="asdf qwer zxcv", error="SyntaxError: invalid syntax")
    binary.fails("debugger", code="", bug="whatever")


def test_debugger_rebuilds_a_broken_builtin_script(binary):
    ours = binary.ok("init", task_description="", model_name="random forest", example_code="").code
    broken = ours.replace("val_score = float(", "val_score = flaot(", 1)
    fixed = binary.ok("debugger", code=broken, bug="Traceback (most recent call last):\n"
                      "  File \"solution.py\", line 9, in <module>\nNameError: name 'flaot' is not defined").code
    assert fixed == ours


def test_data_role_uses_unused_files(binary, tmp_path):
    ours = binary.ok("init", task_description="", model_name="random forest", example_code="").code
    reply = binary.ok("data", **{"initial solution": ours, "task description": "d"})
    assert "All the provided information is used." in reply.text and reply.code is None

    # A task shipping extra labelled rows: the revised script reads them too.
    extra_dir = tmp_path / "input"
    shutil.copytree(binary.data_dir, extra_dir)
    train = binary.train()
    train.iloc[:100].assign(id=lambda d: d["id"] + 100000).to_csv(extra_dir / "original.csv", index=False)
    from dataclasses import replace
    ctx = replace(binary.ctx(), task_dir=extra_dir)
    from events.core import AgentCallRequested
    request = AgentCallRequested(effect_id="d", agent_type="data", prompt="",
                                 variables={"initial solution": ours, "task description": "d"})
    result = binary.backend.answer(request, ctx)
    assert "original.csv" in result.code and "original.csv" in result.text
    assert "All the provided information is used." not in result.text
