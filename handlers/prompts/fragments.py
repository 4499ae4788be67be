"""Instruction fragments several prompts share, so the rules read the same everywhere.

These are plain strings concatenated into templates; braces in them (the score line's
``{final_validation_score}``) are literal text, never placeholders.
"""

from __future__ import annotations

#: What every evaluated script must print; the harness parses the last such line.
SCORE_LINE = "Final Validation Performance: {final_validation_score}"

SUBSAMPLE_LIMIT_ROWS = "30,000"

SCRIPT_RULES = (
    "Rules for the script:\n"
    "- Read every data file from the `./input` directory; do not unzip anything.\n"
    "- It must run as one self-contained Python file, with no arguments and no user input.\n"
    "- Prefer PyTorch over TensorFlow for neural networks; use CUDA when it is available.\n"
    f"- If the training data has more than {SUBSAMPLE_LIMIT_ROWS} rows, subsample it to "
    f"{SUBSAMPLE_LIMIT_ROWS} rows (fixed random seed) so every experiment stays fast.\n"
    "- Hold out a validation split of the training data and compute the task's metric on it.\n"
    "- At the end, print exactly one line of the form\n"
    f"  `{SCORE_LINE}`\n"
    "  with the validation score in place of the braces.\n"
    "- Never call `exit()`, `sys.exit()`, `quit()` or `os._exit()`.\n"
    "- Do not wrap code in `try`/`except` to hide failures: if something breaks, let the error "
    "surface so it can be debugged.\n"
)

CODE_ANSWER = (
    "Answer with a single fenced Python code block (```python ... ```) containing the complete "
    "script, and nothing else: no headings, no explanations before or after it."
)

BLOCK_ANSWER = (
    "Answer with a single fenced Python code block (```python ... ```) containing only the "
    "rewritten code block, and nothing else."
)

KEEP_SUBSAMPLING = "Do not remove subsampling if exists."

NO_DUMMY_VARIABLES = (
    "This block is a fragment of a longer script: every variable it uses (including the loaded "
    "data) is already defined earlier, so do not invent placeholder or dummy variables."
)
