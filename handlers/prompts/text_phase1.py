"""Phase 1 prompts (Algorithm 1): retrieval (Fig 9), first drafts (Fig 10), merging (Fig 11).

Our own wording of what each paper figure asks for; variable names follow the spec-01 table.
"""

from __future__ import annotations

from events.enums import AgentType
from handlers.prompts.fragments import CODE_ANSWER, SCRIPT_RULES
from handlers.prompts.template import PromptTemplate

RETRIEVER = PromptTemplate(
    agent_type=AgentType.retriever,
    figure_ref="Figure 9",
    variables=["task_description", "M"],
    template=(
        "We are entering a machine-learning competition. Here is its description:\n\n"
        "<task>\n{task_description}\n</task>\n\n"
        "Search for {M} model families that recent, strong solutions to this kind of task use. "
        "Favour approaches that are current and proven on similar data over famous older ones.\n\n"
        "For every model give a short, runnable Python example of how to train it and predict with "
        "it (real code, not a link to a paper or a repository), small enough to adapt quickly.\n\n"
        "Return a JSON object with a `models` list of exactly {M} entries, each shaped like "
        '{"model_name": "<name>", "example_code": "<python code>"}.'
    ),
)

INIT = PromptTemplate(
    agent_type=AgentType.init,
    figure_ref="Figure 10",
    variables=["task_description", "model_name", "example_code"],
    template=(
        "We are entering a machine-learning competition. Here is its description:\n\n"
        "<task>\n{task_description}\n</task>\n\n"
        "Write a first, simple solution that uses exactly one model: {model_name}.\n"
        "Here is example code showing how that model is used:\n\n"
        "```python\n{example_code}\n```\n\n"
        "Keep it plain: no ensembles of several models and no hyperparameter search; a sensible "
        "default configuration is what we want at this stage. Pick an evaluation metric that "
        "matches the competition's.\n\n"
        + SCRIPT_RULES
        + "\n"
        + CODE_ANSWER
    ),
)

MERGER = PromptTemplate(
    agent_type=AgentType.merger,
    figure_ref="Figure 11",
    variables=["base_code", "reference_code"],
    template=(
        "You have two working solutions to the same competition. Merge the reference solution into "
        "the base solution.\n\n"
        "# Base solution\n```python\n{base_code}\n```\n\n"
        "# Reference solution\n```python\n{reference_code}\n```\n\n"
        "How to merge:\n"
        "- The base solution stays the skeleton; bring the reference solution's model (and any "
        "preprocessing it needs) into it and train it as well.\n"
        "- Keep code that does the same job in one place rather than duplicating it.\n"
        "- Combine the models' validation predictions with a simple ensemble, such as an average, "
        "and report the ensemble's validation score.\n"
        "- Keep the same data loading, validation split and subsampling as the base solution.\n\n"
        + SCRIPT_RULES
        + "\n"
        + CODE_ANSWER
    ),
)

TEMPLATES: tuple[PromptTemplate, ...] = (RETRIEVER, INIT, MERGER)
