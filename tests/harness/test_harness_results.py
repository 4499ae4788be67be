"""Reading a run: parse_score, extract_traceback, detect_error, build_evaluation_result, rank_solutions."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.harness import (
    build_evaluation_result,
    detect_error,
    error_text,
    extract_traceback,
    is_better_solution,
    parse_score,
    rank_solutions,
)
from events.domain import EvaluationResult, ExecutionRawResult, MetricDirection, SolutionPhase, SolutionScript

TB = (
    "Traceback (most recent call last):\n"
    '  File "/w/sol.py", line 3, in <module>\n'
    "    main()\n"
    '  File "/w/sol.py", line 2, in main\n'
    "    1/0\n"
    "    ~^~\n"
    "ZeroDivisionError: division by zero"
)


def raw(stdout: str = "", stderr: str = "", exit_code: int = 0, timed_out: bool = False) -> ExecutionRawResult:
    return ExecutionRawResult(stdout=stdout, stderr=stderr, exit_code=exit_code, duration_seconds=1.5,
                              timed_out=timed_out)


# --- parse_score ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stdout", "expected"),
    [
        ("Final Validation Performance: 0.8196\n", 0.8196),  # REQ-EX-011 acceptance
        ("Training complete.\n", None),
        ("Final Validation Performance: 0.5\nmore\nFinal Validation Performance: 0.8196\n", 0.8196),
        ("Final Validation Performance: 0.8196.\n", 0.8196),  # trailing sentence period
        ("Final Validation Performance: 0.82, done\n", 0.82),
        ("Final Validation Performance: 0.82 (ROC AUC)\n", 0.82),
        ("Final Validation Performance:0.82", 0.82),  # no space, no newline
        ("Final Validation Performance: -1.25e-3\n", -1.25e-3),
        ("Final Validation Performance: 1E+2\n", 100.0),
        ("Final Validation Performance: .5\n", 0.5),
        ("Final Validation Performance: 7\n", 7.0),
        ("Final Validation Performance: np.float64(0.8123)\n", 0.8123),
        ("Final Validation Performance: [0.75]\n", 0.75),
        ("Final Validation Performance: nan\n", None),
        ("Final Validation Performance: NaN\n", None),
        ("Final Validation Performance: inf\n", None),
        ("Final Validation Performance: -inf\n", None),
        ("Final Validation Performance: 1e999\n", None),  # overflows to inf
        ("Final Validation Performance: N/A\n", None),
        ("Final Validation Performance: -\n", None),
        ("Final Validation Performance: \n", None),
        # the LAST line decides, even when it is unreadable
        ("Final Validation Performance: 0.9\nFinal Validation Performance: nan\n", None),
        ("final validation performance: 0.9\n", None),  # label is case-sensitive
    ],
)
def test_req_ex_011_parse_score_cases(stdout: str, expected: float | None) -> None:
    """REQ-EX-011 plus the edge cases decided in parse_score's docstring."""
    got = parse_score(stdout)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected)


@given(st.floats(allow_nan=False, allow_infinity=False), st.text(alphabet=st.characters(blacklist_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=30))
def test_req_ex_011_parse_score_roundtrips_any_finite_float(value: float, noise: str) -> None:
    """REQ-EX-011 (property): whatever was printed before, the last score line's float comes back."""
    stdout = f"{noise}\nFinal Validation Performance: 0.1\nFinal Validation Performance: {value!r}\n"
    assert parse_score(stdout) == value


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=5))
def test_req_ex_011_last_of_several_wins(values: list[float]) -> None:
    stdout = "".join(f"epoch {i}\nFinal Validation Performance: {v}\n" for i, v in enumerate(values))
    assert parse_score(stdout) == values[-1]


@given(st.text(max_size=200))
def test_req_ex_011_parse_score_never_raises(text: str) -> None:
    got = parse_score(text)
    assert got is None or math.isfinite(got)


def test_req_ex_036_parse_score_fast_on_1mb() -> None:
    stdout = ("x" * 99 + "\n") * 10_000 + "Final Validation Performance: 0.5\n"
    started = time.perf_counter()
    for _ in range(10):
        assert parse_score(stdout) == 0.5
    assert (time.perf_counter() - started) / 10 < 0.010


# --- extract_traceback ------------------------------------------------------------------------


def test_req_ex_012_traceback_slice_both_ends() -> None:
    stderr = "some warning\n" + TB + "\n"
    got = extract_traceback(stderr)
    assert got is not None
    assert got.startswith("Traceback (most recent call last):")
    assert got.endswith("ZeroDivisionError: division by zero")


def test_req_ex_012_last_of_several_tracebacks() -> None:
    first = TB.replace("ZeroDivisionError: division by zero", "KeyError: 'a'")
    chained = first + "\n\nDuring handling of the above exception, another exception occurred:\n\n" + TB + "\n"
    got = extract_traceback(chained)
    assert got is not None and got.endswith("ZeroDivisionError: division by zero")
    assert "KeyError" not in got


