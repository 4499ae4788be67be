"""One rule for "a better score" (REQ-DM-028/029, REQ-EX-022): every comparison of scores in
production code goes through ``events.score.Score`` (with ``Ties`` for the tie rule), and there is
one ``best_of``.

The production packages (``events``, ``store``, ``replay``, ``handlers``, ``engine`` and the
benchmarks in ``bench``) are parsed, never imported, and the test fails on the shapes the copies
of the rule took before they were removed:

* a choice on the metric direction that orders values: ``a > b if maximize else a < b``,
  ``max if direction == MetricDirection.maximize else min``, ``score if maximize else -score``,
  ``* (1 if maximize else -1)``, an ``if maximize:`` whose branch compares, and the same in a
  boolean expression (``maximize and a > b or ...``);
* a sort ordered by the direction: ``sort_values(ascending=direction == ...minimize)``,
  ``sorted(..., reverse=maximize)``;
* a function whose name says better / improve / best / worse and that orders two values itself
  (``def is_better(score, best, maximize): ... score > best``);
* two scores ordered directly, whatever the direction (``c.fitness > n.fitness``, ``score < best``),
  and a best or worst picked by a key on scores (``max(nodes, key=lambda n: (n.fitness, -n.index))``);
* a second function named ``best_of``.

``events/score.py`` is the one place these belong. Direction tests that choose words for people
("higher is better") or report a flag (``is_lower_better``) order nothing and pass.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("events", "store", "replay", "handlers", "engine", "bench")
THE_RULE = "events/score.py"
THE_BEST_OF = "handlers/mlestar/phase2.py"  # best_of(wf, results, ties): the one pick of a best path
# The code of the scripts the builtin agent writes: it runs in the sandbox, apart from the engine, and
# compares its own metric values (a greedy blend, a calibration grid) with no Score to call.
SCRIPT_BLOCKS = "engine/agents/builtin/script_blocks/"

# Names and strings that say "the metric's direction".
DIRECTION_WORDS = {"maximize", "minimize", "maximise", "minimise", "direction", "metric_direction",
                   "lower_is_better", "is_lower_better", "higher_is_better", "greater_is_better"}
ORDERING = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)
SORT_KEYWORDS = {"reverse", "ascending"}
RULE_NAME = re.compile(r"better|improv|best|worse", re.IGNORECASE)
SCORE_NAME = re.compile(r"score|fitness|^fits?$|^best", re.IGNORECASE)   # what holds a score
PICKS = {"max", "min", "sorted", "sort", "nlargest", "nsmallest"}


def production_files(root: Path) -> list[Path]:
    return [p for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py")) if "__pycache__" not in p.parts]


def says_direction(node: ast.AST) -> bool:
    """Whether an expression reads the metric direction (a flag, an attribute or the word)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id.lower() in DIRECTION_WORDS:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr.lower() in DIRECTION_WORDS:
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value.lower() in DIRECTION_WORDS:
            return True
    return False


def orders(nodes: list[ast.AST]) -> ast.AST | None:
    """The first thing in ``nodes`` that puts values in an order: ``<``/``>``/``<=``/``>=``, a
    negation, ``max``/``min``, or a sort direction."""
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Compare) and any(isinstance(op, ORDERING) for op in sub.ops):
                return sub
            if isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.USub):
                return sub
            if isinstance(sub, ast.Name) and sub.id in ("max", "min"):
                return sub
            if isinstance(sub, ast.keyword) and sub.arg in SORT_KEYWORDS:
                return sub
    return None


def compares_two_values(node: ast.AST) -> bool:
    """An ordering comparison of two non-literal values (``score > best``, not ``n > 0``)."""
    if not (isinstance(node, ast.Compare) and any(isinstance(op, ORDERING) for op in node.ops)):
        return False
    operands = [node.left, *node.comparators]
    return sum(1 for o in operands if not isinstance(o, ast.Constant)) >= 2


def names_a_score(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Name) and SCORE_NAME.search(sub.id)
               or isinstance(sub, ast.Attribute) and SCORE_NAME.search(sub.attr) for sub in ast.walk(node))


def scan(source: str, where: str) -> list[str]:
    """Every score comparison made outside ``Score`` in one module's source."""
    found: list[str] = []
    tree = ast.parse(source, filename=where)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, (ast.IfExp, ast.If)) and says_direction(node.test):
            branches: list[ast.AST] = ([node.body, node.orelse] if isinstance(node, ast.IfExp)
                                       else [*node.body, *node.orelse])
            if orders(branches) is not None:
                found.append(f"{where}:{line}: orders values by the metric direction (use Score)")
        elif isinstance(node, ast.BoolOp):
            parts = list(node.values)
            if any(says_direction(p) for p in parts) and any(compares_two_values(sub) for p in parts
                                                             for sub in ast.walk(p) if not says_direction(sub)):
                found.append(f"{where}:{line}: compares values under a direction flag (use Score)")
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in SORT_KEYWORDS and says_direction(kw.value):
                    found.append(f"{where}:{line}: sorts by the metric direction (use Score.ranked)")
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in PICKS and any(kw.arg == "key" and names_a_score(kw.value) for kw in node.keywords):
                found.append(f"{where}:{line}: {called}() by a score (use Score.best or Score.ranked)")
        elif compares_two_values(node) and isinstance(node, ast.Compare):
            if sum(1 for o in [node.left, *node.comparators] if names_a_score(o)) >= 2:
                found.append(f"{where}:{line}: orders two scores directly (use Score.better)")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == "best_of" and where != THE_BEST_OF:
                found.append(f"{where}:{line}: a second best_of (the one is in {THE_BEST_OF})")
            if RULE_NAME.search(node.name) and any(compares_two_values(sub) for sub in ast.walk(node)):
                found.append(f"{where}:{line}: {node.name}() compares scores itself (use Score)")
    return found


