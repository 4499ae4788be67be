"""The closed vocabularies of the domain (spec 01): task types, data modalities, metric
directions, solution phases, code-block categories and the agent roles."""

from __future__ import annotations

from enum import Enum


class TaskType(str, Enum):
    """REQ-DM-004."""

    classification = "classification"
    regression = "regression"
    image_classification = "image_classification"
    image_to_image = "image_to_image"
    text_classification = "text_classification"
    audio_classification = "audio_classification"
    sequence_to_sequence = "sequence_to_sequence"
    tabular = "tabular"


class DataModality(str, Enum):
    """REQ-DM-005."""

    tabular = "tabular"
    image = "image"
    text = "text"
    audio = "audio"
    mixed = "mixed"


class MetricDirection(str, Enum):
    """REQ-DM-006."""

    maximize = "maximize"
    minimize = "minimize"


class SolutionPhase(str, Enum):
    """REQ-DM-008."""

    init = "init"
    merged = "merged"
    refined = "refined"
    ensemble = "ensemble"
    final = "final"


class CodeBlockCategory(str, Enum):
    """REQ-DM-011."""

    preprocessing = "preprocessing"
    feature_engineering = "feature_engineering"
    model_selection = "model_selection"
    training = "training"
    hyperparameter_tuning = "hyperparameter_tuning"
    ensemble = "ensemble"
    postprocessing = "postprocessing"
    other = "other"


class AgentType(str, Enum):
    """REQ-DM-013: the fourteen MLE-STAR agent roles."""

    retriever = "retriever"
    init = "init"
    merger = "merger"
    ablation = "ablation"
    summarize = "summarize"
    extractor = "extractor"
    coder = "coder"
    planner = "planner"
    ens_planner = "ens_planner"
    ensembler = "ensembler"
    debugger = "debugger"
    leakage = "leakage"
    data = "data"
    test = "test"


__all__ = ["AgentType", "CodeBlockCategory", "DataModality", "MetricDirection", "SolutionPhase", "TaskType"]
