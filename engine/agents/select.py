"""Choosing the agent backend by name: ``claude``, ``builtin``, ``replay``, ``auto`` or a dotted
``package.module:Attr`` (a class or factory; how tests plug in their own backends).

``replay:<source>`` is short for ``replay`` with that ``replay_source``.
``auto`` picks ``claude`` when SDK credentials are present, else ``openai`` when
``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set, else ``builtin``, and says which and why in
one line (REQ-OR-046). The choice is never silent: the CLI prints that line, the library logs
it, and the run's log records it (``AgentSelected``, ``selection_event``; in ``--json`` output
as ``agent_selection``). Backends living in other modules are imported
lazily, so choosing ``builtin`` never imports the SDK and vice versa.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.agents.base import AgentBackend
from engine.agents.errors import BackendUnavailable
from engine.agents.secrets import detect_credentials
from events.core import AgentSelected
from events.domain import PipelineConfig
from events.module_aliases import current_module

BACKEND_NAMES = ("claude", "openai", "builtin", "replay", "auto")


@dataclass(frozen=True)
class BackendChoice:
    backend: AgentBackend
    name: str          # the backend actually chosen (``auto`` resolves to claude or builtin)
    explanation: str   # one line for the user


def _construct(factory: Callable[..., Any], **available: Any) -> Any:
    """Call ``factory`` with the keyword arguments it accepts among ``available``.

    Lets backends written by different people take only what they need (``config``,
    ``replay_source``, ``env``) without a shared constructor signature.
    """
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return factory(**available)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return factory(**available)
    kwargs = {k: v for k, v in available.items() if k in params}
    positional = [
        p for p in params.values()
        if p.name not in kwargs and p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if positional and available.get("replay_source") is not None and len(positional) == 1:
        return factory(available["replay_source"], **kwargs)  # e.g. ReplayBackend(source)
    return factory(**kwargs)


def _load_dotted(path: str) -> Callable[..., Any]:
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise BackendUnavailable(f"backend {path!r}: expected 'package.module:Attribute'")
    try:
        target: Any = importlib.import_module(current_module(module_name))  # a name recorded before a move
    except ImportError as exc:
        raise BackendUnavailable(f"backend {path!r}: cannot import {module_name}: {exc}") from exc
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise BackendUnavailable(f"backend {path!r}: {module_name} has no attribute {attr!r}") from None
    if not callable(target):
        raise BackendUnavailable(f"backend {path!r} is not a class or factory")
    return target


def _builtin(config: PipelineConfig, replay_source: Any) -> AgentBackend:
    from engine.agents.builtin import BuiltinBackend

    return _construct(BuiltinBackend, config=config, replay_source=replay_source)


def select_backend(
    name: str,
    *,
    config: PipelineConfig,
    replay_source: Any = None,
    env: Mapping[str, str] | None = None,
) -> BackendChoice:
    env = os.environ if env is None else env
    if name.startswith("replay:"):  # the CLI's ``--agent replay:<run-id>`` spelling
        name, replay_source = "replay", replay_source if replay_source is not None else name.split(":", 1)[1]
    if name == "auto":
        credential = detect_credentials(env)
        if credential is not None:
            choice = select_backend("claude", config=config, env=env)
            return BackendChoice(choice.backend, "claude", f"backend: claude (auto: {credential} is set)")
        openai_var = next((v for v in ("OPENAI_API_KEY", "OPENAI_BASE_URL") if (env.get(v) or "").strip()), None)
        if openai_var is not None:
            choice = select_backend("openai", config=config, env=env)
            return BackendChoice(choice.backend, "openai",
                                 f"{choice.explanation[:-1]}; auto: no Claude credentials, {openai_var} is set)")
        return BackendChoice(_builtin(config, replay_source), "builtin",
                             "backend: builtin (auto: no Claude credentials found and no OPENAI_API_KEY / OPENAI_BASE_URL; "
                             "offline scikit-learn agent)")
    if name == "claude":
        from engine.agents.claude.backend import ClaudeBackend

        claude = ClaudeBackend(config, env=env)  # raises BackendUnavailable without credentials
        return BackendChoice(claude, "claude", f"backend: claude (model {claude.model}, auth via {claude.credential})")
    if name == "openai":
        from engine.agents.openai.backend import OpenAIBackend

        openai = OpenAIBackend(config, env=env)  # raises BackendUnavailable without an endpoint or model
        return BackendChoice(openai, "openai", openai.describe())
    if name == "builtin":
        return BackendChoice(_builtin(config, replay_source), "builtin", "backend: builtin (offline scikit-learn agent)")
    if name == "replay":
        if replay_source is None:
            raise BackendUnavailable("the replay backend needs a recorded run to replay (replay_source)")
        from engine.agents.recorded import ReplayBackend

        return BackendChoice(_construct(ReplayBackend, config=config, replay_source=replay_source), "replay",
                             "backend: replay (answers from a recorded run)")
    if ":" in name:
        backend = _construct(_load_dotted(name), config=config, replay_source=replay_source)
        if not isinstance(backend, AgentBackend):
            raise BackendUnavailable(f"backend {name!r} does not provide an async call(request, ctx)")
        return BackendChoice(backend, getattr(backend, "name", name), f"backend: {name}")
    raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(BACKEND_NAMES)} or package.module:Attr")


def selection_event(backend: Any, requested: str) -> AgentSelected:
    """What to record about the choice (``AgentSelected``): asked for, chosen, and why. Reads
    what ``engine.run.lifecycle.make_backend`` put on the backend (``record_name``,
    ``selection_note``), so a backend made elsewhere is still named."""
    chosen = str(getattr(backend, "record_name", None) or getattr(backend, "name", None) or requested)
    reason = str(getattr(backend, "selection_note", None) or f"backend: {chosen}")
    return AgentSelected(requested=requested, chosen=chosen, reason=reason)


def make_backend(name: str, *, config: PipelineConfig, replay_source: Any = None,
                 env: Mapping[str, str] | None = None) -> AgentBackend:
    return select_backend(name, config=config, replay_source=replay_source, env=env).backend
