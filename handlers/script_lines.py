"""The lines a script prints for the engine, and how a number is read off one (REQ-EX-011).

* ``Final Validation Performance: <score>`` — the validation score every solution reports
  (the prompts ask for it; ``engine.harness.results.parse_score`` reads it into the result).
* ``Final Run Estimate: <seconds>`` — optional: what the script's test version (every model fit on
  all training rows, the test predictions written) should take to run, as the script measured
  its own parts. Finalization's reserve is sized from it (``handlers.timebudget.Measured``); a
  script that does not print it gets the rule for scripts that say nothing. It is a measurement
  of time, different on every run: the harness takes its lines out of the recorded stdout (which
  prompts quote and a same-seed run reproduces) into ``EvaluationCompleted.final_run_estimate_s``.

* ``Validation Rows: <scored> of <total>`` — optional: printed by a script whose score is on
  part of its validation rows (a cross-validation the engine's deadline cut to some of its folds,
  ``engine.agents.builtin.render_cv``). The harness records the count
  (``EvaluationCompleted.scored_rows``) and the line stays in the output, which says what the score
  is. A score on fewer rows never replaces one on more (``events.score``).

* ``Validation Score Groups: <v1> <v2> ...`` — optional: the metric on each of a fixed set of
  groups of the validation rows (the builtin scripts: row ``i`` of the scored rows in group
  ``i mod SCORE_GROUPS``), ``nan`` where a group cannot be scored (one class only, for AUC). The
  harness records them (``EvaluationCompleted.score_groups``); two scores on the same rows are then
  compared with the noise of their paired difference (``events.score.Score.clears_noise``).

All are read the same way: the LAST line with the label decides, and an unreadable or
non-finite value on it gives None, never an earlier line's value.
"""

from __future__ import annotations

import math
import re

SCORE_LABEL = "Final Validation Performance:"
FINAL_RUN_LABEL = "Final Run Estimate:"
SCORED_ROWS_LABEL = "Validation Rows:"
SCORE_GROUPS_LABEL = "Validation Score Groups:"
# How many groups the builtin scripts score (a script may print any count from 2 to MAX_GROUPS):
# enough pairs for a standard error, each group large enough to score (75 rows of 1,195).
SCORE_GROUPS = 16
MAX_GROUPS = 256
_SCORED_ROWS = re.compile(r"[ \t]*(?P<scored>\d+)[ \t]+of[ \t]+(?P<total>\d+)\b")

# What may follow the label: an optional wrapper such as ``np.float64(`` or ``tensor(`` or ``[``,
# then a number, nan or inf. Anything else on the line after the number is ignored.
_VALUE = re.compile(
    r"[ \t]*(?:[A-Za-z_][\w.]*\(|\[)?[ \t]*"
    r"(?P<num>[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf(?:inity)?))",
    re.IGNORECASE,
)


def split_lines(stdout: str, label: str) -> tuple[str, str]:
    """``stdout`` split into its lines that start with ``label`` and the rest, each in order (the
    estimate is time, not output: it is read off the first part and the second is recorded)."""
    lines = stdout.splitlines(keepends=True)
    return ("".join(line for line in lines if line.startswith(label)),
            "".join(line for line in lines if not line.startswith(label)))


def labelled_value(stdout: str, label: str) -> float | None:
    """The finite number after the LAST ``label`` in ``stdout``, else None (one ``rfind`` and one
    short regex: 1 MB of output costs microseconds, REQ-EX-036)."""
    at = stdout.rfind(label)
    if at < 0:
        return None
    start = at + len(label)
    end = stdout.find("\n", start)
    line = stdout[start:] if end < 0 else stdout[start:end]
    match = _VALUE.match(line)
    if not match:
        return None
    try:
        value = float(match.group("num"))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def scored_rows(stdout: str) -> int | None:
    """The rows the score is on when the LAST ``Validation Rows: <scored> of <total>`` line says
    they are fewer than all (0 < scored < total), else None: every row, as a script that prints
    no such line (or an unreadable one) is taken to mean."""
    at = stdout.rfind(SCORED_ROWS_LABEL)
    if at < 0:
        return None
    match = _SCORED_ROWS.match(stdout, at + len(SCORED_ROWS_LABEL))
    if not match:
        return None
    scored, total = int(match.group("scored")), int(match.group("total"))
    return scored if 0 < scored < total else None


def usable_estimate(seconds: float | None) -> float | None:
    """A test-run estimate the time plan may size a reserve from: finite and not negative, else
    None (one rule for the harness that records it and the plan that reads it)."""
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def score_groups(stdout: str) -> tuple[float | None, ...] | None:
    """The group values on the LAST ``Validation Score Groups:`` line (``None`` for a ``nan`` or
    infinite one), else None: no such line, fewer than 2 or more than MAX_GROUPS values, or a
    token that is not a number (the whole line is then unreadable, never read in part)."""
    at = stdout.rfind(SCORE_GROUPS_LABEL)
    if at < 0:
        return None
    end = stdout.find("\n", at)
    tokens = stdout[at + len(SCORE_GROUPS_LABEL):end if end >= 0 else len(stdout)].split()
    if not 2 <= len(tokens) <= MAX_GROUPS:
        return None
    values: list[float | None] = []
    for token in tokens:
        try:
            value = float(token)
        except ValueError:
            return None
        values.append(value if math.isfinite(value) else None)
    return tuple(values)
