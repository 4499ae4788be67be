"""The PreToolUse hook as the second line behind the sandbox (issues 14/15, REQ-OR-033): it follows
the agent's shell across Bash calls, keeps ``input/`` read-only, follows links the agent made, and
denies when it cannot decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.agents.bash_policy import BashPolicy
from engine.agents.claude.hooks import CallHooks

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "agents" / "call"
    (work / "input").mkdir(parents=True)
    (work / "input" / "train.csv").write_text("a,b\n1,2\n")
    return work


def _decision(reply: dict) -> str | None:
    return (reply.get("hookSpecificOutput") or {}).get("permissionDecision")


async def _bash(hooks: CallHooks, command: str) -> str | None:
    return _decision(await hooks.pre_tool_use({"tool_name": "Bash", "tool_input": {"command": command}}, "t", {}))


async def test_cd_carries_over_between_bash_calls_so_a_later_rm_is_judged_where_it_runs(work):
    hooks = CallHooks("coder", "e", BashPolicy(work))
    assert await _bash(hooks, "cd input") is None
    assert await _bash(hooks, "rm train.csv") == "deny"  # it would delete input/train.csv
    assert (work / "input" / "train.csv").exists()


async def test_a_shell_that_left_the_working_directory_is_put_back(work):
    hooks = CallHooks("coder", "e", BashPolicy(work))
    assert await _bash(hooks, "cd /etc") is None
    assert hooks.shell_cwd == work  # the CLI resets a shell that leaves the project; so do we
    assert await _bash(hooks, "rm -f scratch.txt") is None


def test_the_task_data_in_input_is_read_only(work):
    policy = BashPolicy(work)
    for command in ("rm input/train.csv", "echo x > input/train.csv", "mv a.csv input/", "sed -i s/1/2/ input/train.csv"):
        assert policy.check_bash(command), command


def test_writes_through_a_link_the_agent_made_are_judged_where_they_land(work, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (work / "link").symlink_to(outside)
    assert BashPolicy(work).check_bash("echo x > link/file.txt")
    assert BashPolicy(work).check_tool("Write", {"file_path": str(work / "link" / "f.py")})


def test_find_delete_and_exec_name_their_start_as_a_write_target(work):
    policy = BashPolicy(work)
    assert policy.check_bash("find / -name '*.csv' -delete")
    assert policy.check_bash("find .. -exec rm {} +")
    assert policy.check_bash("find ./cache -delete") is None


def test_read_tools_stay_in_the_working_directory_and_the_task_data(work, tmp_path):
    answers = tmp_path / "private" / "answers.csv"
    answers.parent.mkdir()
    answers.write_text("id,y\n")
    policy = BashPolicy(work)
    assert policy.check_tool("Read", {"file_path": str(answers)})
    assert policy.check_tool("Read", {"file_path": "../../private/answers.csv"})
    assert policy.check_tool("Grep", {"path": "/", "pattern": "y"})
    assert policy.check_tool("Read", {"file_path": "input/train.csv"}) is None


async def test_a_check_that_raises_denies(work):
    class Broken(BashPolicy):
        def check_tool(self, *args, **kwargs):
            raise RuntimeError("boom")

    hooks = CallHooks("coder", "e", Broken(work))
    reply = await hooks.pre_tool_use({"tool_name": "Bash", "tool_input": {"command": "ls"}}, "t", {})
    assert _decision(reply) == "deny" and "could not decide" in reply["hookSpecificOutput"]["permissionDecisionReason"]


async def test_req_or_034_past_the_time_limit_the_agent_is_asked_to_stop(work):
    hooks = CallHooks("coder", "e", BashPolicy(work), time_limit_s=0.0)
    reply = await hooks.post_tool_use({"tool_name": "Bash", "tool_response": {"stdout": "ok"}}, "t", {})
    assert reply["continue_"] is False and "deadline" in reply["stopReason"] and hooks.stopped_for_deadline
    calm = CallHooks("coder", "e", BashPolicy(work), time_limit_s=3600)
    assert await calm.post_tool_use({"tool_name": "Bash", "tool_response": {"stdout": "ok"}}, "t", {}) == {}
