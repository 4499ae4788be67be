"""Leakage roles: a static check for preprocessing fitted on validation/test rows, and its fix.

Detection works on any script (not only ours): it looks for ``fit``/``fit_transform`` calls on
preprocessing objects (scalers, imputers, encoders, PCA ...) that either run before the
train/validation split on the data being split, or receive validation/test data directly.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from engine.agents.builtin.call import Call, CannotAnswer, Reply, code_reply

PREP_CLASS = re.compile(r"(Scaler|Imputer|(?<!Label)Encoder|Transformer|PCA|Normalizer|Discretizer|"
                        r"Vectorizer|PolynomialFeatures|SelectKBest|TruncatedSVD)$")
HELD_OUT_NAME = re.compile(r"(val|valid|test|holdout|dev)", re.I)
SPLITTERS = ("train_test_split",)


@dataclass
class Leak:
    stmt: ast.stmt
    body: list[ast.stmt]
    obj: str
    method: str          # fit | fit_transform
    arg: str             # the fitted variable
    target: str | None   # assigned name (fit_transform)
    split: ast.Assign | None
    reason: str


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _bodies(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body


def _split_args(split: ast.Assign) -> list[ast.expr]:
    """The arguments of a split's call (``find_leaks`` keeps only splits whose value is a call)."""
    return split.value.args if isinstance(split.value, ast.Call) else []


def _last_line(node: ast.stmt) -> int:
    # ast.parse sets end_lineno on every statement; only a node built by hand lacks it.
    return node.end_lineno if node.end_lineno is not None else node.lineno


def _fit_call(stmt: ast.stmt, prep_objects: set[str]) -> tuple[str, str, str, str | None] | None:
    target: str | None = None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        value = stmt.value
        target = stmt.targets[0].id if isinstance(stmt.targets[0], ast.Name) else None
    elif isinstance(stmt, ast.Expr):
        value = stmt.value
    else:
        return None
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr in ("fit", "fit_transform") and value.args):
        return None
    receiver = value.func.value
    obj = receiver.id if isinstance(receiver, ast.Name) else ""
    is_prep = obj in prep_objects or (isinstance(receiver, ast.Call) and PREP_CLASS.search(_call_name(receiver.func)))
    if not is_prep:
        return None
    arg = value.args[0]
    names = [n.id for n in ast.walk(arg) if isinstance(n, ast.Name)]
    return obj, value.func.attr, ",".join(names), target


def find_leaks(code: str) -> list[Leak]:
    tree = ast.parse(code)
    prep_objects = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and PREP_CLASS.search(_call_name(node.value.func)) for t in node.targets if isinstance(t, ast.Name)}
    leaks: list[Leak] = []
    for body in _bodies(tree):
        splits = [s for s in body if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call)
                  and _call_name(s.value.func) in SPLITTERS]
        for stmt in body:
            found = _fit_call(stmt, prep_objects)
            if found is None:
                continue
            obj, method, arg, target = found
            later = [s for s in splits if s.lineno > stmt.lineno]
            if later:
                split_inputs = {n.id for a in _split_args(later[0]) for n in ast.walk(a) if isinstance(n, ast.Name)}
                if split_inputs & ({target} | set(arg.split(","))):
                    leaks.append(Leak(stmt, body, obj, method, arg, target, later[0],
                                      f"{obj}.{method} sees all rows before the train/validation split"))
                    continue
            if any(HELD_OUT_NAME.search(name) and not re.search("train", name, re.I) for name in arg.split(",")):
                leaks.append(Leak(stmt, body, obj, method, arg, target, None,
                                  f"{obj}.{method} is fitted on held-out data ({arg})"))
    return leaks


def _lines(code: str, node: ast.stmt) -> str:
    return "\n".join(code.split("\n")[node.lineno - 1: node.end_lineno]).strip()