def violations(root: Path) -> list[str]:
    out: list[str] = []
    for path in production_files(root):
        where = path.relative_to(root).as_posix()
        if where != THE_RULE and not where.startswith(SCRIPT_BLOCKS):
            out += scan(path.read_text(encoding="utf-8"), where)
    return out


def test_REQ_DM_028_029_no_score_comparison_outside_score():
    assert violations(ROOT) == []


def test_there_is_one_best_of():
    defined = [path.relative_to(ROOT).as_posix() for path in production_files(ROOT)
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "best_of"]
    assert defined == [THE_BEST_OF]


# The copies this test replaced, as they were written (engine/audit/runlog.py, the builtin agent's
# call.py and refinement.py, engine/tasks/leaderboard.py and reference.py, bench/bench_automl.py,
# handlers/mlestar/pipeline.py): each must be caught.
REMOVED = {
    "runlog.is_better": """
        def is_better(score, best, maximize):
            if best is None:
                return True
            return score > best if maximize else score < best
    """,
    "builtin.better": """
        def better(a, b, maximize):
            if a is None:
                return False
            return a > b if maximize else a < b
    """,
    "leaderboard.at_least": """
        def at_least(score, threshold, direction):
            return score >= threshold if direction == MetricDirection.maximize else score <= threshold
    """,
    "leaderboard.sort": """
        ranked = scores.sort_values(ascending=direction == MetricDirection.minimize).to_list()
    """,
    "reference.best": """
        best = max if info.direction == MetricDirection.maximize else min
    """,
    "refinement.hurt": """
        hurt = delta < 0 if call.maximize else delta > 0
    """,
    "refinement.best": """
        best = max(scored) if call.maximize else min(scored)
    """,
    "bench.key": """
        key = score if maximize else -score
    """,
    "bench.relative": """
        def relative(ours, theirs, maximize):
            return (ours - theirs) / abs(theirs) * (1 if maximize else -1) + 0.0
    """,
    "bench.not_worse": """
        def _not_worse(run, maximize):
            return final >= phase1 - 1e-12 if maximize else final <= phase1 + 1e-12
    """,
    "if-branch": """
        def pick(a, b, direction):
            if direction == "maximize":
                return a if a > b else b
            return a if a < b else b
    """,
    "bool-op": """
        improved = maximize and new > old or not maximize and new < old
    """,
    "named-copy": """
        def strictly_better(score, threshold, rule):
            return threshold is not None and rule.fitness(score) > rule.fitness(threshold)
    """,
    "selection.pheromone": """
        wins = sum(1 for c in children if c.valid and c.fitness is not None and n.fitness is not None
                   and c.fitness > n.fitness)
    """,
    "selection.tournament": """
        winner = max(entrants, key=lambda n: (n.fitness if n.fitness is not None else -math.inf, -n.index))
    """,
    "profiles.worst": """
        worst = min(mine, key=lambda x: (x.fitness, x.index)) if mine else None
    """,
    "profiles.ranking": """
        ranking = sorted(range(n), key=lambda i: (-scores[i], i))
    """,
    "second-best_of": """
        def best_of(wf, results):
            return score_rule(wf).best(results, lambda r: r.best_score, Ties.LATER_WINS)
    """,
}

# Direction tests that order nothing, and comparisons that are no score's.
KEPT = {
    "words": """label = "higher" if task.metric_direction == MetricDirection.maximize else "lower" """,
    "flag": """report = dict(is_lower_better=info.direction == MetricDirection.minimize)""",
    "through-score": """
        def best_so_far(points, rule):
            for p in points:
                if rule.better(p.score, best, Ties.FIRST_WINS):
                    best = p.score
    """,
    "metric-math": """
        def _not_worse(run, rule):
            return rule.at_least(final, phase1) or math.isclose(final, phase1, rel_tol=0.0, abs_tol=1e-12)
    """,
}


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_each_removed_copy_of_the_rule_is_caught(name):
    assert scan(textwrap.dedent(REMOVED[name]), "engine/x.py"), name


@pytest.mark.parametrize("name", sorted(KEPT))
def test_what_is_no_score_comparison_passes(name):
    assert scan(textwrap.dedent(KEPT[name]), "engine/x.py") == []


def test_the_rule_itself_may_compare():
    rule = (ROOT / THE_RULE).read_text(encoding="utf-8")
    assert scan(rule, THE_RULE), "events/score.py compares scores; the scan must see it to exempt it"
