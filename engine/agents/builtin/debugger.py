"""The debugger (MLE-STAR) and evo_debug (evolution): fix the errors it can recognise, else fail.

Each rule reads the traceback's last exception and the failing line of the script, and makes the
smallest edit that addresses it. Scripts written by this agent can also be rebuilt from their
embedded spec when the edit that broke them is unknown. Anything else fails honestly.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable
from pathlib import Path

from engine.agents.builtin.blocks import script_text
from engine.agents.builtin.call import Call, CannotAnswer, Reply, code_reply
from engine.agents.builtin.render import render_solution
from engine.agents.builtin.spec import parse_spec

# The name a NameError names -> the import statement that defines it (script_blocks/known_imports.py).
IMPORTS = {
    (alias.asname or alias.name): ast.get_source_segment(script_text("known_imports"), node) or ""
    for node in ast.parse(script_text("known_imports")).body if isinstance(node, (ast.Import, ast.ImportFrom))
    for alias in node.names
}
_MISSING_LIBS = {"lightgbm": "LGBM", "xgboost": "XGB", "catboost": "CatBoost"}

FRAME_RE = re.compile(r'File "([^"]+)", line (\d+)')
LAST_ERROR_RE = re.compile(r"^(\w+(?:\.\w+)*(?:Error|Exception)):?\s*(.*)$", re.M)


class ScriptFailure:
    def __init__(self, error: str, code: str) -> None:
        self.error = error or ""
        self.code = code
        frames = [(f, int(n)) for f, n in FRAME_RE.findall(self.error)
                  if "site-packages" not in f and "/lib/python" not in f and not f.startswith("<frozen")]
        self.line_no = frames[-1][1] if frames else None
        found = LAST_ERROR_RE.findall(self.error)
        self.kind: str
        self.message: str
        self.kind, self.message = found[-1] if found else ("", self.error.strip().splitlines()[-1] if self.error.strip() else "")

    @property
    def line(self) -> str:
        lines = self.code.split("\n")
        if self.line_no is None or not 0 < self.line_no <= len(lines):
            return ""
        return lines[self.line_no - 1]

    def line_index(self) -> int:
        """Where the failing line is in ``code``: rules ask only once ``line`` has found it."""
        if self.line_no is None:
            raise ValueError("the traceback names no line of the script")
        return self.line_no - 1

    def replace_line(self, new: str) -> str:
        lines = self.code.split("\n")
        lines[self.line_index()] = new
        return "\n".join(lines)


def _add_import(code: str, statement: str) -> str:
    lines = code.split("\n")
    last = 0
    for i, line in enumerate(lines):
        if re.match(r"(import |from \S+ import )", line):
            last = i + 1
        elif line.startswith("# [SECTION:"):
            break
    return "\n".join(lines[:last] + [statement] + lines[last:])


def _name_error(f: ScriptFailure, call: Call) -> tuple[str, str] | None:
    m = re.search(r"name '(\w+)' is not defined", f.message)
    if f.kind != "NameError" or not m:
        return None
    name = m.group(1)
    if name in IMPORTS:
        return _add_import(f.code, IMPORTS[name]), f"added the missing import `{IMPORTS[name]}`"
    defined = set(re.findall(r"^\s*(\w+)\s*=", f.code, re.M)) | set(re.findall(r"def (\w+)", f.code))
    close = difflib.get_close_matches(name, sorted(defined), n=1, cutoff=0.8)
    if close and f.line:
        return f.replace_line(re.sub(rf"\b{name}\b", close[0], f.line)), f"renamed the undefined {name} to {close[0]}"
    return None


def _replace_call(code: str, pattern: str, replacement: str) -> str:
    """Replace every call matching ``pattern(`` including its balanced argument list."""
    out, pos = [], 0
    for m in re.finditer(pattern + r"\(", code):
        if m.start() < pos:
            continue
        depth, i = 0, m.end() - 1
        while i < len(code):
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            if depth == 0:
                break
            i += 1
        out.append(code[pos:m.start()] + replacement)
        pos = i + 1
    return "".join(out) + code[pos:]


def _missing_module(f: ScriptFailure, call: Call) -> tuple[str, str] | None:
    m = re.search(r"No module named '(\w+)", f.message)
    if not m or m.group(1) not in _MISSING_LIBS:
        return None
    lib = m.group(1)
    code = re.sub(rf"^\s*(import {lib}.*|from {lib}\S* import .*)$\n?", "", f.code, flags=re.M)
    suffix = "Classifier" if call.kind == "classification" else "Regressor"
    code = _replace_call(code, rf"\b(?:\w+\.)?{_MISSING_LIBS[lib]}\w*", f"HistGradientBoosting{suffix}(random_state=0)")
    code = _add_import(code, IMPORTS[f"HistGradientBoosting{suffix}"])
    return code, f"{lib} is not installed; used scikit-learn's HistGradientBoosting{suffix} instead"


def _unexpected_kwarg(f: ScriptFailure, call: Call) -> tuple[str, str] | None:
    m = re.search(r"unexpected keyword argument '(\w+)'", f.message)
    if not m or not f.line:
        return None
    kw = m.group(1)
    if kw == "sparse" and "OneHotEncoder" in f.code:
        return f.code.replace("sparse=", "sparse_output="), "renamed OneHotEncoder's `sparse` to `sparse_output`"
    if kw == "squared":
        fixed = re.sub(r"mean_squared_error\(([^()]*?),\s*squared\s*=\s*False\s*\)", r"np.sqrt(mean_squared_error(\1))", f.code)
        if fixed != f.code:
            return (_add_import(fixed, IMPORTS["np"]) if "import numpy as np" not in fixed else fixed,
                    "replaced the removed `squared=False` with np.sqrt(mean_squared_error(...))")
    line = re.sub(rf",\s*{kw}\s*=\s*[^,()]+(\([^()]*\))?", "", f.line)
    line = re.sub(rf"\(\s*{kw}\s*=\s*[^,()]+(\([^()]*\))?\s*,?\s*", "(", line)
    if line != f.line:
        return f.replace_line(line), f"dropped the unsupported keyword argument `{kw}`"
    return None


def _df_append(f: ScriptFailure, call: Call) -> tuple[str, str] | None:
    if "has no attribute 'append'" not in f.message or not f.line:
        return None
    m = re.match(r"(\s*)(\w+)\s*=\s*(\w+)\.append\((.+?)(,\s*ignore_index\s*=\s*True)?\)\s*$", f.line)
    if not m:
        return None
    indent, target, base, other, _ = m.groups()
    return (f.replace_line(f"{indent}{target} = pd.concat([{base}, {other}], ignore_index=True)"),
            "DataFrame.append was removed in pandas 2; used pd.concat")


def _headers(call: Call) -> list[str]:
    cols: list[str] = []
    for name in ("train.csv", "test.csv"):
        path = Path(call.ctx.task_dir) / name
        if path.is_file():
            with path.open(encoding="utf-8", errors="replace") as fh:
                cols += [c.strip().strip('"') for c in fh.readline().strip().split(",")]
    return cols


def _key_error(f: ScriptFailure, call: Call) -> tuple[str, str] | None:
    m = re.search(r"KeyError: ['\"](.+?)['\"]", f.error) or re.search(r"\[['\"](.+?)['\"]\] not in index", f.error)
    if not m:
        return None
    wrong = m.group(1)
    close = difflib.get_close_matches(wrong, _headers(call), n=1, cutoff=0.6)
    if not close or close[0] == wrong:
        return None
    fixed = re.sub(rf"(['\"]){re.escape(wrong)}\1", lambda q: f"{q.group(1)}{close[0]}{q.group(1)}", f.code)
    return (fixed, f"column {wrong!r} does not exist; the data has {close[0]!r}") if fixed != f.code else None


def _missing_file(f: ScriptFailure, call: Call) -> tuple[str, str] | None:
    m = re.search(r"No such file or directory: ['\"](.+?)['\"]", f.error)
    if not m or f.kind not in ("FileNotFoundError", "OSError"):
        return None
    files = sorted(p.name for p in Path(call.ctx.task_dir).glob("*") if p.is_file())
    close = difflib.get_close_matches(Path(m.group(1)).name, files, n=1, cutoff=0.5)
    if not close:
        return None
    return f.code.replace(m.group(1), f"./input/{close[0]}"), f"the data file is ./input/{close[0]}"


def _nan_input(f: ScriptFailure, call: Call) -> tuple[str, str] | None:
    if "contains NaN" not in f.message or not f.line:
        return None
    m = re.search(r"\.(?:fit|predict|predict_proba|transform|fit_transform)\(\s*(\w+)", f.line)
    if not m:
        return None
    var, indent = m.group(1), f.line[: len(f.line) - len(f.line.lstrip())]
    fill = f"{indent}{var} = pd.DataFrame({var}).fillna(pd.DataFrame({var}).median(numeric_only=True)).fillna(0)"
    lines = f.code.split("\n")
    lines.insert(f.line_index(), fill)
    code = "\n".join(lines)
    return (code if "import pandas as pd" in code else _add_import(code, IMPORTS["pd"]),
            f"imputed missing values in {var} before the call that rejected NaN")


RULES: list[Callable[[ScriptFailure, Call], tuple[str, str] | None]] = [
    _name_error, _missing_module, _unexpected_kwarg, _df_append, _key_error, _missing_file, _nan_input,
]


def _from_spec(code: str, error: str) -> tuple[str, str] | None:
    spec = parse_spec(code)
    if spec is None:
        return None
    rebuilt = render_solution(spec)
    if "timed out" in error.lower() or "timeout" in error.lower():
        for member in spec["model"]["members"]:
            for param in ("n_estimators", "max_iter"):
                if param in member["params"]:
                    member["params"][param] = max(50, int(member["params"][param]) // 2)
        if spec["data"].get("subsample"):
            spec["data"]["subsample"] = max(1000, spec["data"]["subsample"] // 2)
        rebuilt = render_solution(spec)
        return rebuilt, "the run timed out; halved the model sizes and the training-row cap"
    if rebuilt.strip() != code.strip():
        return rebuilt, "rebuilt the script from its embedded builtin spec, undoing the edit that broke it"
    return None


def fix(call: Call, code: str, error: str) -> Reply:
    if not code.strip():
        raise CannotAnswer("builtin debugger: there is no code to fix")
    failure = ScriptFailure(error, code)
    for rule in RULES:
        result = rule(failure, call)
        if result is not None and result[0] != code:
            return code_reply(result[0], f"Fix: {result[1]}.")
    result = _from_spec(code, error)
    if result is not None:
        return code_reply(result[0], f"Fix: {result[1]}.")
    summary = f"{failure.kind}: {failure.message}".strip(": ") or "no recognisable error"
    raise CannotAnswer(f"builtin debugger: does not recognise this error ({summary[:300]})")


def debugger(call: Call) -> Reply:
    """{code, bug} (MLE-STAR)."""
    return fix(call, call.text_var("code"), call.text_var("bug", "error"))


def evo_debug(call: Call) -> Reply:
    """{code, error} (evolution; earlier attempts' code and error arrive as the same pair)."""
    return fix(call, call.text_var("code"), call.text_var("error", "bug", "output"))
