"""A run whose candidates all fail names their common root cause: the exception line and the file
it is about, read from real tracebacks of real scripts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from handlers.failure_cause import exception_line, root_cause


def _traceback(tmp_path: Path, code: str) -> str:
    script = tmp_path / "solution.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    return done.stderr


def test_undecodable_train_csv_is_named_with_its_file(tmp_path):
    (tmp_path / "input").mkdir()
    (tmp_path / "input" / "train.csv").write_bytes(bytes(range(128, 256)) * 4)
    errors = [_traceback(tmp_path, f"import pandas as pd\n# candidate {i}\ntrain = pd.read_csv('./input/train.csv')\n")
              for i in range(3)]
    cause = root_cause(errors)
    assert cause is not None and cause.startswith("every candidate failed with UnicodeDecodeError: 'utf-8' codec")
    assert cause.endswith("(about ./input/train.csv)")


def test_missing_test_csv_is_named_from_the_message(tmp_path):
    error = _traceback(tmp_path, "import pandas as pd\npd.read_csv('input/test.csv')\n")
    cause = root_cause([error, error])
    assert cause is not None and "FileNotFoundError" in cause and cause.endswith("(about input/test.csv)")


def test_different_failures_name_the_most_common_with_its_count(tmp_path):
    key = _traceback(tmp_path, "d = {}\nd['target']\n")
    zero = _traceback(tmp_path, "1 / 0\n")
    cause = root_cause([key, zero, key])
    assert cause == "2 of 3 candidates failed with KeyError: 'target'"


def test_no_traceback_no_cause():
    assert root_cause(["", "killed: out of memory"]) is None
    assert exception_line("Traceback (most recent call last):\n  ...\nValueError: bad\n") == "ValueError: bad"


# --- in a run: the failed run's error names it; a run recorded before keeps its error -------------

_TRACEBACK = ('Traceback (most recent call last):\n  File "/run/evals/x/solution.py", line 3, in <module>\n'
              '    train = pd.read_csv("./input/train.csv")\n'
              '  File "/usr/lib/python3/site-packages/pandas/io/parsers/readers.py", line 1026, in read_csv\n'
              "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x80 in position 0: invalid start byte\n")


def _failed_phase1(patches: list[str]):
    from events.core import RunFailed
    from tests.pipeline import scripted_agent as sa
    from tests.replays.build import BuiltFixture, World, _small_mle_star, _started, drive
    from tests.support.sim import error_result, make_task

    def make():
        started = _started("mle-star", _small_mle_star(max_debug_attempts=1), make_task())
        world = World(agent=lambda r: sa.answer(r, cost_usd=0.002), evaluate=lambda r, code: error_result(_TRACEBACK),
                      preflight_usd=0.001)
        return started.model_copy(update={"patches": patches}), world

    log = drive(BuiltFixture("phase1-all-fail", "", "mle-star", make))
    (failed,) = [env.event() for env in log if env.type == "RunFailed"]
    assert isinstance(failed, RunFailed)
    return failed.error


def test_a_run_whose_candidates_all_fail_names_the_cause():
    from handlers.failure_cause import PATCH

    error = _failed_phase1([PATCH])
    assert "all 2 candidates produced execution errors: every candidate failed with UnicodeDecodeError" in error
    assert error.endswith("(about ./input/train.csv)")
    before = _failed_phase1([])  # a run recorded before the change keeps the error it recorded
    assert before.endswith("candidates produced execution errors")
