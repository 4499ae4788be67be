"""Finalization prompts (spec 08), all under ``AgentType.test``: the test-submission script
(Fig 25, default variant), subsampling extraction and removal (Figs 26, 27) and the optional
contamination check (Fig 28). Our own wording."""

from __future__ import annotations

from events.enums import AgentType
from handlers.prompts.fragments import CODE_ANSWER, NO_DUMMY_VARIABLES
from handlers.prompts.template import PromptTemplate

TEST = PromptTemplate(
    agent_type=AgentType.test,
    figure_ref="Figure 25",
    variables=["task description", "final solution"],
    template=(
        "Here is the description of a machine-learning competition:\n\n"
        "<task>\n{task description}\n</task>\n\n"
        "and our best solution, which so far only reports a validation score:\n\n"
        "```python\n{final solution}\n```\n\n"
        "Turn it into a script that produces the competition submission, changing as little as "
        "possible:\n"
        "- Load the test data, which is in the `./input` directory (do not unzip anything).\n"
        "- Replace the validation data with the test data; you may train on the full training set "
        "instead of the training split.\n"
        "- Predict every test row; do not drop any.\n"
        "- Save the predictions to `./final/submission.csv` in the format of the sample "
        "submission. Do not forget this file.\n"
        "- Never call `exit()`, and do not use `try`/`except` or `if`/`else` to skip over "
        "failures.\n\n" + CODE_ANSWER
    ),
)

SUBSAMPLING_EXTRACT = PromptTemplate(
    agent_type=AgentType.test,
    variant="subsampling_extract",
    figure_ref="Figure 26",
    variables=["final solution"],
    template=(
        "This machine-learning script may reduce its training data to a subsample to run faster.\n\n"
        "```python\n{final solution}\n```\n\n"
        "Find the code block that subsamples the training data and copy it exactly, character for "
        "character, from the script; it will be located by exact text match. If the script does not "
        "subsample, answer with an empty code block.\n\n"
        "Answer with a single fenced Python code block and nothing else."
    ),
)

SUBSAMPLING_REMOVE = PromptTemplate(
    agent_type=AgentType.test,
    variant="subsampling_remove",
    figure_ref="Figure 27",
    variables=["code block with subsampling"],
    template=(
        "This code block from a machine-learning script subsamples the training data:\n\n"
        "```python\n{code block with subsampling}\n```\n\n"
        "Rewrite it so the full training set is used, keeping everything else it does.\n"
        + NO_DUMMY_VARIABLES
        + "\n\n"
        "Answer with a single fenced Python code block containing the rewritten block, and "
        "nothing else."
    ),
)

CONTAMINATION = PromptTemplate(
    agent_type=AgentType.test,
    variant="contamination",
    figure_ref="Figure 28",
    variables=["reference discussion", "final solution"],
    template=(
        "Here is a public discussion post from a machine-learning competition:\n\n"
        "<discussion>\n{reference discussion}\n</discussion>\n\n"
        "and a solution written for the same competition:\n\n"
        "```python\n{final solution}\n```\n\n"
        "Judge whether the solution is essentially a copy of the approach in the discussion. "
        'If it is sufficiently its own work, the verdict is "Novel"; if it is too close to the '
        'discussion, the verdict is "Same".\n\n'
        'Return a JSON object {"verdict": "Novel"} or {"verdict": "Same"}, nothing else.'
    ),
)

TEMPLATES: tuple[PromptTemplate, ...] = (TEST, SUBSAMPLING_EXTRACT, SUBSAMPLING_REMOVE, CONTAMINATION)
