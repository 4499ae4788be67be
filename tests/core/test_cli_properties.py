"""No input ends in a traceback (issue 61, "Must show": the property test). Hypothesis draws
`engine` argument vectors — verbs, options and values, bad ones included — over damaged files (the
database, an export, a task folder); every one ends with exit code 0, 1 or 2, no Python traceback
on stdout or stderr, and nothing written outside the chosen database's folder.

Most examples run in this process through typer's CliRunner on the real app (a subprocess costs
seconds of imports); a few run the real `engine` command in a subprocess, as the shell sees it.
Bundled task names are left out on purpose: naming one prepares it in the tasks folder, which is
where the user asked it to go, not a stray write.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.core.helpers import TOY_TASK, assert_no_traceback, engine_env, run_engine

DAMAGES = ("intact", "missing", "empty", "truncated", "flipped", "binary", "text", "directory")
NUMBERS = ("abc", "1e99", "-1", "0", "3", "99999999999999999999", "nan", "inf", "", "2.5")
# Time limits `engine start` refuses before anything runs (no run is started by this test).
TOO_SHORT = ("abc", "1e99", "-1", "0", "3", "", "2.5", "nan")
BAD_PORTS = ("abc", "99999", "-5", "1e99", "", "65536")
RUN_IDS = ("R", "nope", "../../x", "", "r un", "R'; echo", "é")


@dataclass(frozen=True)
class Example:
    argv: list[str]
    db_damage: str
    export_damage: str
    task_damage: str
    offset: int


def _damage(path: Path, how: str, offset: int) -> None:
    """``path`` (a file or a folder) damaged in place as ``how`` says."""
    if how == "intact":
        return
    if path.is_dir() and how != "missing":
        files = sorted(p for p in path.iterdir() if p.is_file())
        victim = files[offset % len(files)]
        _damage(victim, how if how != "directory" else "missing", offset)
        return
    if how == "missing":
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: offset % max(1, len(data))])
    elif how == "flipped":
        data = bytearray(path.read_bytes())
        if data:
            data[offset % len(data)] ^= 0xFF
        path.write_bytes(bytes(data))
    elif how == "binary":
        path.write_bytes(bytes(range(256)) * 8)
    elif how == "text":
        path.write_text("this is not what you think it is\n" * 20)
    elif how == "directory":
        path.unlink()
        path.mkdir()


@pytest.fixture(scope="module")
def originals(toy_run, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The toy run's database and its export, recorded by the real CLI."""
    folder = tmp_path_factory.mktemp("originals")
    export = folder / "R.jsonl"
    done = run_engine("export", "R", "-o", export, "--db", toy_run.db)
    assert done.returncode == 0, done.stderr
    return toy_run.db, export


@contextmanager
def _world(originals: tuple[Path, Path], ex: Example) -> Iterator[tuple[Path, dict[str, str]]]:
    """A fresh folder with the damaged database (in ``db/``), export and task folder, and what
    each placeholder of the argument vector stands for."""
    with tempfile.TemporaryDirectory(prefix="cli-prop-") as raw:
        root = Path(raw)
        (root / "db").mkdir()
        (root / "work").mkdir()
        db, export, task = root / "db" / "engine.db", root / "in" / "R.jsonl", root / "in" / "task"
        task.parent.mkdir()
        shutil.copyfile(originals[0], db)
        shutil.copyfile(originals[1], export)
        shutil.copytree(TOY_TASK, task)
        _damage(db, ex.db_damage, ex.offset)
        _damage(export, ex.export_damage, ex.offset)
        _damage(task, ex.task_damage, ex.offset)
        yield root, {"@DB": str(db), "@EXPORT": str(export), "@TASK": str(task), "@OUT": str(root / "db" / "out.x"),
                     "@OUTDIR": str(root / "db"), "@NODIR": str(root / "db" / "no" / "such" / "out.x"),
                     "@SUB": str(task / "sample_submission.csv")}


def _files(root: Path) -> set[Path]:
    return set(root.rglob("*"))


def _written_outside(root: Path, before: set[Path], argv: list[str]) -> set[Path]:
    chosen = Path(argv[argv.index("--db") + 1]).parent if "--db" in argv[:-1] else root / "work" / "engine-runs"
    chosen = chosen.resolve() if chosen.exists() else chosen
    # The folders that make up the chosen one's path (a --db in folders that do not exist yet) are
    # the chosen folder being made, not writing beside it.
    return {p for p in _files(root) - before
            if chosen not in p.resolve().parents and p.resolve() != chosen and p.resolve() not in chosen.parents}


run_ids = st.sampled_from(RUN_IDS)
numbers = st.sampled_from(NUMBERS)
outputs = st.sampled_from(["@OUT", "@OUTDIR", "@NODIR", "@EXPORT"])


