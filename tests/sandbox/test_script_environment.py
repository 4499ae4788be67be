"""Issue 61, item 9, through the real `engine start`: an evaluation script that prints its
environment sees the allow-list (engine/harness/environment.py) and the names the run's
``eval_env_pass`` gives, nothing else — with a database URL holding a password in ``ENGINE_DB``
and ``DATABASE_URL`` set for the engine — sandboxed or not; the log holds no secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.harness.environment import script_may_see
from tests.core.helpers import TOY_AGENT, TOY_TASK, engine_env, read_log, run_engine

SECRET = "s3cret-pa55word"
ENGINE_ENV = {"ENGINE_DB": f"postgresql://u:{SECRET}@h/db", "DATABASE_URL": f"postgresql://u:{SECRET}@h/other",
              "SERVICE_TOKEN": SECRET, "PYTHONSTARTUP": "/x.py", "MY_SETTING": "passed-by-name",
              "UNNAMED_SETTING": "not-passed", "OMP_NUM_THREADS": "1", "LC_ALL": "C.UTF-8"}
# What the engine sets in every script's environment itself, and what bubblewrap's launcher adds.
SET_BY_THE_ENGINE = {"PYTHONUNBUFFERED", "PYTHONHASHSEED", "ENGINE_EVAL_DEADLINE", "ENGINE_EVAL_CORES", "PWD",
                     "LC_CTYPE"}


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_an_evaluation_script_sees_only_the_allow_list(tmp_path: Path, sandbox: str) -> None:
    db = tmp_path / "runs" / "engine.db"  # --db names the database: ENGINE_DB is only in the environment
    done = run_engine("start", "--task", TOY_TASK, "--strategy", "tests.sandbox.env_strategy:main",
                      "--agent", TOY_AGENT, "--sandbox", sandbox, "--set", "eval_env_pass=[MY_SETTING]",
                      "--run-id", "E", "--db", db, env=engine_env(**ENGINE_ENV), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    log = read_log(db, "E")
    stdout = next(e.payload["result"]["stdout"] for e in log if e.type == "EvaluationCompleted")
    seen = json.loads(next(line for line in stdout.splitlines() if line.startswith("ENV "))[4:])
    unexpected = {n for n in seen if not script_may_see(n, ("MY_SETTING",)) and n not in SET_BY_THE_ENGINE
                  and not (sandbox == "bwrap" and seen[n] == "sandbox")}  # the sandbox's own USER, LOGNAME
    assert unexpected == set(), unexpected
    assert seen["MY_SETTING"] == "passed-by-name" and seen["OMP_NUM_THREADS"] == "1"
    assert not {"ENGINE_DB", "DATABASE_URL", "SERVICE_TOKEN", "PYTHONSTARTUP", "UNNAMED_SETTING"} & set(seen)
    assert SECRET not in db.read_bytes().decode("utf-8", "replace")
    started = next(e for e in log if e.type == "RunStarted")
    assert started.payload["config"]["eval_env_pass"] == ["MY_SETTING"]  # names only, in the log
