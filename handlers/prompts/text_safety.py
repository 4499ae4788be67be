"""Safety prompts (spec 03): debugging (Fig 19), leakage detection and correction (Figs 20, 21),
data usage (Fig 22). Our own wording; the few exact sentences the spec requires as invariants
(REQ-SF-009/029/045 and the data agent's confirmation sentence) are kept verbatim."""

from __future__ import annotations

from events.enums import AgentType
from handlers.prompts.fragments import CODE_ANSWER, KEEP_SUBSAMPLING, SCORE_LINE
from handlers.prompts.template import PromptTemplate

#: REQ-SF-028: the data agent's "nothing to add" answer, matched case-insensitively.
DATA_ALL_USED = "All the provided information is used."
#: REQ-SF-029: required wording.
NO_TRY_EXCEPT = "DO NOT USE TRY AND EXCEPT; just occur error so we can debug it!"
#: REQ-SF-045: required wording.
JUST_MODIFY = "Just modify it with the above code."

DEBUGGER = PromptTemplate(
    agent_type=AgentType.debugger,
    figure_ref="Figure 19",
    variables=["code", "bug"],
    template=(
        "This machine-learning script failed.\n\n"
        "# Script\n```python\n{code}\n```\n\n"
        "# Error\n```\n{bug}\n```\n\n"
        "Find the cause and fix it. Change only what the fix needs: do not add features, models "
        "or data steps.\n"
        + KEEP_SUBSAMPLING
        + "\n"
        "- Return the whole corrected script, self-contained, not just the changed lines.\n"
        "- The data is in the `./input` directory.\n"
        f"- Keep the final `{SCORE_LINE}` print.\n"
        "- Never call `exit()`.\n\n" + CODE_ANSWER
    ),
)

LEAKAGE_DETECTION = PromptTemplate(
    agent_type=AgentType.leakage,
    variant="detection",
    figure_ref="Figure 20",
    variables=["code"],
    template=(
        "Check this machine-learning script for data leakage.\n\n"
        "```python\n{code}\n```\n\n"
        "1. Find the code block where the training, validation and test data are preprocessed "
        "(scaling, encoding, imputation, feature statistics and similar).\n"
        "2. Check that anything fitted or computed in that block is learned from the training "
        "rows only, and that no validation row is used for training before the validation score "
        "is printed.\n"
        "3. Decide whether the block leaks information from validation or test data.\n\n"
        "Return a JSON object with an `answers` list; each entry is shaped like "
        '{"leakage_status": "Yes Data Leakage" or "No Data Leakage", "code_block": "<the '
        'preprocessing code, copied exactly from the script>"}. Copy the code block verbatim, '
        "without markdown fences, because it will be located by exact text match."
    ),
)

LEAKAGE_CORRECTION = PromptTemplate(
    agent_type=AgentType.leakage,
    variant="correction",
    figure_ref="Figure 21",
    variables=["code"],
    template=(
        "The following preprocessing code of a machine-learning script leaks information from "
        "validation or test data into training.\n\n"
        "```python\n{code}\n```\n\n"
        "Rewrite it so that only training rows are used to fit any preprocessing and to train "
        "the model, and no validation row is trained on before the validation score is computed; "
        "then apply the fitted transformations to the validation and test data.\n"
        "The variables it uses are defined earlier in the script. " + JUST_MODIFY + "\n\n"
        "Answer with a single fenced Python code block containing the corrected code, and "
        "nothing else."
    ),
)

DATA = PromptTemplate(
    agent_type=AgentType.data,
    figure_ref="Figure 22",
    variables=["initial solution", "task description"],
    template=(
        "Here is a solution to a machine-learning competition:\n\n"
        "```python\n{initial solution}\n```\n\n"
        "and the competition's description:\n\n"
        "<task>\n{task description}\n</task>\n\n"
        "Check whether the solution uses all the information the competition provides: every "
        "data file and every useful column or source the description mentions. If something "
        "useful is left out, rewrite the solution to use it, reading the description to learn how "
        "that information should be loaded and interpreted.\n"
        + NO_TRY_EXCEPT
        + "\n"
        f"Keep the final `{SCORE_LINE}` print.\n\n"
        "Answer in one of two ways:\n"
        "- if you changed the solution, with the complete new script in a single fenced Python "
        "code block and nothing else;\n"
        f"- if nothing is missing, with exactly this sentence: {DATA_ALL_USED}"
    ),
)

TEMPLATES: tuple[PromptTemplate, ...] = (DEBUGGER, LEAKAGE_DETECTION, LEAKAGE_CORRECTION, DATA)
