"""Reading a finished run: score line, traceback, error verdict, ``EvaluationResult`` (REQ-EX-011..014)."""

from __future__ import annotations

import re
import signal

import structlog

from engine.harness.output import HARNESS_PREFIX
from events.domain import EvaluationResult, ExecutionRawResult
from handlers.script_lines import FINAL_RUN_LABEL, SCORE_LABEL, labelled_value, split_lines, usable_estimate

log = structlog.get_logger(__name__)

TRACEBACK_HEADER = "Traceback (most recent call last):"
STDERR_TAIL_LINES = 40
STDERR_TAIL_CHARS = 4000

_KILL_NOTE = re.compile(
    rf"^{re.escape(HARNESS_PREFIX)}((?:timed out after|memory limit exceeded).*)$", re.MULTILINE
)


def parse_score(stdout: str) -> float | None:
    """REQ-EX-011: the value on the LAST ``Final Validation Performance:`` line, else None.

    Decisions on the edge cases the spec's regex ``([\\d.eE+-]+)`` handles badly:

    * the LAST occurrence of the label decides; if its value is unreadable the result is None,
      never an earlier line's value — the script's final word is what it reports;
    * the number ends where a float ends, so ``0.8196.`` (sentence period), ``0.82,``,
      ``0.82 (AUC)`` and ``0.82%`` all give 0.82, where the spec's regex would capture
      ``0.8196.`` and fail;
    * ``np.float64(0.82)``, ``tensor(0.82)`` and ``[0.82]`` (repr of numpy/torch scalars) give 0.82;
    * ``nan``, ``inf`` and values that overflow to inf give None: a non-finite score can neither
      be compared nor trusted (``nan >= x`` is always False, ``inf`` would win every comparison);
    * the label is case-sensitive and read from stdout only, as the prompts instruct.
    Runs in one ``rfind`` plus one short regex, so 1 MB of stdout costs microseconds (REQ-EX-036).
    """
    return labelled_value(stdout, SCORE_LABEL)


def extract_traceback(stderr: str) -> str | None:
    """REQ-EX-012: the LAST ``Traceback (most recent call last):`` block, header to exception line.

    The block is the header, its indented frame lines, then the first non-indented line (the
    exception, e.g. ``ValueError: bad``) plus any continuation lines of a multi-line message up
    to a blank line, the next header or a harness note. For chained exceptions ("During
    handling of the above exception...") the last traceback is the final one, as specified.
    Returns None when stderr holds no traceback.
    """
    at = stderr.rfind(TRACEBACK_HEADER)
    if at < 0:
        return None
    line_start = stderr.rfind("\n", 0, at) + 1
    lines = stderr[line_start:].splitlines()
    prefix = lines[0][: lines[0].find(TRACEBACK_HEADER)]
    kept = [lines[0]]
    index = 1
    # Frames are indented relative to the header (the header may itself be indented, e.g.
    # inside an exception group); the exception line is back at the header's indentation.
    while index < len(lines) and (lines[index].startswith(prefix + " ") or not lines[index].strip()):
        if not lines[index].strip():
            index += 1
            continue
        kept.append(lines[index])
        index += 1
    if index < len(lines):
        kept.append(lines[index])
        index += 1
        while index < len(lines):
            line = lines[index]
            if not line.strip() or TRACEBACK_HEADER in line or line.startswith(HARNESS_PREFIX):
                break
            kept.append(line)
            index += 1
    return "\n".join(kept)


def detect_error(raw: ExecutionRawResult) -> bool:
    """REQ-EX-013: non-zero exit, a timeout, or a traceback on stderr (even with exit 0 — a
    logged, handled exception counts as an error, digest §12 trap 11)."""
    return raw.exit_code != 0 or raw.timed_out or TRACEBACK_HEADER in raw.stderr


def stderr_tail(stderr: str, lines: int = STDERR_TAIL_LINES, chars: int = STDERR_TAIL_CHARS) -> str:
    tail = "\n".join(stderr.rstrip("\n").splitlines()[-lines:])
    return tail[-chars:]


def _signal_name(exit_code: int) -> str | None:
    if exit_code >= 0:
        return None
    try:
        return signal.Signals(-exit_code).name
    except ValueError:
        return None


def error_text(raw: ExecutionRawResult) -> str | None:
    """The text handed to the debugger for a failed run (Known decisions, digest §12 trap 5).

    * killed by the harness (timeout, memory limit): the reason ("timed out after N s",
      "memory limit exceeded (N MB)") followed by the stderr tail — a traceback printed while
      dying is symptom, not cause;
    * otherwise the traceback when there is one;
    * otherwise a synthetic summary: the exit code or signal and the stderr tail (e.g. a
      ``SyntaxError`` in the script itself, which Python prints without a traceback header).
    Returns None for a run that is not an error.
    """
    if not detect_error(raw):
        return None
    notes = _KILL_NOTE.findall(raw.stderr)
    if notes or raw.timed_out:
        reason = notes[-1] if notes else f"timed out after {raw.duration_seconds:.0f} s"
        body = stderr_tail(_KILL_NOTE.sub("", raw.stderr))
        return f"{reason}\n--- stderr (tail) ---\n{body}" if body.strip() else reason
    traceback = extract_traceback(raw.stderr)
    if traceback:
        return traceback
    signal_name = _signal_name(raw.exit_code)
    summary = (
        f"process killed by signal {signal_name}" if signal_name else f"process exited with code {raw.exit_code}"
    )
    body = stderr_tail(raw.stderr)
    return f"{summary}\n--- stderr (tail) ---\n{body}" if body.strip() else f"{summary} (stderr empty)"


def build_evaluation_result(raw: ExecutionRawResult) -> EvaluationResult:
    """REQ-EX-014: score from stdout (parsed even for an error run), error verdict, error text.

    ``error_traceback`` is set only for error runs; it is never None for one (a synthetic text
    replaces a missing traceback, see ``error_text``), so a debugger always has something to
    read.
    """
    is_error = detect_error(raw)
    text = error_text(raw) if is_error else None
    if is_error:
        first = (text or "").strip().splitlines()
        log.warning("harness.error_detected", exit_code=raw.exit_code, first_line=first[0] if first else "")
    return EvaluationResult(
        score=parse_score(raw.stdout),
        stdout=raw.stdout,
        stderr=raw.stderr,
        exit_code=raw.exit_code,
        duration_seconds=raw.duration_seconds,
        is_error=is_error,
        error_traceback=text,
    )


def rejected_result(message: str) -> EvaluationResult:
    """The result of a script refused before running (write_script rejection): an error whose
    text is the rejection message, exit code -1, nothing ran."""
    return EvaluationResult(
        score=None, stdout="", stderr=message, exit_code=-1, duration_seconds=0.0,
        is_error=True, error_traceback=message,
    )


def take_final_run_estimate(result: EvaluationResult) -> tuple[EvaluationResult, float | None]:
    """The script's estimate of its test run (``handlers.script_lines``: ``None`` when absent,
    unreadable or negative) and the result without that line: the estimate is a measurement of
    time, recorded apart (``EvaluationCompleted.final_run_estimate_s``), so the stdout a prompt
    quotes stays what a same-seed run reproduces."""
    taken, rest = split_lines(result.stdout, FINAL_RUN_LABEL)
    if not taken:
        return result, None
    # Read off the lines taken out only: a label inside another line stays output, and so is
    # never a value the recorded stdout no longer shows.
    kept = result.model_copy(update={"stdout": rest})
    return kept, usable_estimate(labelled_value(taken, FINAL_RUN_LABEL))
