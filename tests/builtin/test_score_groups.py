"""The builtin scripts print their metric on fixed groups of their scored rows (issue 28: the
validation noise a refinement's gain is weighed against, ``events.score.Score.clears_noise``).
Real scikit-learn scripts, run for real; the line is what the harness reads
(``handlers.script_lines.score_groups``)."""

from __future__ import annotations

import math

from handlers.script_lines import SCORE_GROUPS, score_groups


def _solution(env, model: str) -> str:
    return env.ok("init", task_description="", model_name=model, example_code="").code


def test_a_regression_script_prints_its_rmse_on_every_group_of_its_rows(regression):
    """Equal groups (row i in group i mod 16): the mean of the groups' squared RMSEs is the
    overall MSE, so the groups account for the score exactly (to the rows' split into groups)."""
    run = regression.run(_solution(regression, "random forest"))
    assert run.rc == 0, run.stderr
    groups = score_groups(run.stdout)
    assert groups is not None and len(groups) == SCORE_GROUPS and all(g is not None for g in groups)
    assert run.score is not None
    overall = math.sqrt(sum(g * g for g in groups if g is not None) / SCORE_GROUPS)
    assert math.isclose(overall, run.score, rel_tol=0.02), (overall, run.score)
    assert len(set(groups)) > 1                      # groups of different rows score differently


def test_two_models_on_the_same_task_are_scored_on_the_same_groups(binary):
    """The rows of group g are the same in every script of a run (one seeded split and fold
    order), so two models' AUCs move together group by group: their paired difference is less
    spread than either model's groups are."""
    first = binary.run(_solution(binary, "random forest"))
    second = binary.run(_solution(binary, "logistic regression"))
    assert first.rc == 0 and second.rc == 0, (first.stderr, second.stderr)
    a, b = score_groups(first.stdout), score_groups(second.stdout)
    assert a is not None and b is not None and len(a) == len(b) == SCORE_GROUPS
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    assert len(pairs) >= SCORE_GROUPS - 2

    def spread(values: list[float]) -> float:
        mean = sum(values) / len(values)
        return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))

    assert spread([x - y for x, y in pairs]) < max(spread([x for x, _ in pairs]), spread([y for _, y in pairs]))
