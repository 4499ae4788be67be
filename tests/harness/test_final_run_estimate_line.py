"""The harness takes a script's ``Final Run Estimate`` line out of its recorded output: the value
is a measurement of time, different on each run, and the output is quoted in prompts and must be
the same for a same-seed run (issue 28; the e2e same-seed test and the crash tests hold it)."""

from __future__ import annotations

import pytest

from engine.harness.results import take_final_run_estimate
from events.domain import EvaluationResult


def _result(stdout: str) -> EvaluationResult:
    return EvaluationResult(score=0.9, stdout=stdout, stderr="", exit_code=0, duration_seconds=3.0, is_error=False)


def test_the_estimate_line_is_taken_out_and_the_rest_kept_as_it_was():
    out = "Member a: 0.9\nFinal Validation Performance: 0.9\nFinal Run Estimate: 4.25\nWrote x\n"
    kept, estimate = take_final_run_estimate(_result(out))
    assert estimate == 4.25
    assert kept.stdout == "Member a: 0.9\nFinal Validation Performance: 0.9\nWrote x\n"
    assert kept.model_copy(update={"stdout": out}) == _result(out)


@pytest.mark.parametrize(("stdout", "estimate"), [
    ("Final Run Estimate: 9\nFinal Run Estimate: 2.5", 2.5),      # the last line counts, all go
    ("Final Run Estimate: soon\n", None),
    ("Final Run Estimate: nan\n", None),
    ("Final Run Estimate: -3\n", None),
])
def test_every_estimate_line_goes_and_only_a_readable_non_negative_value_counts(stdout, estimate):
    kept, taken = take_final_run_estimate(_result("ok\n" + stdout))
    assert taken == estimate and kept.stdout == "ok\n"


def test_output_without_the_line_is_the_same_object():
    result = _result("final run estimate: 4\nFinal Validation Performance: 0.9\n")
    assert take_final_run_estimate(result) == (result, None)


def test_a_label_inside_another_line_is_output_not_an_estimate():
    """Only a line that starts with the label is taken out; a mention inside another line stays in
    the recorded output and gives no value the output no longer shows."""
    out = "note: Final Run Estimate: 7 was printed by a library\nFinal Validation Performance: 0.9\n"
    assert take_final_run_estimate(_result(out)) == (_result(out), None)
