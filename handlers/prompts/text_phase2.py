"""Phase 2 prompts (Algorithm 2): ablation (Fig 12), summary (Fig 13), block extraction
(Fig 14), block rewriting (Fig 15) and the next plan (Fig 16). Our own wording."""

from __future__ import annotations

from events.enums import AgentType
from handlers.prompts.fragments import BLOCK_ANSWER, KEEP_SUBSAMPLING, NO_DUMMY_VARIABLES, SCORE_LINE
from handlers.prompts.template import PromptTemplate

ABLATION = PromptTemplate(
    agent_type=AgentType.ablation,
    figure_ref="Figure 12",
    variables=["solution_script", "previous_ablations"],
    derive="ablation_history",
    template=(
        "Below is our current solution to a machine-learning competition.\n\n"
        "# Current solution\n```python\n{solution_script}\n```\n\n"
        "{previous_ablations}"
        "Write an ablation study for this solution: a Python script that contains the solution's "
        "own logic (there is no separate file to import) and runs it several times, each time "
        "changing or switching off one of two or three of its components (for example a "
        "preprocessing step, a feature, a model setting). Prefer components that earlier studies "
        "have not examined yet.\n\n"
        "The script must:\n"
        "- compute the validation score of the unchanged solution and of every variant, printing "
        "each with a clear label;\n"
        "- finish by printing which component changed the score the most;\n"
        "- use only the training data from `./input` (never load or touch the test data);\n"
        "- keep the solution's subsampling so it runs quickly.\n\n"
        "Reply with the Python code only, in one fenced code block, without headings or other text."
    ),
)

SUMMARIZE = PromptTemplate(
    agent_type=AgentType.summarize,
    figure_ref="Figure 13",
    variables=["ablation_code", "raw_result"],
    template=(
        "An ablation study was run on our solution. Here is its code:\n\n"
        "```python\n{ablation_code}\n```\n\n"
        "and here is what it printed:\n\n"
        "```\n{raw_result}\n```\n\n"
        "Summarise the result: which components were varied, the score of each variant compared "
        "with the unchanged solution, and which component matters most for performance. Be "
        "concise and factual; state the numbers you rely on."
    ),
)

EXTRACTOR = PromptTemplate(
    agent_type=AgentType.extractor,
    figure_ref="Figure 14",
    variables=["solution_script", "ablation_summary", "previous_code_blocks"],
    derive="improved_blocks",
    template=(
        "We want to improve our solution by rewriting one code block of it.\n\n"
        "# Current solution\n```python\n{solution_script}\n```\n\n"
        "# What the latest ablation study found\n{ablation_summary}\n\n"
        "{previous_code_blocks}"
        "Choose the code block whose improvement promises the largest gain, guided by the ablation "
        "study, and preferably one that has not been improved before. Propose a concrete plan of "
        "three to five sentences for improving it. Avoid plans that would make the script run for "
        "very long (such as a large hyperparameter search).\n\n"
        "The code block must be copied exactly, character for character, from the current "
        "solution, because it will be located by exact text match.\n\n"
        "Return a JSON object with a `plans` list; each entry is shaped like "
        '{"code_block": "<exact code copied from the solution>", "plan": "<three to five sentences>"}. '
        "Put the most promising entry first."
    ),
)

CODER = PromptTemplate(
    agent_type=AgentType.coder,
    figure_ref="Figure 15",
    variables=["code_block", "plan"],
    template=(
        "Rewrite the following code block of a machine-learning solution according to the plan.\n\n"
        "# Code block\n```python\n{code_block}\n```\n\n"
        "# Plan\n{plan}\n\n"
        "Implement the plan within this block only.\n"
        + KEEP_SUBSAMPLING
        + "\n"
        + NO_DUMMY_VARIABLES
        + "\n\n"
        + BLOCK_ANSWER
    ),
)

PLANNER = PromptTemplate(
    agent_type=AgentType.planner,
    figure_ref="Figure 16",
    variables=["code_block", "plans", "scores"],
    derive="plan_history",
    template=(
        "We are improving one code block of a machine-learning solution.\n\n"
        "# Code block\n```python\n{code_block}\n```\n\n"
        "{plan_history}\n"
        "Each plan above was applied to the original block and the whole solution was scored "
        "(the score is the validation metric the solution prints as `"
        + SCORE_LINE
        + "`).\n\n"
        "Propose a new plan for this block that differs from every plan tried so far and that you "
        "expect to beat their scores. Keep it practical: no plans that need a very long run, such "
        "as a wide hyperparameter search.\n\n"
        "Answer with the plan alone, in three to five sentences of plain prose, without headings."
    ),
)

TEMPLATES: tuple[PromptTemplate, ...] = (ABLATION, SUMMARIZE, EXTRACTOR, CODER, PLANNER)
