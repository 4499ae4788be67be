"""Permission modes as the installed SDK and the real CLI know them (issue 14: works as root with
default settings; every mode the SDK accepts is accepted). REQ-OR-009."""

from __future__ import annotations

import os
import typing

import anyio
import pytest

from engine.agents.claude.backend import ClaudeBackend
from engine.agents.claude.setup import DEFAULT_PERMISSION_MODE, PERMISSION_MODES
from engine.agents.errors import BackendUnavailable
from events.core import AgentCallCompleted
from events.domain import PipelineConfig
from handlers.prompts import build_request
from tests.claude_cli.conftest import FAKE_KEY, MODEL
from tests.claude_cli.test_claude_failures import _ctx
from tests.support.canned_model import CannedModel

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def test_every_mode_of_the_installed_sdk_is_accepted_and_no_other():
    from claude_agent_sdk.types import PermissionMode

    assert set(PERMISSION_MODES) == set(typing.get_args(PermissionMode))
    for mode in PERMISSION_MODES:
        assert PipelineConfig(permission_mode=mode).permission_mode == mode
    with pytest.raises(ValueError, match="permission_mode"):
        PipelineConfig(permission_mode="yolo")
    assert PipelineConfig().permission_mode == DEFAULT_PERMISSION_MODE == "dontAsk"


@pytest.mark.skipif(not ROOT, reason="the CLI refuses bypassPermissions only under root")
def test_bypass_permissions_unsandboxed_under_root_is_refused_at_start_with_what_to_do():
    env = {"ANTHROPIC_API_KEY": FAKE_KEY, "PATH": os.environ["PATH"]}
    with pytest.raises(BackendUnavailable, match="refuses it under root.*dontAsk"):
        ClaudeBackend(PipelineConfig(permission_mode="bypassPermissions"), env=env, sandbox="none")


def test_bypass_permissions_works_in_the_sandbox_where_the_cli_is_not_root(tmp_path, stand_in):
    api = stand_in(CannedModel())
    env = {"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": api.url, "PATH": os.environ["PATH"]}
    backend = ClaudeBackend(PipelineConfig(permission_mode="bypassPermissions", model=MODEL), env=env)
    request = build_request("coder", {"code_block": "x = 1", "plan": "use x = 2"}, effect_id="phase2/path-0/t0/k0/coder")
    result = anyio.run(backend.call, request, _ctx(tmp_path))
    assert isinstance(result, AgentCallCompleted), result
