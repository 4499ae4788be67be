"""Canned model answers for every MLE-STAR role: realistic prose around tiny, real scripts.

One source of answers for two test doubles (issue "Replay-based regression suite", items 1 and 7):

* the protocol-level fake ``claude`` CLI (``tests/replays/fake_cli.py``), which reads the prompt
  the Claude backend really sends, recognises the role from the prompt templates and answers
  through the SDK's stream-json protocol;
* the fast scripted backend of the crash tests (``tests/crash/scripted.py``), which answers from
  the request's structured ``variables`` directly.

Every solution is a real Python script (no pandas/sklearn, well under 0.1 s): it counts the
training rows, derives its "validation score" from its hyper-parameter lines, and prints
``Final Validation Performance: x``; test scripts also copy the sample submission to
``./final/submission.csv``. Refining a hyper-parameter line changes the score, so the pipeline's
comparisons are real. ``Scenario`` switches on the interesting paths: a draft with a bug (a debug
round), a draft with a leaky block (a leakage correction), and a merge that is worse or crashes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SCORE_PHRASE = "Final Validation Performance"
MODELS = (("LightGBM gradient boosting", 0.82), ("Random forest", 0.80), ("Logistic regression", 0.78))
LEAK_COMMENT = "# scale features with statistics of the full data set, validation rows included"
LEAK_BLOCK = LEAK_COMMENT + "\nscale_rows = n_rows"
LEAK_FIX = "# scale features with statistics of the training split only\nscale_rows = int(n_rows * 0.8)"
BUG_LINE = "n_valid = len(rwos) // 5"
BUG_FIX = "n_valid = n_rows // 5"
SUBSAMPLE_BLOCK = "# subsample to at most 30,000 rows so every experiment stays fast\nn_rows = min(n_rows, 30000)"
ABLATION_PRINT = 'print(f"{name}: {value:.4f}")'
ABLATION_TYPO = 'print(f"{name}: {valeu:.4f}")'
MERGE_CRASH = 'raise ValueError("operands could not be broadcast together with shapes (30,) (29,)")'

SCRIPT = '''"""{title}"""
import glob
import os

BASE = {base:.4f}
N_ESTIMATORS = {n_estimators}
LEARNING_RATE = {learning_rate}

train_files = [p for p in sorted(glob.glob(os.path.join("input", "*.csv")))
               if "test" not in os.path.basename(p) and "sample" not in os.path.basename(p)]
with open(train_files[0]) as fh:
    n_rows = sum(1 for _ in fh) - 1
{subsample}
{extra}
{valid_line}
# the validation score of this configuration on the held-out split
score = BASE + min(N_ESTIMATORS, 1000) / 20000 + (0.1 - abs(LEARNING_RATE - 0.05)) / 10
print(f"training rows: {{n_rows - n_valid}}, validation rows: {{n_valid}}")
print(f"{phrase}: {{score:.4f}}")
'''

SUBMISSION_TAIL = '''
# predict the test set and write the submission in the sample's format
import shutil

os.makedirs("final", exist_ok=True)
shutil.copy(os.path.join("input", "sample_submission.csv"), os.path.join("final", "submission.csv"))
print("wrote ./final/submission.csv")
'''

ABLATION = '''"""Ablation study of the current solution: drop one component at a time."""
BASE = {base:.4f}
variants = {{
    "full solution": BASE + {n_estimators} / 20000 + (0.1 - abs({learning_rate} - 0.05)) / 10,
    "without the extra boosting rounds (N_ESTIMATORS = 50)": BASE + 50 / 20000 + (0.1 - abs({learning_rate} - 0.05)) / 10,
    "with the default learning rate (LEARNING_RATE = 0.3)": BASE + {n_estimators} / 20000 + (0.1 - 0.25) / 10,
}}
for name, value in variants.items():
    print(f"{{name}}: {{value:.4f}}")
'''


@dataclass(frozen=True)
class Scenario:
    """Which interesting paths the canned model takes (all deterministic)."""

    buggy_draft: bool = True        # the second draft has a typo: one debug round fixes it
    leaky_draft: bool = True        # the first draft leaks validation rows: one leakage correction
    merge: str = "worse"            # "accept" | "worse" (rejected: no improvement) | "crash" (merge failed)
    ablation_bug_path: str | None = None  # this Phase 2 path's ablation script has a typo (one debug round)


SCENARIOS = {"default": Scenario(), "merge-crash": Scenario(merge="crash"),
             "fast": Scenario(merge="accept", ablation_bug_path="path-1")}


def fenced(code: str) -> str:
    return f"```python\n{code.strip(chr(10))}\n```"


def script(title: str, base: float, *, n_estimators: int = 100, learning_rate: float = 0.1, leak: bool = False,
           bug: bool = False, extra: str = "") -> str:
    lines = [extra] if extra else []
    if leak:
        lines.append(LEAK_BLOCK)
    return SCRIPT.format(title=title, base=base, n_estimators=n_estimators, learning_rate=learning_rate,
                         subsample=SUBSAMPLE_BLOCK, extra="\n".join(lines), phrase=SCORE_PHRASE,
                         valid_line=BUG_LINE if bug else BUG_FIX)


def params_of(code: str) -> dict[str, float]:
    found = {k: float(v) for k, v in re.findall(r"^(BASE|N_ESTIMATORS|LEARNING_RATE) = ([0-9.]+)", code, re.M)}
    return {"BASE": found.get("BASE", 0.8), "N_ESTIMATORS": found.get("N_ESTIMATORS", 100.0),
            "LEARNING_RATE": found.get("LEARNING_RATE", 0.1)}


def text_of(value: Any) -> str:
    """A variable as text, whether it arrived rendered (fake CLI) or structured (scripted backend)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "\n\n".join(text_of(v) for v in value)
    return json.dumps(value)


