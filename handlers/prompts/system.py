"""REQ-OR-007: the system prompt every agent call shares (persona, task, metric, hardware)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from events.enums import MetricDirection
from events.values import TaskDescription

PERSONA = (
    "You are a Kaggle grandmaster: an expert in machine learning, data science and competitive "
    "data analysis. You work methodically, write clean, efficient and well-tested code, and you "
    "check every solution on held-out training data before it is submitted."
)


def describe_gpus(gpu_info: Mapping[str, Any] | None) -> str:
    """One sentence about the hardware (REQ-EX-003 keys: cuda_available, gpu_count, gpu_names)."""
    info = dict(gpu_info or {})
    count = int(info.get("gpu_count") or 0)
    if not info.get("cuda_available") or count <= 0:
        return "No GPU is available: write code that runs well on CPU."
    names = [str(n) for n in info.get("gpu_names") or []]
    named = f" ({', '.join(names)})" if names else ""
    return f"{count} CUDA GPU{'s' if count != 1 else ''} available{named}: use them where it helps."


def render_system_prompt(task: TaskDescription, gpu_info: Mapping[str, Any] | None) -> str:
    better = "higher" if task.metric_direction == MetricDirection.maximize else "lower"
    return (
        f"{PERSONA}\n\n"
        f"# Competition: {task.competition_id}\n"
        f"Task type: {task.task_type.value}; data modality: {task.data_modality.value}.\n"
        f"Evaluation metric: {task.evaluation_metric} ({task.metric_direction.value}: {better} is better).\n"
        f"Data directory: {task.data_dir}; submissions go to {task.output_dir}.\n\n"
        f"# Task description\n{task.description}\n\n"
        f"# Hardware\n{describe_gpus(gpu_info)}\n"
    )
