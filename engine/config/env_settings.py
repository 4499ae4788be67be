"""REQ-OR-046: settings from ``MLE_STAR_*`` environment variables.

| variable              | setting             | example |
|-----------------------|---------------------|---------|
| ``MLE_STAR_MODEL``      | ``model``             | opus    |
| ``MLE_STAR_LOG_LEVEL``  | ``log_level``         | DEBUG   |
| ``MLE_STAR_MAX_BUDGET`` | ``max_budget_usd``    | 10.5    |
| ``MLE_STAR_TIME_LIMIT`` | ``time_limit_seconds``| 3600    |
| ``MLE_STAR_EVAL_ENV_PASS`` | ``eval_env_pass`` | HF_HOME,WANDB_MODE |

Precedence, lowest first: built-in defaults < ``--preset`` < environment < ``--config`` file <
``--time-limit``/``--max-budget`` flags < ``--set``. In the library (``engine.api``) the
environment fills every field the caller's ``PipelineConfig`` did not set explicitly (the
spec's "env over defaults, explicit constructor arguments over env").

An empty variable counts as unset. A value that does not parse is an error naming the
variable, never silently ignored. ``ANTHROPIC_API_KEY`` is not read here: the Claude backend
checks its credentials itself (the offline ``builtin`` backend needs none).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from events.domain import PipelineConfig

ENV_SETTINGS: dict[str, tuple[str, type]] = {
    "MLE_STAR_MODEL": ("model", str),
    "MLE_STAR_LOG_LEVEL": ("log_level", str),
    "MLE_STAR_MAX_BUDGET": ("max_budget_usd", float),
    "MLE_STAR_TIME_LIMIT": ("time_limit_seconds", int),
    "MLE_STAR_EVAL_ENV_PASS": ("eval_env_pass", str),  # names, comma-separated (events/config.py)
}


class EnvConfigError(ValueError):
    """An ``MLE_STAR_*`` variable holds a value that cannot be used."""


def env_overrides(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings the environment asks for, parsed (but not yet validated together)."""
    environ = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    for var, (field, kind) in ENV_SETTINGS.items():
        raw = environ.get(var, "").strip()
        if not raw:
            continue
        if kind is str:
            out[field] = raw.upper() if field == "log_level" else raw
            continue
        try:
            number = float(raw)
        except ValueError:
            raise EnvConfigError(f"{var}={raw!r}: expected a number ({field})") from None
        if kind is int and not number.is_integer():
            raise EnvConfigError(f"{var}={raw!r}: expected a whole number of seconds")
        out[field] = int(number) if kind is int else number
    if out:
        try:
            PipelineConfig(**out)
        except ValidationError as exc:
            var_of = {f: v for v, (f, _) in ENV_SETTINGS.items()}
            problems = "; ".join(f"{var_of.get(str(e['loc'][0]), e['loc'][0])}={e.get('input')!r}: {e['msg']}"
                                 for e in exc.errors())
            raise EnvConfigError(f"invalid setting from the environment: {problems}") from None
    return out


def apply_env(config: PipelineConfig, environ: Mapping[str, str] | None = None) -> PipelineConfig:
    """Library precedence: env values for the fields ``config`` did not set explicitly."""
    overrides = {k: v for k, v in env_overrides(environ).items() if k not in config.model_fields_set}
    if not overrides:
        return config
    return PipelineConfig(**{**config.model_dump(exclude_unset=True), **overrides})
