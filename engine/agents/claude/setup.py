"""How the Claude Code CLI is started for one agent call: environment, permissions, launch script.

* **Permissions.** Under root the CLI refuses ``--dangerously-skip-permissions``
  (``bypassPermissions``), and most users run us as root (containers, benchmark machines).
  The default is therefore ``dontAsk`` with the role's tools as the allow-list: the agent may
  use exactly its tools, without prompts, and anything else is refused — under any uid.
  ``bypassPermissions`` is accepted only where the CLI will accept it (not root, or inside
  our sandbox, where the CLI runs as an unprivileged user); otherwise the run stops at start
  with one line that says what to do.
* **Environment.** The CLI gets the variables it needs to reach its model (credentials, the
  endpoint, a cloud provider's settings, proxies and certificates) and ours: no telemetry or
  auto-update traffic, a bounded number of retries inside the CLI, and its own config directory
  (a user's ``~/.claude`` settings and hooks must not change what a run does). (The CLI's own
  ``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`` would hide the key from its tools, but it requires the
  CLI's own sandbox, which needs socat; our bwrap sandbox is what isolates the agent.)
* **Launch script.** The SDK starts ``cli_path`` directly, so each call gets a small script
  that execs our launcher (``reaper.py``: the CLI and every tool process die with the engine,
  and only the allowed variables get through), optionally inside the sandbox, then the CLI.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

from engine.agents.errors import BackendUnavailable
from engine.agents.secrets import CREDENTIAL_VARS, PROVIDER_FLAGS

if TYPE_CHECKING:  # the SDK is imported only where it is used
    from claude_agent_sdk.types import PermissionMode

#: Every permission mode of the installed SDK (``claude_agent_sdk.types.PermissionMode``; a test
#: keeps the two equal, so an SDK upgrade that adds one is noticed).
PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
DEFAULT_PERMISSION_MODE = "dontAsk"

#: Retries the CLI makes by itself on 429/5xx/dropped connections before it gives up a turn.
CLI_MAX_RETRIES = 2
#: How long the CLI waits for one API response before it counts as failed (ms).
CLI_REQUEST_TIMEOUT_MS = 120_000

# Variables the CLI needs to reach its model, passed through when set.
_PASS_THROUGH = (
    *CREDENTIAL_VARS, *PROVIDER_FLAGS,
    "ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_PROJECT_ID",
    "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
    "CLOUD_ML_REGION", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT",
    "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
    "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "PATH", "LANG", "LC_ALL", "TZ", "TERM",
)
# What the CLI must never change on its own: fixed by us whatever the user's environment says.
_FIXED = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": str(CLI_MAX_RETRIES),
    "API_TIMEOUT_MS": str(CLI_REQUEST_TIMEOUT_MS),
}
# Set by the SDK itself for the CLI; the launcher must let them through.
_SDK_SET = ("CLAUDE_CODE_ENTRYPOINT", "CLAUDE_AGENT_SDK_VERSION", "CLAUDE_CODE_SDK_READS_SESSION_STATE",
            "CLAUDE_AGENT_SDK_CLIENT_APP", "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING", "CLAUDE_CODE_STREAM_CLOSE_TIMEOUT")


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _known_permission_mode(mode: str) -> TypeGuard[PermissionMode]:
    return mode in PERMISSION_MODES


def check_permission_mode(mode: str, *, root: bool, cli_runs_unprivileged: bool) -> PermissionMode:
    """``mode``, or refuse, before anything is recorded, a mode the CLI would refuse on every call."""
    if not _known_permission_mode(mode):
        raise BackendUnavailable(f"permission_mode {mode!r} is not one the Claude SDK knows; "
                                 f"choose one of {', '.join(PERMISSION_MODES)}")
    if mode == "bypassPermissions" and root and not cli_runs_unprivileged:
        raise BackendUnavailable(
            "permission_mode bypassPermissions: the Claude CLI refuses it under root; use the default "
            f"({DEFAULT_PERMISSION_MODE}: the role's tools, no prompts) or run the agent in the bwrap sandbox")
    return mode


#: A comma-separated list of further variable names to hand to the CLI (a gateway's own settings).
PASS_ENV_VAR = "ENGINE_CLAUDE_PASS_ENV"


def cli_environment(source: Mapping[str, str], *, config_dir: Path, home: Path) -> dict[str, str]:
    """The CLI's whole environment: what it needs of ``source`` plus our fixed settings."""
    extra = [n.strip() for n in (source.get(PASS_ENV_VAR) or "").split(",") if n.strip()]
    env = {name: source[name] for name in (*_PASS_THROUGH, *extra) if source.get(name)}
    env.setdefault("PATH", os.defpath)
    env.update(_FIXED)
    env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    env["HOME"] = str(home)
    env["TMPDIR"] = str(home / "tmp")  # not the machine's shared /tmp
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def kept_variables(env: Mapping[str, str]) -> list[str]:
    return sorted({*env, *_SDK_SET})


def write_launch_script(path: Path, *, cli: str, kept: Sequence[str], prefix: Sequence[str] = ()) -> Path:
    """An executable script: launcher (engine pid baked in) → optional ``prefix`` (a sandbox) → CLI."""
    launcher = Path(__file__).with_name("reaper.py")
    argv = [sys.executable, "-I", "-S", str(launcher), str(os.getpid()), "--keep-env", ",".join(kept), "--",
            *prefix, cli]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(a) for a in argv) + ' "$@"\n', encoding="utf-8")
    path.chmod(stat.S_IRWXU)
    return path


def bundled_cli() -> str:
    """The CLI bundled in claude-agent-sdk, else ``claude`` on PATH (what the SDK itself would pick)."""
    import claude_agent_sdk

    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if bundled.is_file():
        return str(bundled)
    from shutil import which

    found = which("claude")
    if found is None:
        raise BackendUnavailable("the Claude Code CLI is not installed: claude-agent-sdk ships it in its wheel for "
                                 "Linux/macOS; reinstall claude-agent-sdk or put `claude` on PATH")
    return found
