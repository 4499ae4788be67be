"""How one agent call's CLI is started: the launch script the SDK runs as ``cli_path``.

    launch script → reaper.py (dies with the engine; only the allowed variables)
                  → [bwrap sandbox → relay_bridge.py (loopback → the API relay)] → claude CLI

With a sandbox (``--sandbox auto`` where bubblewrap works, or ``bwrap``) the CLI, and so every
tool the agent runs, sees its working directory (writable), the task's public data read-only at
``./input``, its own home and the system prompt file, the Python environment and the system
read-only — not the private answers, other runs, the engine's database or the host's home. It
has no network: it reaches its model through the API relay (``relay.py``), which holds the
key outside the sandbox and meters every request against the call's cap: each try of a call
gets its own relay socket (``open_call``), bound into its sandbox only. Where the relay cannot carry the traffic (Bedrock/Vertex sign their own
requests; a configured HTTP proxy) the sandbox keeps the host network and the credentials are
passed by name, never written into a command line or a file. As root the CLI runs as an
unprivileged uid inside the sandbox (which is also why ``bypassPermissions`` works there).

Without a sandbox (``--sandbox none``, explicitly) the CLI runs as a host process; the hooks
are then the only guard.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.agents.claude.reading import MeterReading
from engine.agents.claude.relay import PLACEHOLDER_KEY, ApiRelay, RelayedCall, relay_supported
from engine.agents.claude.setup import cli_environment, kept_variables, write_launch_script
from engine.agents.errors import BackendUnavailable
from engine.agents.secrets import CREDENTIAL_VARS
from events.domain import ModelPrice
from events.sandbox import NetworkMode

BRIDGE = Path(__file__).with_name("relay_bridge.py")
BRIDGE_PORT = 38443  # inside the sandbox's own network namespace: nothing else listens there


def resolve_agent_sandbox(requested: str) -> str:
    """``bwrap`` or ``none`` for the claude backend, which never runs unsandboxed by accident."""
    from engine.sandbox import SandboxUnavailable, bwrap_problem, resolve_mode

    try:
        mode = resolve_mode(requested)
    except SandboxUnavailable as exc:
        raise BackendUnavailable(str(exc)) from None
    if mode == "none" and requested != "none":
        raise BackendUnavailable(
            f"the claude backend runs code an LLM writes and needs a sandbox, but {bwrap_problem()}; "
            "or pass --sandbox none to run it unsandboxed")
    return mode


class AgentLauncher:
    """Builds launch scripts for one backend; owns the API relay while it is needed."""

    def __init__(self, source_env: Mapping[str, str], *, mode: str, cli: str,
                 prices: Mapping[str, ModelPrice] | None = None) -> None:
        self.mode = mode
        self.cli = cli
        self._source = dict(source_env)
        self._prices = dict(prices or {})
        self.relay_problem = relay_supported(self._source) if mode == "bwrap" else "no sandbox"
        self._relay: ApiRelay | None = None
        self._calls: dict[str, RelayedCall] = {}

    @property
    def network(self) -> NetworkMode:
        return "none" if self.mode == "bwrap" and self.relay_problem is None else "host"

    @property
    def metered(self) -> bool:
        """Whether the relay meters the calls (the CLI's own reported cost is used otherwise)."""
        return self.network == "none"

    def relay(self) -> ApiRelay:
        if self._relay is None:
            self._relay = ApiRelay(self._source, prices=self._prices)
        return self._relay

    def open_call(self, tag: str, cap_usd: float | None) -> None:
        """Before the launch script of ``tag``: its relay socket, metered against ``cap_usd``."""
        if self.metered:
            self._calls[tag] = self.relay().open_call(tag, cap_usd)

    def close_call(self, tag: str) -> MeterReading | None:
        """After the try ``tag`` ended: what the relay metered (None: not metered, or closed)."""
        call = self._calls.pop(tag, None)
        return call.close() if call is not None else None

    def close(self) -> None:
        for tag in list(self._calls):
            self.close_call(tag)
        if self._relay is not None:
            self._relay.close()
            self._relay = None

    def script(self, *, work_dir: Path, private: Path, tag: str, task_dir: Path | None,
               prompt_file: Path | None, protected: list[str], overrides: Mapping[str, str] | None = None,
               ) -> tuple[str, dict[str, str], Any]:
        """(launch script path, the CLI's environment, the sandbox policy or None). ``overrides``
        change the CLI's settings for this call (e.g. no retries for the start-up check)."""
        home = private / "homes" / tag
        env = {**cli_environment(self._source, config_dir=home / "config", home=home), **(overrides or {})}
        from engine.sandbox import Sandbox, agent_policy, build_policy

        if self.mode != "bwrap":  # recorded too: the log then shows this agent ran unsandboxed
            path = write_launch_script(private / "launch" / f"{tag}.sh", cli=self.cli, kept=kept_variables(env))
            return str(path), env, build_policy("none", cwd=work_dir, network="host")

        secrets = [n for n in CREDENTIAL_VARS if n in env]
        inner_env = {k: v for k, v in env.items() if k not in secrets}
        sockets: list[str] = []
        command = [self.cli]
        if self.network == "none":
            if tag not in self._calls:  # no call in flight, no way out: a launch must open its call first
                raise RuntimeError(f"no relay socket open for the agent call {tag!r}")
            socket_path = self._calls[tag].socket_path
            sockets.append(socket_path)
            inner_env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{BRIDGE_PORT}"
            inner_env["ANTHROPIC_API_KEY"] = PLACEHOLDER_KEY
            # By source, not path: the engine's own files are not visible in the sandbox.
            command = [sys.executable, "-I", "-S", "-c", BRIDGE.read_text(encoding="utf-8"), str(BRIDGE_PORT),
                       socket_path, "--", self.cli]
            secrets = []
        read_only = [str(p) for p in (prompt_file,) if p is not None]
        policy = agent_policy("bwrap", work_dir=work_dir, public_dir=task_dir, read_only=read_only,
                              writable=[str(home)], sockets=sockets, network=self.network,
                              protected=protected, key=tag)
        sdk_names = [n for n in kept_variables({}) if n not in inner_env]
        argv = Sandbox(policy).command(command, cwd=work_dir, env=inner_env, pass_env=[*secrets, *sdk_names])
        # The launch script ends with the CLI: its arguments ("$@") follow the sandboxed command.
        path = write_launch_script(private / "launch" / f"{tag}.sh", cli=argv[-1], prefix=argv[:-1],
                                   kept=kept_variables(dict.fromkeys(secrets, "")))
        return str(path), env, policy


def protected_paths(run_dir: Path, task_dir: Path | None) -> list[str]:
    """What an agent must never see: the task's private answers and the runs' database."""
    from engine.sandbox import private_answers_of

    paths = private_answers_of(task_dir) if task_dir is not None else []
    database = os.environ.get("ENGINE_DB")
    for candidate in (run_dir.parent / "engine.db", Path(database) if database else None):
        if candidate is not None and candidate.exists():
            paths.append(str(candidate.resolve()))
    return paths
