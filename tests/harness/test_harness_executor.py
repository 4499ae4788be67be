"""The evaluation executor and evaluate_solution, end to end with real subprocesses
(REQ-EX-015/016/024/025/046, Known decisions on per-evaluation directories and rejections)."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from engine.harness import (
    EvalContext,
    check_submission,
    eval_dir_for,
    evaluate_solution,
    get_submission_info,
    run_evaluation,
    verify_submission,
)
from engine.harness.environment import script_may_see, usable_cores
from events.core import EvaluationCompleted, EvaluationRequested
from events.domain import (
    DataModality,
    MetricDirection,
    PipelineConfig,
    SolutionPhase,
    SolutionScript,
    TaskDescription,
    TaskType,
    solution_id_of,
)

pytestmark = pytest.mark.anyio

WRITE_SUBMISSION = """
import pandas as pd
test = pd.read_csv("input/test.csv")
pd.DataFrame({{"id": test["id"], "y": [{value}] * len(test)}}).to_csv("final/submission.csv", index=False)
print("Final Validation Performance: {score}")
"""


# What the engine sets itself in every script's environment (besides the allow-list it passes on),
# and what the interpreter or bubblewrap's launcher add at start-up.
ENGINE_SET = {"PYTHONUNBUFFERED", "PYTHONHASHSEED", "ENGINE_EVAL_DEADLINE", "ENGINE_EVAL_CORES", "LC_CTYPE", "PWD"}


def _ctx(tmp_path: Path, task_dir: Path, **kw) -> EvalContext:
    return EvalContext(run_dir=tmp_path / "run", task_dir=task_dir,
                       sample_submission=task_dir / "sample_submission.csv", subsample_limit=30000, **kw)


def _request(code: str, effect_id: str = "phase1/candidate-0/eval", timeout: float = 30, **kw) -> EvaluationRequested:
    return EvaluationRequested(effect_id=effect_id, solution_id=solution_id_of(code), purpose="test",
                               timeout_s=timeout, **kw)


async def test_executor_directory_layout_and_result(tmp_path: Path, task_dir: Path) -> None:
    """Own directory per evaluation: input/ with the task files, empty final/, script kept as
    <solution_id>.py, cwd = the evaluation directory; the completed event carries the result."""
    code = textwrap.dedent("""
        import os, json
        print(json.dumps({"cwd": os.getcwd(), "input": sorted(os.listdir("input")), "final": os.listdir("final")}))
        print("Final Validation Performance: 0.875")
    """)
    request = _request(code, effect_id="phase2/path-1/t2/k3/eval")
    done = await run_evaluation(request, code, _ctx(tmp_path, task_dir))
    assert isinstance(done, EvaluationCompleted)
    assert done.effect_id == "phase2/path-1/t2/k3/eval" and done.elapsed_s == 0.0
    assert done.result.score == pytest.approx(0.875) and not done.result.is_error
    assert done.peak_rss_mb is not None and done.peak_rss_mb > 0 and done.cpu_s is not None
    assert done.submission is None  # not asked for
    eval_dir = eval_dir_for(tmp_path / "run", request.effect_id)
    assert eval_dir.parent == tmp_path / "run" / "evals" and eval_dir.name.startswith("phase2__path-1__t2__k3__eval-")
    import json

    seen = json.loads(done.result.stdout.splitlines()[0])
    assert seen["cwd"] == str(eval_dir.resolve())
    assert seen["input"] == ["description.md", "images", "sample_submission.csv", "test.csv", "train.csv"]
    assert seen["final"] == []
    assert (eval_dir / f"{request.solution_id}.py").read_text() == code
    # after the run input/ holds links only (private copies, made when running as root, are dropped)
    assert all(p.is_symlink() or p.is_dir() for p in (eval_dir / "input").rglob("*"))


async def test_executor_scripts_cannot_modify_task_data(tmp_path: Path, task_dir: Path) -> None:
    before = {p: p.read_bytes() for p in task_dir.rglob("*") if p.is_file()}
    code = textwrap.dedent("""
        import os
        for name in ["input/train.csv", "input/images/a.txt"]:
            for mode in ("a", "w"):
                try:
                    with open(name, mode) as f:
                        f.write("tampered\\n")
                except OSError as exc:
                    print("refused", name, type(exc).__name__)
        for name in ["input/test.csv"]:
            try:
                os.remove(name)
            except OSError as exc:
                print("refused remove", type(exc).__name__)
        print("Final Validation Performance: 1")
    """)
    await run_evaluation(_request(code), code, _ctx(tmp_path, task_dir))
    after = {p: p.read_bytes() for p in task_dir.rglob("*") if p.is_file()}
    assert after == before


async def test_executor_resets_directory_on_rerun(tmp_path: Path, task_dir: Path) -> None:
    """Effects are at-least-once: a re-run of the same effect id starts from a clean directory."""
    code = "import os\nprint(sorted(os.listdir('final')))\nopen('final/mark.txt', 'w').write('x')\n"
    ctx = _ctx(tmp_path, task_dir)
    first = await run_evaluation(_request(code), code, ctx)
    stray = eval_dir_for(ctx.run_dir, "phase1/candidate-0/eval") / "leftover.txt"
    stray.write_text("from a crashed attempt")
    second = await run_evaluation(_request(code), code, ctx)
    assert first.result.stdout.strip() == "[]" and second.result.stdout.strip() == "[]"
    assert not stray.exists()


ENGINE_SECRETS = {"ENGINE_DB": "postgresql://u:secret@h/db", "DATABASE_URL": "postgresql://u:secret@h/other",
                  "ANTHROPIC_API_KEY": "sk-ant-secret-0123456789", "SOME_SERVICE_TOKEN": "tok-0123456789",
                  "PYTHONPATH": "/somewhere", "HARMLESS_SETTING": "fine", "OMP_NUM_THREADS": "3", "LC_ALL": "C.UTF-8"}


@pytest.mark.parametrize("sandbox_mode", ["none", "bwrap"])
async def test_a_script_sees_only_the_allow_list(tmp_path: Path, task_dir: Path, sandbox_mode: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 61, item 9: a script that prints its environment, run while the engine's own holds
    ENGINE_DB=postgresql://u:secret@h/db, DATABASE_URL, an API key and ordinary settings, sees the
    allow-list (locale, home, temporary folder, thread settings, the engine's ENGINE_EVAL_*) and
    the interpreter's two settings; nothing else, and no secret."""
    for name, value in ENGINE_SECRETS.items():
        monkeypatch.setenv(name, value)
    code = "import json, os\nprint(json.dumps(dict(os.environ)))\n"
    done = await run_evaluation(_request(code), code, _ctx(tmp_path, task_dir, sandbox_mode=sandbox_mode))
    assert not done.result.is_error, done.result.stderr
    seen = json.loads(done.result.stdout.strip().splitlines()[-1])
    outside = {n for n in seen if not script_may_see(n) and n not in ENGINE_SET
               and not (sandbox_mode == "bwrap" and seen[n] == "sandbox")}  # the sandbox's own USER, LOGNAME
    assert outside == set(), outside
    assert "secret" not in done.result.stdout
    assert seen["OMP_NUM_THREADS"] == "3" and seen["LC_ALL"] == "C.UTF-8"
    assert not {"ENGINE_DB", "DATABASE_URL", "PYTHONPATH", "HARMLESS_SETTING"} & set(seen)


