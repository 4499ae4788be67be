"""The prompts of the 14 MLE-STAR roles, rendered inside handlers so every prompt is logged.

Pure: no I/O, no clock, no environment. Public API:

* ``PromptTemplate`` / ``PromptRegistry`` / ``DEFAULT_REGISTRY`` (REQ-DM-030..035)
* ``build_request(agent_type, variables, *, effect_id, variant=None, session_key=None)``
* ``render_system_prompt(task, gpu_info)`` (REQ-OR-007)
* list formatters: ``format_plan_history``, ``format_ensemble_history``,
  ``format_previous_ablations``, ``format_previous_code_blocks``, ``format_solutions``
* code extraction: ``extract_code_block``, ``longest_fenced_block`` (REQ-SF-005)
"""

from handlers.prompts.extract import extract_code_block, fenced_blocks, longest_fenced_block
from handlers.prompts.formatting import (
    FAILED_SCORE,
    format_ensemble_history,
    format_plan_history,
    format_previous_ablations,
    format_previous_code_blocks,
    format_score,
    format_solutions,
)
from handlers.prompts.registry import DEFAULT_REGISTRY, DEFAULT_VARIANTS, PromptRegistry
from handlers.prompts.requests import build_request
from handlers.prompts.system import render_system_prompt
from handlers.prompts.template import PromptTemplate
from handlers.prompts.text_safety import DATA_ALL_USED

__all__ = [
    "DATA_ALL_USED",
    "DEFAULT_REGISTRY",
    "DEFAULT_VARIANTS",
    "FAILED_SCORE",
    "PromptRegistry",
    "PromptTemplate",
    "build_request",
    "extract_code_block",
    "fenced_blocks",
    "format_ensemble_history",
    "format_plan_history",
    "format_previous_ablations",
    "format_previous_code_blocks",
    "format_score",
    "format_solutions",
    "longest_fenced_block",
    "render_system_prompt",
]