def _preprocessing_block(code: str) -> str:
    """What a clean script shows as its preprocessing block: the split or the preprocessor."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and "preprocess" in node.name:
            return _lines(code, node)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _call_name(node.value.func) in SPLITTERS:
            return _lines(code, node)
    return code.strip().split("\n")[0]


def detection(call: Call) -> Reply:
    """{code} -> {"answers": [{leakage_status, code_block}]} with the offending block verbatim."""
    code = call.text_var("code")
    try:
        leaks = find_leaks(code)
        clean_block = _preprocessing_block(code) if not leaks else ""
    except SyntaxError as exc:
        raise CannotAnswer(f"builtin leakage: the script does not parse ({exc.msg}, line {exc.lineno})") from exc
    if leaks:
        answers = [{"leakage_status": "Yes Data Leakage", "code_block": _lines(code, leak.stmt)} for leak in leaks]
        text = "; ".join(leak.reason for leak in leaks)
    else:
        answers = [{"leakage_status": "No Data Leakage", "code_block": clean_block}]
        text = "Preprocessing is fitted on training rows only (inside the model pipelines or after the split)."
    return Reply(text=text, structured={"answers": answers})


def _indent_of(code: str, node: ast.stmt) -> str:
    line = code.split("\n")[node.lineno - 1]
    return line[: len(line) - len(line.lstrip())]


def _fix(code: str, leak: Leak) -> str:
    lines = code.split("\n")
    start, end = leak.stmt.lineno - 1, _last_line(leak.stmt)
    indent = _indent_of(code, leak.stmt)
    if leak.split is None:
        # Fitted on held-out rows: a transform with the training fit is what was meant.
        if leak.method == "fit_transform":
            text = "\n".join(lines[start:end]).replace(".fit_transform(", ".transform(", 1)
            return "\n".join(lines[:start] + [text] + lines[end:])
        return "\n".join(lines[:start] + [f"{indent}# removed: {leak.obj} must not be fitted on held-out rows"] + lines[end:])
    split = leak.split
    source = leak.target or leak.arg.split(",")[0]
    names = [a.id if isinstance(a, ast.Name) else None for a in _split_args(split)]
    if source not in names and leak.arg.split(",")[0] in names:
        source = leak.arg.split(",")[0]
    if source not in names or not isinstance(split.targets[0], ast.Tuple):
        raise CannotAnswer("builtin leakage: cannot tell which split outputs come from the leaked data")
    outs = [t.id for t in split.targets[0].elts if isinstance(t, ast.Name)]
    pos = names.index(source)
    train_part, held_part = outs[2 * pos], outs[2 * pos + 1]
    fitted = leak.arg.split(",")[0]
    keep = [] if (leak.target in (None, fitted)) else [f"{indent}{leak.target} = {fitted}"]
    # Statements between the leaky fit and the split that use the fitted object move after the fit.
    moved: list[str] = []
    body_between = [s for s in leak.body if leak.stmt.lineno < s.lineno < split.lineno]
    drop: set[int] = set()
    transformed = leak.method == "fit_transform"
    for stmt in body_between:
        text = "\n".join(lines[stmt.lineno - 1: _last_line(stmt)])
        if re.search(rf"\b{re.escape(leak.obj)}\.transform\(", text):
            if re.search(rf"\b{re.escape(leak.obj)}\.transform\(\s*{re.escape(source)}\s*\)", text):
                drop.update(range(stmt.lineno - 1, _last_line(stmt)))
                transformed = True
                continue
            moved.append(text)
            drop.update(range(stmt.lineno - 1, _last_line(stmt)))
    after = [f"{indent}# {leak.obj} is fitted on the training rows only, then applied to the held-out rows.",
             f"{indent}{leak.obj}.fit({train_part})"]
    if transformed:
        after += [f"{indent}{train_part} = {leak.obj}.transform({train_part})",
                  f"{indent}{held_part} = {leak.obj}.transform({held_part})"]
    after += moved
    out: list[str] = []
    for i, line in enumerate(lines):
        if start <= i < end:
            if i == start:
                out += keep
            continue
        if i in drop:
            continue
        out.append(line)
        if i == _last_line(split) - 1:
            out += after
    return "\n".join(out)


def correction(call: Call) -> Reply:
    """{code} -> the script with every detected leak rewritten to fit on training rows only."""
    code = call.text_var("code")
    try:
        leaks = find_leaks(code)
    except SyntaxError as exc:
        raise CannotAnswer(f"builtin leakage: the script does not parse ({exc.msg})") from exc
    if not leaks:
        return code_reply(code, "No leakage found; the script is unchanged.")
    fixed = code
    for _ in range(len(leaks)):
        current = find_leaks(fixed)
        if not current:
            break
        fixed = _fix(fixed, current[0])
    if find_leaks(fixed):
        raise CannotAnswer("builtin leakage: could not rewrite every leaking preprocessing step")
    return code_reply(fixed, "Preprocessing now fits on the training split only.")