def _options(*pairs: tuple[str, st.SearchStrategy[str]]) -> st.SearchStrategy[list[str]]:
    """Any subset of the options, each with a drawn value (a value of None: a flag)."""
    return st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs)).flatmap(
        lambda chosen: st.tuples(*(st.tuples(st.just(o), v) for o, v in chosen)).map(
            lambda items: [part for o, v in items for part in ((o,) if v is None else (o, v))]))


def _verb() -> st.SearchStrategy[list[str]]:
    json_flag = ("--json", st.none())
    db = ("--db", st.sampled_from(["@DB", "@OUTDIR", "@EXPORT", "@NODIR"]))
    return st.one_of(
        st.tuples(st.just(["runs"]), _options(json_flag, db)),
        st.tuples(st.sampled_from([["status"], ["lineage"], ["verify"], ["campaign", "status"]]).flatmap(
            lambda v: run_ids.map(lambda r: [*v, r])), _options(json_flag, db)),
        st.tuples(run_ids.map(lambda r: ["log", r]), _options(json_flag, db, ("--type", st.sampled_from(
            ["RunStarted", "Nope", ""])))),
        st.tuples(run_ids.map(lambda r: ["replay", r]), _options(db, ("--against", st.sampled_from(["@EXPORT"])))),
        st.tuples(st.sampled_from([["export"], ["report"]]).flatmap(lambda v: run_ids.map(lambda r: [*v, r])),
                  _options(db, ("-o", outputs))),
        st.tuples(st.just(["import", "@EXPORT"]), _options(db, ("--allow-partial", st.none()))),
        st.tuples(st.just(["tasks", "check", "@TASK"]), _options(json_flag)),
        st.tuples(st.just(["grade"]), _options(db, ("-o", outputs), ("--task", st.just("@TASK")), ("--submission", st.sampled_from(
            ["@SUB", "@EXPORT", "@OUTDIR"])), ("R", st.none()))),
        st.tuples(st.just(["start", "--task", "@TASK", "--agent", "builtin", "--time-limit", "1"]),
                  _options(db, ("--seed", numbers), ("--max-budget", numbers), ("--preset", st.sampled_from(
                      ["quick", "nope"])), ("--set", st.sampled_from(["ensemble_rounds=x", "nope=1", "x"])),
                      ("--run-id", run_ids), ("--config", st.sampled_from(["@EXPORT", "@OUTDIR", "@SUB"])))),
        st.tuples(st.sampled_from(TOO_SHORT).map(lambda t: ["start", "--task", "@TASK", "--time-limit", t]),
                  _options(db)),
        st.tuples(st.sampled_from(BAD_PORTS).map(lambda port: ["ui", "--port", port]),  # never one it serves on
                  _options(db, ("--host", st.sampled_from(["0.0.0.0", "nonexistent.invalid", "::1"])))),
        st.tuples(st.sampled_from([["nosuch"], ["status", "--bogus"], ["export", "R", "-o"], []]), st.just([])),
    ).map(lambda parts: [*parts[0], *parts[1]])


examples = st.builds(Example, argv=_verb(), db_damage=st.sampled_from(DAMAGES),
                     export_damage=st.sampled_from(DAMAGES), task_damage=st.sampled_from(DAMAGES),
                     offset=st.integers(min_value=0, max_value=1 << 20))


def _stderr(result: object) -> str:
    try:
        return str(getattr(result, "stderr", ""))
    except ValueError:  # a click that mixes stderr into the output
        return ""


def _expand(argv: list[str], names: dict[str, str]) -> list[str]:
    return [names.get(a, a) for a in argv]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(ex=examples)
def test_any_argument_vector_on_any_damaged_file_ends_cleanly_in_process(originals, ex: Example) -> None:
    from engine.cli.main import app

    with _world(originals, ex) as (root, names):
        argv = _expand(ex.argv, names)
        before = _files(root)
        cwd = Path.cwd()
        os.chdir(root / "work")
        try:
            result = CliRunner(env={"ENGINE_DB": None, "COLUMNS": "300"}).invoke(app, argv)
        finally:
            os.chdir(cwd)
        shown = result.output + _stderr(result)
        assert result.exception is None or isinstance(result.exception, SystemExit), (argv, repr(result.exception))
        assert result.exit_code in (0, 1, 2), (argv, result.exit_code, shown)
        assert "Traceback" not in shown, (argv, shown)
        assert _written_outside(root, before, argv) == set(), argv


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(ex=examples)
def test_the_engine_command_ends_cleanly_in_a_subprocess(originals, ex: Example) -> None:
    with _world(originals, ex) as (root, names):
        argv = _expand(ex.argv, names)
        before = _files(root)
        done = run_engine(*argv, env=engine_env(ENGINE_DB=None), cwd=root / "work")
        assert done.returncode in (0, 1, 2), (argv, done.returncode, done.stderr[-3000:])
        assert_no_traceback(done)
        assert _written_outside(root, before, argv) == set(), argv