def test_req_ex_012_multiline_message_and_trailing_noise() -> None:
    stderr = TB.replace("division by zero", "bad input\nInput contains NaN.") + "\n\n[harness] note\n"
    assert extract_traceback(stderr).endswith("bad input\nInput contains NaN.")


def test_req_ex_012_no_traceback() -> None:
    assert extract_traceback("") is None
    assert extract_traceback("UserWarning: something\n") is None


# --- detect_error / build_evaluation_result ---------------------------------------------------


def test_req_ex_013_detect_error_cases() -> None:
    assert detect_error(raw(exit_code=0)) is False
    assert detect_error(raw(exit_code=1)) is True
    assert detect_error(raw(exit_code=-9)) is True
    assert detect_error(raw(exit_code=-1, timed_out=True)) is True
    # digest §12 trap 11: a traceback on stderr is an error even with exit code 0
    assert detect_error(raw(stderr=TB, exit_code=0)) is True


def test_req_ex_014_success_result() -> None:
    result = build_evaluation_result(raw(stdout="Final Validation Performance: 0.82\n"))
    assert result.score == pytest.approx(0.82)
    assert result.is_error is False
    assert result.error_traceback is None
    assert result.exit_code == 0 and result.duration_seconds == 1.5


def test_req_ex_014_error_keeps_score_and_traceback() -> None:
    result = build_evaluation_result(raw(stdout="Final Validation Performance: 0.7\n", stderr=TB + "\n", exit_code=1))
    assert result.is_error is True
    assert result.score == pytest.approx(0.7)  # parsed even for an error run
    assert result.error_traceback == TB


def test_known_decision_timeout_gives_synthetic_error_text() -> None:
    """Known decisions / digest §12 trap 5: a timeout has a debugger text with the stderr tail."""
    stderr = "loading data\nepoch 1\n[harness] timed out after 2 s\n"
    result = build_evaluation_result(raw(stderr=stderr, exit_code=-1, timed_out=True))
    assert result.error_traceback is not None
    assert result.error_traceback.startswith("timed out after 2 s")
    assert "epoch 1" in result.error_traceback


def test_known_decision_exit_without_traceback_gives_synthetic_text() -> None:
    syntax = '  File "/w/sol.py", line 1\n    print(\n         ^\nSyntaxError: \'(\' was never closed\n'
    text = error_text(raw(stderr=syntax, exit_code=1))
    assert text is not None and text.startswith("process exited with code 1")
    assert "SyntaxError" in text
    killed = error_text(raw(exit_code=-9))
    assert killed == "process killed by signal SIGKILL (stderr empty)"


# --- ranking -----------------------------------------------------------------------------------


def _sol(i: int) -> SolutionScript:
    return SolutionScript(content=f"print({i})", phase=SolutionPhase.init)


def _res(score: float | None, is_error: bool = False) -> EvaluationResult:
    return EvaluationResult(score=score, stdout="", stderr="", exit_code=1 if is_error else 0,
                            duration_seconds=0.0, is_error=is_error)


def test_req_ex_027_rank_maximize_and_minimize() -> None:
    sols = [_sol(i) for i in range(5)]
    results = [_res(0.8), _res(None), _res(0.95, is_error=True), _res(0.9), _res(0.7)]
    ranked = rank_solutions(sols, results, MetricDirection.maximize)
    assert [r.score for _, r in ranked] == [0.9, 0.8, 0.7, None, 0.95]
    ranked = rank_solutions(sols, results, MetricDirection.minimize)
    assert [r.score for _, r in ranked] == [0.7, 0.8, 0.9, None, 0.95]
    assert ranked[-1][1].is_error  # digest trap 10: an error run goes last even with a score


scores = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))


@given(st.lists(st.tuples(scores, st.booleans()), max_size=12), st.sampled_from(list(MetricDirection)))
def test_req_ex_027_rank_properties(entries: list[tuple[float | None, bool]], direction: MetricDirection) -> None:
    """REQ-EX-027 (property): a permutation; scored successes sorted best-first; then unscored; then errors."""
    sols = [_sol(i) for i in range(len(entries))]
    results = [_res(s, e) for s, e in entries]
    ranked = rank_solutions(sols, results, direction)
    assert sorted(id(s) for s, _ in ranked) == sorted(id(s) for s in sols)
    groups = [0 if (not r.is_error and r.score is not None) else 1 if not r.is_error else 2 for _, r in ranked]
    assert groups == sorted(groups)
    scored = [r.score for _, r in ranked if not r.is_error and r.score is not None]
    expected = sorted(scored, reverse=direction == MetricDirection.maximize)
    assert scored == expected


def test_req_ex_027_length_mismatch() -> None:
    with pytest.raises(ValueError):
        rank_solutions([_sol(1)], [], MetricDirection.maximize)


def test_req_ex_023_is_better_solution() -> None:
    assert is_better_solution(_res(0.9), 0.8, MetricDirection.maximize) is True
    assert is_better_solution(_res(0.8), 0.8, MetricDirection.maximize) is False  # strict
    assert is_better_solution(_res(None), 0.8, MetricDirection.maximize) is False
    assert is_better_solution(_res(0.99, is_error=True), 0.8, MetricDirection.maximize) is False