async def test_eval_env_pass_adds_the_names_the_user_gives(tmp_path: Path, task_dir: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENGINE_SECRETS.items():
        monkeypatch.setenv(name, value)
    code = "import json, os\nprint(json.dumps(dict(os.environ)))\n"
    done = await run_evaluation(_request(code), code, _ctx(tmp_path, task_dir, env_pass=("HARMLESS_SETTING",)))
    seen = json.loads(done.result.stdout.strip().splitlines()[-1])
    assert seen["HARMLESS_SETTING"] == "fine" and "ENGINE_DB" not in seen


@pytest.mark.parametrize("sandbox_mode", ["none", "bwrap"])
async def test_executor_tells_the_script_when_it_will_be_killed(tmp_path: Path, task_dir: Path, sandbox_mode: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """ENGINE_EVAL_DEADLINE is the Unix time the evaluation's timeout ends at, so a script can fit
    its work to the time it was given; one in the engine's own environment is never passed on."""
    monkeypatch.setenv("ENGINE_EVAL_DEADLINE", "1.0")
    code = "import os\nprint(os.environ['ENGINE_EVAL_DEADLINE'])\n"
    before = time.time()
    done = await run_evaluation(_request(code, timeout=300), code, _ctx(tmp_path, task_dir, sandbox_mode=sandbox_mode))
    after = time.time()
    assert not done.result.is_error, done.result.stderr
    assert before + 300 <= float(done.result.stdout.strip()) <= after + 300


@pytest.mark.parametrize("sandbox_mode", ["none", "bwrap"])
async def test_executor_tells_the_script_the_window_it_is_asked_to_fit(tmp_path: Path, task_dir: Path,
                                                                      sandbox_mode: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """ENGINE_EVAL_FIT_BY is the Unix time the request's ``fit_within_s`` ends at (Phase 1's drafts,
    docs/decisions/0032), beside the deadline it is killed at; a request that asks nothing sets
    none, and one in the engine's own environment is never passed on."""
    monkeypatch.setenv("ENGINE_EVAL_FIT_BY", "1.0")
    code = "import os\nprint(os.environ.get('ENGINE_EVAL_FIT_BY'), os.environ['ENGINE_EVAL_DEADLINE'])\n"
    for fit_within_s in (30.0, None):
        request = _request(code, timeout=300, effect_id=f"phase1/candidate-{fit_within_s}/eval",
                           fit_within_s=fit_within_s)
        before = time.time()
        done = await run_evaluation(request, code, _ctx(tmp_path, task_dir, sandbox_mode=sandbox_mode))
        after = time.time()
        assert not done.result.is_error, done.result.stderr
        fit_by, deadline = done.result.stdout.split()
        assert before + 300 <= float(deadline) <= after + 300
        if fit_within_s is None:
            assert fit_by == "None"
        else:
            assert before + 30 <= float(fit_by) <= after + 30


@pytest.mark.parametrize("sandbox_mode", ["none", "bwrap"])
async def test_executor_tells_the_script_how_many_cores_it_may_use(tmp_path: Path, task_dir: Path, sandbox_mode: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """ENGINE_EVAL_CORES is the request's ``cores`` (an evaluation that runs alone by design gets
    every evaluation core; one of several at once gets one), at most the cores this machine lets
    the engine use; one in the engine's own environment is never passed on."""
    monkeypatch.setenv("ENGINE_EVAL_CORES", "64")
    code = "import os\nprint(os.environ['ENGINE_EVAL_CORES'])\n"
    for cores in (1, 2, 10_000):
        done = await run_evaluation(_request(code, effect_id=f"final/test-{cores}/eval", cores=cores), code,
                                    _ctx(tmp_path, task_dir, sandbox_mode=sandbox_mode))
        assert not done.result.is_error, done.result.stderr
        assert done.result.stdout.strip() == str(min(cores, usable_cores()))


@pytest.mark.parametrize(("code", "needle"), [("   \n", "empty"), ("import sys\nprint(1)\nsys.exit(0)\n", "sys.exit()")])
async def test_known_decision_rejection_is_an_error_result(tmp_path: Path, task_dir: Path, code: str, needle: str) -> None:
    """REQ-EX-006/044 + Known decisions: a write_script rejection becomes an evaluation error
    with a clear message for the debugger, not a crash."""
    done = await run_evaluation(_request(code), code, _ctx(tmp_path, task_dir))
    result = done.result
    assert result.is_error is True and result.score is None and result.exit_code == -1
    assert result.error_traceback is not None and needle in result.error_traceback
    assert "script rejected" in result.error_traceback
    assert done.peak_rss_mb is None and done.cpu_s is None


async def test_executor_timeout_uses_request_timeout(tmp_path: Path, task_dir: Path) -> None:
    code = "import time\nprint('begin', flush=True)\nwhile True:\n    time.sleep(0.05)\n"
    started = time.monotonic()
    done = await run_evaluation(_request(code, timeout=1), code, _ctx(tmp_path, task_dir))
    assert time.monotonic() - started < 5
    assert done.result.is_error and done.result.exit_code == -1
    assert done.result.error_traceback.startswith("timed out after 1 s")
    assert "begin" in done.result.stdout


async def test_parallel_evaluations_are_independent(tmp_path: Path, task_dir: Path) -> None:
    """Two evaluations of different scripts run concurrently (anyio task group) and produce
    independent results and files."""
    ctx = _ctx(tmp_path, task_dir)
    # A file barrier: each script announces itself and waits for the other, so both can only
    # finish with "overlap" if they really ran at the same time.
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    wait = textwrap.dedent(f"""
        import os, time
        open(os.path.join({str(barrier)!r}, "{{me}}"), "w").close()
        deadline = time.monotonic() + 10
        while len(os.listdir({str(barrier)!r})) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        print("overlap" if len(os.listdir({str(barrier)!r})) == 2 else "alone")
    """)
    codes = {
        "phase2/path-0/eval": wait.format(me="a") + WRITE_SUBMISSION.format(value=0, score=0.61),
        "phase2/path-1/eval": wait.format(me="b") + WRITE_SUBMISSION.format(value=1, score=0.72),
    }
    results: dict[str, EvaluationCompleted] = {}

    async def one(effect_id: str, code: str) -> None:
        results[effect_id] = await run_evaluation(_request(code, effect_id=effect_id, expect_submission=True), code, ctx)

    async with anyio.create_task_group() as tg:
        for effect_id, code in codes.items():
            tg.start_soon(one, effect_id, code)
    assert all(r.result.stdout.startswith("overlap") for r in results.values())
    assert results["phase2/path-0/eval"].result.score == pytest.approx(0.61)
    assert results["phase2/path-1/eval"].result.score == pytest.approx(0.72)
    for effect_id, value in (("phase2/path-0/eval", "0"), ("phase2/path-1/eval", "1")):
        sub = results[effect_id].submission
        assert sub is not None and sub.valid, sub
        path = Path(sub.path)
        assert path.parent.parent == eval_dir_for(ctx.run_dir, effect_id).resolve()
        assert {line.split(",")[1] for line in path.read_text().splitlines()[1:]} == {value}


async def test_executor_reports_invalid_submission(tmp_path: Path, task_dir: Path) -> None:
    code = "open('final/submission.csv', 'w').write('id,y\\n1,0\\n2,0\\n')\n"
    done = await run_evaluation(_request(code, expect_submission=True), code, _ctx(tmp_path, task_dir))
    sub = done.submission
    assert sub is not None and sub.exists and not sub.valid
    assert sub.rows == 2 and sub.columns == ["id", "y"]
    assert "row count 2 != expected 5" in sub.reason

    code = "print('no file')\n"
    done = await run_evaluation(_request(code, expect_submission=True), code, _ctx(tmp_path, task_dir))
    assert done.submission is not None and done.submission.exists is False and not done.submission.valid


# --- submission checks --------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "valid", "reason"),
    [
        ("id,y\n1,0.5\n2,1\n3,0\n4,1\n5,0\n", True, ""),
        ("y,id\n0,5\n1,4\n0,3\n1,2\n0,1\n", True, ""),  # column order and row order are free
        ("id,y\n1,0\n2,0\n3,0\n", False, "row count 3 != expected 5"),
        ("id\n1\n2\n3\n4\n5\n", False, "missing columns: 'y'"),
        ("id,y,extra\n1,0,a\n2,0,a\n3,0,a\n4,0,a\n5,0,a\n", False, "unexpected columns: 'extra'"),
        ("id,y\n1,0\n2,0\n3,0\n4,0\n99,0\n", False, "1 ids of the sample missing from column 'id': '5'"),
        ("id,y\n1,0\n2,0\n3,0\n4,0\n99,0\n", False, "1 unexpected ids in column 'id': '99'"),
        ("id,y\n1,0\n1,0\n3,0\n4,0\n5,0\n", False, "1 duplicate ids"),
        ("id,y\n", False, "submission has no rows"),
    ],
)
def test_submission_checked_against_sample(tmp_path: Path, task_dir: Path, text: str, valid: bool, reason: str) -> None:
    path = _write(tmp_path / "final" / "submission.csv", text)
    info = check_submission(path, task_dir / "sample_submission.csv")
    assert info.exists is True and info.valid is valid
    assert reason in info.reason


def test_req_ex_024_025_verify_and_info(tmp_path: Path) -> None:
    assert verify_submission(tmp_path) is False
    info = get_submission_info(tmp_path)
    assert info["exists"] is False and info["size_bytes"] == 0 and info["row_count"] is None
    assert info["path"] == str((tmp_path / "final" / "submission.csv").resolve())
    _write(tmp_path / "final" / "submission.csv", "")
    assert verify_submission(tmp_path) is False  # empty file
    _write(tmp_path / "final" / "submission.csv", "id,y\n1,0\n2,1\n")
    assert verify_submission(tmp_path) is True
    info = get_submission_info(tmp_path)
    assert info["exists"] is True and info["row_count"] == 2 and info["size_bytes"] > 0


# --- evaluate_solution ----------------------------------------------------------------------------


def _task(task_dir: Path) -> TaskDescription:
    return TaskDescription(competition_id="toy", task_type=TaskType.classification, data_modality=DataModality.tabular,
                           evaluation_metric="accuracy", metric_direction=MetricDirection.maximize,
                           description="toy", data_dir=str(task_dir))


async def test_req_ex_015_016_evaluate_solution_scores_and_does_not_mutate(tmp_path: Path, task_dir: Path) -> None:
    """REQ-EX-015: a script printing the score line gets a score; REQ-EX-016: the input
    SolutionScript is left exactly as it was (the caller sets its score)."""
    solution = SolutionScript(content=WRITE_SUBMISSION.format(value=1, score=0.9), phase=SolutionPhase.init)
    before = solution.model_dump()
    result = await evaluate_solution(solution, _task(task_dir), PipelineConfig(), work_root=tmp_path / "evals")
    assert result.score == pytest.approx(0.9) and not result.is_error
    assert solution.model_dump() == before and solution.score is None
    [eval_dir] = list((tmp_path / "evals").iterdir())
    assert (eval_dir / f"{solution.solution_id}.py").exists()
    assert verify_submission(eval_dir)


async def test_req_ex_046_timeout_override_beats_config(tmp_path: Path, task_dir: Path) -> None:
    solution = SolutionScript(content="import time\ntime.sleep(600)\n", phase=SolutionPhase.init)
    started = time.monotonic()
    result = await evaluate_solution(solution, _task(task_dir), PipelineConfig(time_limit_seconds=3600),
                                     timeout_override=1, work_root=tmp_path)
    assert time.monotonic() - started < 5
    assert result.is_error and result.error_traceback.startswith("timed out after 1 s")
    assert solution.score is None and solution.is_executable is True


async def test_evaluate_solution_rejection_is_error_result(tmp_path: Path, task_dir: Path) -> None:
    solution = SolutionScript(content="quit()", phase=SolutionPhase.init)
    result = await evaluate_solution(solution, _task(task_dir), PipelineConfig(), work_root=tmp_path)
    assert result.is_error and "quit()" in result.error_traceback
    assert solution.content == "quit()" and solution.score is None


async def test_a_secret_passed_by_name_is_withheld_from_the_recorded_output(tmp_path: Path, task_dir: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A script given a credential by ``eval_env_pass`` (HF_TOKEN) may use it, but what it prints
    goes to the log: the value is redacted there, by the same rule as the backends' redaction."""
    monkeypatch.setenv("HF_TOKEN", "hf_0123456789abcdef")
    code = ("import os, sys\ntoken = os.environ['HF_TOKEN']\nprint('length', len(token), 'token', token)\n"
            "print('again', token, file=sys.stderr)\n")
    done = await run_evaluation(_request(code), code, _ctx(tmp_path, task_dir, env_pass=("HF_TOKEN",)))
    assert "length 19 token [REDACTED]" in done.result.stdout
    assert "again [REDACTED]" in done.result.stderr
    assert "hf_0123456789abcdef" not in done.model_dump_json()