def count_items(value: Any, marker: str) -> int:
    if isinstance(value, (list, tuple)):
        return len(value)
    return text_of(value).count(marker)


def _model(name: str) -> tuple[int, float]:
    for i, (model, base) in enumerate(MODELS):
        if model == name:
            return i, base
    return 0, 0.8


def _line(code: str, name: str) -> str | None:
    found = re.search(rf"^{name} = [0-9.]+$", code, re.M)
    return found.group(0) if found else None


def answer(agent_type: str, variant: str | None, variables: Mapping[str, Any], *, effect_id: str = "",
           scenario: Scenario = Scenario()) -> tuple[str, dict[str, Any] | None]:
    """(text, structured) the canned model answers with. ``effect_id`` only tells the Phase 2
    paths apart (each path's session explores a different block)."""
    v = variables
    if agent_type == "retriever":
        m = int(str(v.get("M", 2)).strip() or 2)
        models = [{"model_name": name, "example_code": f"# {name}\nmodel = make_model()\nmodel.fit(X, y)\n"
                                                       "pred = model.predict(X_valid)"} for name, _ in MODELS[:m]]
        return ("I looked for model families that win tabular competitions like this one.", {"models": models})
    if agent_type == "init":
        i, base = _model(text_of(v.get("model_name", "")))
        code = script(f"A first {MODELS[i][0]} solution.", base, n_estimators=100 + 50 * i,
                      leak=scenario.leaky_draft and i == 0, bug=scenario.buggy_draft and i == 1)
        return (f"Here is a simple first solution built around {MODELS[i][0]}, with default settings and a "
                f"hold-out validation split.\n\n{fenced(code)}\n\nIt prints the validation score on the last line.",
                None)
    if agent_type == "merger":
        base_p, ref_p = params_of(text_of(v.get("base_code", ""))), params_of(text_of(v.get("reference_code", "")))
        if scenario.merge == "accept":
            base, extra = max(base_p["BASE"], ref_p["BASE"]) + 0.01, ""
        elif scenario.merge == "worse":
            base, extra = min(base_p["BASE"], ref_p["BASE"]) - 0.02, ""
        else:
            base, extra = base_p["BASE"], "blend = [0.5] * 30\n" + MERGE_CRASH
        code = script("The base solution with the reference model blended in (average of both models).", base,
                      n_estimators=int(base_p["N_ESTIMATORS"]), learning_rate=base_p["LEARNING_RATE"], extra=extra)
        return ("I kept the base solution's data loading and validation split and added the reference model; the "
                f"two models' validation predictions are averaged.\n\n{fenced(code)}", None)
    if agent_type == "debugger":
        code = text_of(v.get("code", ""))
        if BUG_LINE in code:
            return ("The traceback shows a NameError: `rwos` is a typo for the row count. Fixed:\n\n"
                    + fenced(code.replace(BUG_LINE, BUG_FIX)), None)
        if ABLATION_TYPO in code:
            return ("NameError: `valeu` is a typo for `value`. Fixed:\n\n"
                    + fenced(code.replace(ABLATION_TYPO, ABLATION_PRINT)), None)
        return ("The shapes of the two prediction arrays differ and I cannot see where from the code alone; "
                "here is the script unchanged.\n\n" + fenced(code), None)
    if agent_type == "leakage" and variant == "correction":
        return ("The scaling statistics must come from the training split only:\n\n" + fenced(LEAK_FIX), None)
    if agent_type == "leakage":
        code = text_of(v.get("code", ""))
        if LEAK_BLOCK in code:
            return ("", {"answers": [{"leakage_status": "Yes Data Leakage", "code_block": LEAK_BLOCK}]})
        first = next((line for line in code.splitlines() if line.strip()), "import os")
        return ("", {"answers": [{"leakage_status": "No Data Leakage", "code_block": first}]})
    if agent_type == "data":
        return ("All the provided information is used.", None)
    if agent_type == "ablation":
        p = params_of(text_of(v.get("solution_script", "")))
        code = ABLATION.format(base=p["BASE"], n_estimators=int(p["N_ESTIMATORS"]), learning_rate=p["LEARNING_RATE"])
        if scenario.ablation_bug_path and scenario.ablation_bug_path in effect_id:
            code = code.replace(ABLATION_PRINT, ABLATION_TYPO)
        return ("This ablation removes one component at a time and prints each variant's score.\n\n"
                + fenced(code), None)
    if agent_type == "summarize":
        return ("Ablation summary: the extra boosting rounds matter most; dropping them costs the most validation "
                "score. The learning rate matters less but the default of 0.3 is clearly worse.", None)
    if agent_type == "extractor":
        return _extract(v, effect_id)
    if agent_type == "coder":
        block, plan = text_of(v.get("code_block", "")), text_of(v.get("plan", ""))
        target = re.search(r"to ([0-9]+(?:\.[0-9]+)?)", plan)
        name = block.split(" = ")[0].strip()
        value = target.group(1) if target else block.split(" = ")[-1]
        new = f"{name} = {int(float(value))}" if name == "N_ESTIMATORS" else f"{name} = {value}"
        return (f"Following the plan, the block becomes:\n\n{fenced(new)}", None)
    if agent_type == "planner":
        block = text_of(v.get("code_block", ""))
        tried = count_items(v.get("plans", v.get("plan_history", "")), "## Plan:")
        name, value = block.split(" = ")[0].strip(), float(block.split(" = ")[-1])
        if name == "N_ESTIMATORS":
            return (f"Raise N_ESTIMATORS to {int(value + 200 + 150 * tried)} and rely on the small learning rate "
                    "to avoid overfitting.", None)
        return (f"Lower LEARNING_RATE to {round(value / (2 + tried), 4)} for a smoother fit.", None)
    if agent_type == "ens_planner":
        n = count_items(v.get("solutions", ""), "## Solution")
        tried = count_items(v.get("plans", v.get("plan_history", "")), "## Plan:")
        return (f"Average the validation predictions of the {n} solutions" + (" with weights favouring the best one"
                                                                           if tried else "") + ".", None)
    if agent_type == "ensembler":
        sols = v.get("solutions", "")
        blocks = [text_of(s) for s in sols] if isinstance(sols, (list, tuple)) else re.split(r"## Solution \d+", sols)
        params = [params_of(block) for block in blocks if "BASE" in block] or [params_of(text_of(sols))]
        best = max(params, key=lambda p: p["BASE"] + p["N_ESTIMATORS"] / 20000)
        weighted = "weights" in text_of(v.get("plan", ""))
        code = script("An ensemble that averages the solutions' validation predictions.",
                      best["BASE"] + (0.006 if weighted else 0.004), n_estimators=int(best["N_ESTIMATORS"]),
                      learning_rate=best["LEARNING_RATE"])
        return ("The ensemble trains every solution's model and averages their predictions.\n\n" + fenced(code), None)
    if agent_type == "test" and variant == "subsampling_extract":
        code = text_of(v.get("final solution", ""))
        block = SUBSAMPLE_BLOCK if SUBSAMPLE_BLOCK in code else ""
        return ("This is the subsampling code:\n\n" + fenced(block), None)
    if agent_type == "test" and variant == "subsampling_remove":
        return ("Without subsampling the block keeps every row:\n\n" + fenced("# train on every row"), None)
    if agent_type == "test":
        code = text_of(v.get("final solution", "")).rstrip("\n") + "\n" + SUBMISSION_TAIL
        return ("The final script trains on all the data, predicts the test set and writes the submission.\n\n"
                + fenced(code), None)
    return (f"I do not know how to answer a {agent_type} request.", None)


def _extract(v: Mapping[str, Any], effect_id: str) -> tuple[str, dict[str, Any] | None]:
    code = text_of(v.get("solution_script", ""))
    done = text_of(v.get("previous_code_blocks", ""))
    order = ["LEARNING_RATE", "N_ESTIMATORS"] if "path-1" in effect_id else ["N_ESTIMATORS", "LEARNING_RATE"]
    plans = []
    for name in order:
        line = _line(code, name)
        if line is None:
            continue
        value = float(line.split(" = ")[1])
        plan = (f"Increase the number of boosting rounds to {int(value + 200)}." if name == "N_ESTIMATORS" else
                f"Lower the learning rate to {round(max(value / 2, 0.05), 4)}.")
        plans.append({"code_block": line, "plan": plan, "fresh": line not in done})
    plans.sort(key=lambda p: not p.pop("fresh"))
    return ("", {"plans": plans or [{"code_block": "score = BASE", "plan": "Tune the model."}]})
