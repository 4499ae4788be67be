"""Building a PipelineConfig from presets, a config file and ``--set key=value`` overrides."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from engine.config.env_settings import EnvConfigError, env_overrides
from events.domain import PipelineConfig

# Every preset: an evaluation that runs alone by design uses the run's every evaluation core
# (PipelineConfig.lone_evaluations_use_all_cores); a config without it keeps one core per script.
_ENGINE = {"lone_evaluations_use_all_cores": True}

PRESETS: dict[str, dict[str, Any]] = {
    # REQ-OR-044: the paper's settings.
    "paper": {"num_retrieved_models": 4, "outer_loop_steps": 4, "inner_loop_steps": 4,
              "num_parallel_solutions": 2, "ensemble_rounds": 5, **_ENGINE},
    # Small enough for demos and tests, still exercising every phase and both paths.
    "quick": {"num_retrieved_models": 2, "outer_loop_steps": 1, "inner_loop_steps": 2,
              "num_parallel_solutions": 2, "ensemble_rounds": 2, "max_steps": 12,
              "phase1_target_nodes": 3, **_ENGINE},
    # Anytime (issue 28): the time plan, not step counts, decides how many candidates, outer and
    # inner refinement steps, ensemble rounds and evolve nodes run; the counts are upper bounds
    # (handlers.step_policy). Meant with --time-limit: without one the limit is 24 h. The outer
    # steps' and the ensemble rounds' bounds are far from binding on purpose: a bound low enough
    # to be reached (20) runs out on a task whose attempts take a second each and leaves much of
    # a long run's limit unused. A planner with no further plan ends Phase 3 instead (phase3.py).
    # A refinement or merge replaces its incumbent only when it wins by more than one standard
    # error of the validation noise (PipelineConfig.noise_margin_se): in a long run the many wins
    # by a hair on the same folds select the luckiest of near-equals, which grade worse.
    "time": {"step_policy": "time", "noise_margin_se": 1.0, "num_retrieved_models": 8, "outer_loop_steps": 100, "inner_loop_steps": 4,
             "num_parallel_solutions": 2, "ensemble_rounds": 100, "max_steps": 1000, **_ENGINE},
}


class ConfigError(ValueError):
    """A configuration the user gave is wrong; the message says what and how to fix it."""


def _parse_value(raw: str) -> Any:
    """``--set`` values are YAML scalars: 3, 0.5, true, null, sonnet, {"a": 1}."""
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    fields = PipelineConfig.model_fields
    for pair in pairs:
        if "=" not in pair:
            raise ConfigError(f"--set {pair!r}: expected key=value, e.g. --set outer_loop_steps=2")
        key, raw = pair.split("=", 1)
        key = key.strip()
        if key not in fields:
            close = [f for f in fields if key.split("_")[0] in f][:5]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ConfigError(f"--set {key}: no such setting{hint}; settings are: {', '.join(fields)}")
        out[key] = _parse_value(raw)
    return out


def load_config_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"--config {path}: no such file")
    try:
        data = yaml.safe_load(path.read_text()) if path.suffix in (".yaml", ".yml") else json.loads(path.read_text())
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise ConfigError(f"--config {path}: cannot parse ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"--config {path}: expected a mapping of setting names to values")
    return data


def build_config(*, preset: str = "paper", config_file: Path | None = None, overrides: list[str] | None = None,
                 extra: dict[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> PipelineConfig:
    if preset not in PRESETS:
        raise ConfigError(f"--preset {preset}: unknown preset; choose one of {', '.join(PRESETS)}")
    values: dict[str, Any] = dict(PRESETS[preset])
    # REQ-OR-046: preset < MLE_STAR_* environment < config file < flags (extra) < --set.
    try:
        values.update(env_overrides(environ))
    except EnvConfigError as exc:
        raise ConfigError(str(exc)) from None
    if config_file is not None:
        values.update(load_config_file(config_file))
    values.update({k: v for k, v in (extra or {}).items() if v is not None})
    values.update(parse_overrides(overrides or []))
    try:
        return PipelineConfig(**values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in err['loc']) or 'config'}: {err['msg']} (got {err.get('input')!r})"
            for err in exc.errors()
        )
        raise ConfigError(f"invalid configuration: {problems}") from None
