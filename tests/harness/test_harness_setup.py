"""Working directories, inputs, script writing, GPU detection and the script environment
(REQ-EX-001..006, 043..045)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from engine.harness import (
    ScriptRejected,
    build_execution_env,
    clean_output_directory,
    detect_error_masking,
    detect_gpu_info,
    is_secret_name,
    populate_inputs,
    safe_dir_name,
    setup_working_directory,
    write_script,
)
from engine.harness.workdir import prepare_evaluation_directory
from events.domain import SolutionPhase, SolutionScript


def test_req_ex_001_setup_creates_input_and_final(tmp_path: Path) -> None:
    base = setup_working_directory(tmp_path / "comp1")
    assert os.path.isabs(base)
    assert (Path(base) / "input").is_dir() and (Path(base) / "final").is_dir()
    assert setup_working_directory(base) == base  # idempotent


def test_req_ex_002_clean_output_directory(tmp_path: Path) -> None:
    base = Path(setup_working_directory(tmp_path))
    (base / "final" / "submission.csv").write_text("a\n")
    (base / "final" / "sub").mkdir()
    (base / "final" / "sub" / "x").write_text("x")
    clean_output_directory(base)
    assert (base / "final").is_dir() and list((base / "final").iterdir()) == []


def test_req_ex_003_detect_gpu_info_without_gpu() -> None:
    """REQ-EX-003: never raises; on this GPU-less machine cuda_available is False."""
    info = detect_gpu_info()
    assert info["cuda_available"] is False
    assert info["gpu_count"] == 0
    assert info["gpu_names"] == []


def test_req_ex_004_build_execution_env() -> None:
    env = build_execution_env([0, 1], base={"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "3"})
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert env["PYTHONUNBUFFERED"] == "1" and env["PYTHONHASHSEED"] == "0"
    inherited = build_execution_env(None, base={"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "3"})
    assert inherited["CUDA_VISIBLE_DEVICES"] == "3"  # None -> not set by us, inherited
    assert "CUDA_VISIBLE_DEVICES" not in build_execution_env(None, base={"PATH": "/bin"})


def test_the_script_environment_is_an_allow_list() -> None:
    """Issue 61, item 9: what a script inherits is the allow-list, whatever else the engine's
    environment holds (a database URL with its password, credentials, the engine's own paths);
    the user adds names with ``eval_env_pass`` (``passed``)."""
    base = {
        "PATH": "/bin", "HOME": "/root", "LANG": "C.UTF-8", "LC_ALL": "C", "TMPDIR": "/t", "PYTHONPATH": "/x",
        "ENGINE_DB": "postgresql://u:secret@h/db", "DATABASE_URL": "postgresql://u:secret@h/x", "USER": "me",
        "ANTHROPIC_API_KEY": "sk-1", "OPENAI_API_KEY": "sk-2", "HF_TOKEN": "t", "GITHUB_TOKEN": "g",
        "AWS_SECRET_ACCESS_KEY": "a", "AWS_ACCESS_KEY_ID": "b", "DB_PASSWORD": "p", "KAGGLE_KEY": "k",
        "CLAUDE_CODE_OAUTH_TOKEN": "o", "MY_client_secret": "c", "GOOGLE_APPLICATION_CREDENTIALS": "/c.json",
        "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "ENGINE_EVAL_MODE": "x", "CUDA_API_KEY": "looks-like-a-secret", "ENGINE_UI_TOKEN": "u", "ENGINE_BUSY_TIMEOUT_MS": "9",
    }
    env = build_execution_env(base=base)
    assert set(env) == {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                        "OPENBLAS_NUM_THREADS", "CUDA_DEVICE_ORDER", "ENGINE_EVAL_MODE", "PYTHONUNBUFFERED",
                        "PYTHONHASHSEED"}
    passed = build_execution_env(base=base, passed=["USER", "HF_TOKEN", "NOT_SET"])
    assert passed["USER"] == "me" and passed["HF_TOKEN"] == "t" and "NOT_SET" not in passed
    assert is_secret_name("ANTHROPIC_AUTH_TOKEN") and is_secret_name("CUDA_API_KEY")
    assert not is_secret_name("CUDA_VISIBLE_DEVICES") and not is_secret_name("GIT_AUTHOR_NAME")


def test_redaction_and_the_script_environment_share_one_rule_for_secrets() -> None:
    """One rule decides which names hold secrets: the backends' redaction takes their values,
    and the script's allow-list withholds them (even under an allowed prefix)."""
    from engine.agents.secrets import Redactor

    env = {"CUDA_API_KEY": "value-of-a-key-0123", "GIT_AUTHOR_NAME": "Ada Lovelace", "MY_PASSWD": "hunter2-hunter2",
           "ENGINE_DB": "postgresql://u:s3cret-pw@h/db"}
    text = Redactor.from_env(env).text(" ".join(env.values()))
    assert text == "[REDACTED] Ada Lovelace [REDACTED] postgresql://u:[REDACTED]@h/db"
    assert "CUDA_API_KEY" not in build_execution_env(base=env)


def test_req_ex_005_write_script_exact_utf8(tmp_path: Path) -> None:
    content = "# coding: utf-8\nprint('héllo ✓')\r\nprint(1)\n"
    sol = SolutionScript(content=content, phase=SolutionPhase.init)
    path = write_script(sol, tmp_path, "sol.py")
    assert os.path.isabs(path)
    assert Path(path).read_bytes() == content.encode("utf-8")
    sol2 = SolutionScript(content="print(2)\n", phase=SolutionPhase.init)
    assert Path(write_script(sol2, tmp_path, "sol.py")).read_text() == "print(2)\n"  # overwrite


@pytest.mark.parametrize(
    "content",
    ["", "   \n\t\n", "exit()", "import sys\nsys.exit(1)\n", "import os\nos._exit(0)\n", "quit()",
     "if x:\n    exit (2)\n", "sys.exit ()"],
)
def test_req_ex_006_044_rejections(tmp_path: Path, content: str) -> None:
    """REQ-EX-006/044: empty code and exit calls raise (a ValueError subclass); nothing is written."""
    sol = SolutionScript(content=content, phase=SolutionPhase.init)
    with pytest.raises(ScriptRejected) as info:
        write_script(sol, tmp_path, "x.py")
    assert isinstance(info.value, ValueError)
    assert "script rejected" in str(info.value)
    assert not (tmp_path / "x.py").exists()


@pytest.mark.parametrize(
    "content",
    ["import atexit\natexit.register(print)\n", "# do not call exit() here\nprint(1)\n", "exit_code = 0\n",
     "def on_exit(): pass\non_exit()\n"],
)
def test_req_ex_006_no_false_positives(tmp_path: Path, content: str) -> None:
    write_script(SolutionScript(content=content, phase=SolutionPhase.init), tmp_path)


def test_req_ex_045_error_masking_warnings() -> None:
    code = (
        "try:\n    a()\nexcept:\n    b()\n"
        "try:\n    a()\nexcept Exception:\n    pass\n"
        "try:\n    a()\nexcept ValueError:\n    pass\n"
        "try:\n    a()\nexcept Exception:\n    log()\n"
    )
    warnings = detect_error_masking(code)
    assert len(warnings) == 2
    assert warnings[0].startswith("line 3") and "bare" in warnings[0]
    assert "line 7" in warnings[1]
    assert detect_error_masking("def (:") == []


def test_safe_dir_name_readable_and_unique() -> None:
    a = safe_dir_name("phase2/path-1/t2/k3/eval")
    assert a.startswith("phase2__path-1__t2__k3__eval-")
    assert "/" not in a
    assert safe_dir_name("a/b") != safe_dir_name("a__b")
    assert safe_dir_name("../../etc") not in ("..", ".") and "/" not in safe_dir_name("../../etc")
    assert len(safe_dir_name("x" * 1000)) < 120


def test_inputs_are_read_only_links_mirroring_the_task(tmp_path: Path, task_dir: Path) -> None:
    """Symlink mode: every task file appears under input/ as a link to a file without write bits."""
    base = prepare_evaluation_directory(tmp_path / "e", task_dir, input_mode="symlink")
    link = base / "input" / "train.csv"
    assert link.is_symlink() and link.resolve() == (task_dir / "train.csv").resolve()
    assert (base / "input" / "images").is_dir() and not (base / "input" / "images").is_symlink()
    assert (base / "input" / "images" / "a.txt").is_symlink()
    for path in (task_dir / "train.csv", task_dir / "images" / "a.txt"):
        assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    assert not (base / "input").stat().st_mode & stat.S_IWUSR
    # a re-run resets the directory despite its read-only parts
    (base / "final" / "old.csv").write_text("x")
    again = prepare_evaluation_directory(tmp_path / "e", task_dir, input_mode="symlink")
    assert list((again / "final").iterdir()) == []


def test_inputs_copy_mode_is_private(tmp_path: Path, task_dir: Path) -> None:
    base = prepare_evaluation_directory(tmp_path / "e", task_dir, input_mode="copy")
    copy = base / "input" / "train.csv"
    assert copy.is_file() and not copy.is_symlink()
    assert copy.read_bytes() == (task_dir / "train.csv").read_bytes()
    assert not copy.stat().st_mode & stat.S_IWUSR


def test_populate_inputs_missing_task_dir(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        populate_inputs(tmp_path / "nope", tmp_path / "input")


def test_eval_env_pass_is_a_setting_of_names() -> None:
    """``eval_env_pass`` as `--set` gives it (a YAML list), as MLE_STAR_EVAL_ENV_PASS gives it
    (comma-separated), and refused with its name when an entry is not a variable's name; left
    out of a config dumped at its default, so logs recorded before it replay as they were."""
    from engine.config.presets import ConfigError, build_config
    from events.domain import PipelineConfig

    assert build_config(overrides=["eval_env_pass=[HF_HOME, WANDB_MODE]"], environ={}).eval_env_pass == (
        "HF_HOME", "WANDB_MODE")
    assert build_config(environ={"MLE_STAR_EVAL_ENV_PASS": "HF_HOME, WANDB_MODE"}).eval_env_pass == (
        "HF_HOME", "WANDB_MODE")
    with pytest.raises(ConfigError, match="eval_env_pass takes names of environment variables"):
        build_config(overrides=["eval_env_pass=[A=B]"], environ={})
    assert "eval_env_pass" not in PipelineConfig().model_dump()
