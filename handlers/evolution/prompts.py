"""Prompts of the evolution roles (our own text): draft, merge, mutate, evo_debug, review,
profile_evolver. Each demands the seven ``# [SECTION: X]`` markers and shows the stub form.

Rendered in the handler, so the log holds the exact prompt of every call; ``variables`` keeps
the structured values (the builtin agent reads those, a model reads the prompt).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from events.core import AgentCallRequested
from handlers.evolution.genes import LOCI, STUB_BODY, STUB_EXAMPLE, STUB_THRESHOLD

LOCUS_GUIDE = (
    "DATA: loading, cleaning, feature engineering, the train/validation split; "
    "MODEL: model definition and hyper-parameters; LOSS; OPTIMIZER; REGULARIZATION; INITIALIZATION; "
    "TRAINING_TRICKS: training loop or cross-validation, early stopping, schedules, the final fit, "
    "prediction and writing the submission."
)

STRUCTURE_RULES = f"""## Required structure (seven genes)
The program is divided into exactly seven sections. Each starts with a marker line in column 0,
exactly once each, in this order:
{chr(10).join(f"# [SECTION: {name}]" for name in LOCI)}
Imports and constants may come before the first marker. Meaning of the sections: {LOCUS_GUIDE}
A section that does not apply to your approach (e.g. LOSS, OPTIMIZER, INITIALIZATION for
gradient-boosted trees) still appears, as a stub: the single line `{STUB_BODY}` (a stub must
stay under {STUB_THRESHOLD} characters). For example:
```python
{STUB_EXAMPLE.rstrip()}
```"""

RUN_RULES = """## Rules for the program
- Read the data from ./input (read-only); write ./final/submission.csv in the sample submission's format.
- Hold out validation data from the training data and print the validation score as the last
  line, exactly: Final Validation Performance: <score>
- Do not call exit(); do not download anything; finish well within the time you are given.
- Answer with the complete program in one ```python fenced block."""

DRAFT = """# Task
{task_description}

# Your strategy profile
{profile}

# Write a new solution from scratch
Write a complete, self-contained Python program that solves the task above with a sound approach.
{history_block}
{structure}

{run_rules}"""

HISTORY_BLOCK = """
## Approaches already tried — DO NOT REPEAT
{lines}
Your solution MUST use a meaningfully different approach from all of the above.
"""

MERGE = """# Task
{task_description}

# Your strategy profile
{profile}

# Merge genes into one program
Below is the primary parent, a complete working program, followed by a gene plan: for each of
the seven sections, the code it must carry, taken from the best node for that gene. Keep the
primary parent as the skeleton and replace each of its sections by the planned code. Adapt
names and glue code only as far as needed for the sections to work together; change nothing else.

## Primary parent ({primary_parent})
```python
{primary_code}
```

## Gene plan
{plan_text}

{structure}

{run_rules}"""

MUTATE = """# Task
{task_description}

# Your strategy profile
{profile}

# Mutate one gene
Improve the program below by changing ONLY its `# [SECTION: {target_locus}]` section: one focused,
meaningful change to that gene (a better setting, a different technique for that part). Every
other section stays exactly as it is.

## Program (node {parent})
```python
{code}
```

{structure}

{run_rules}"""

DEBUG = """# Task
{task_description}

# Fix the failing program (debug attempt {attempt})
The program below failed. Its error and output follow. Return the corrected complete program.
1. Preserve structure: your fix MUST keep all 7 `# [SECTION: X]` markers intact.
2. Minimal change: change ONLY what is necessary to fix the problem. Do not refactor or add features.

## Program
```python
{code}
```

## Error
```
{error}
```

## Output (tail)
```
{output}
```

{structure}

{run_rules}"""

REVIEW = """# Task
{task_description}

# Review an executed solution
Read the program and the output of its run. Answer in JSON with:
- "approach_tag": ONE line naming the method, e.g. "LightGBM + 5-fold CV" or "Logistic regression + one-hot";
- "summary": two or three sentences on what the program does and how well it did;
- "is_buggy": true only if the run is clearly wrong (e.g. the validation score is implausible,
  the validation data leaked into training, or the printed score is not the metric);
- "metric": the validation score printed in the output, or null.
The score that counts is the harness's parsed "Final Validation Performance" line; do not invent one.
Example: {{"approach_tag": "Random forest + target encoding", "summary": "...", "is_buggy": false, "metric": 0.91}}

## Program
```python
{code}
```

## Output
```
{output}
```"""

PROFILE_EVOLVER = """# Rewrite a strategy profile
A strategy profile is a short text telling the draft, merge and mutate operators how to work
(one paragraph each, starting "draft:", "merge:" and "mutate:"). The profile below did worse
than an elite profile. Rewrite it: move it toward what works in the elite profile while keeping
one idea of its own, so the population of profiles stays diverse. Answer with the new profile text only.

## Profile to rewrite
{profile}

## Elite profile
{elite_profile}

## Statistics
{stats_text}"""

REVIEW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approach_tag": {"type": "string"},
        "summary": {"type": "string"},
        "is_buggy": {"type": "boolean"},
        "metric": {"type": ["number", "null"]},
    },
    "required": ["approach_tag", "summary", "is_buggy"],
}

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def render(template: str, values: Mapping[str, Any]) -> str:
    """Replace ``{name}`` placeholders in one pass; ``{{``/``}}`` are literal braces. Values are
    never expanded again, so code containing braces is safe."""
    marker_open, marker_close = "\x00LB\x00", "\x00RB\x00"
    text = template.replace("{{", marker_open).replace("}}", marker_close)

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in values:
            raise KeyError(f"prompt needs variable {name!r}")
        value = values[name]
        return value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=True)

    text = _PLACEHOLDER.sub(sub, text)
    return text.replace(marker_open, "{").replace(marker_close, "}")


def history_block(history: list[dict[str, Any]]) -> str:
    if not history:
        return ""
    lines = "\n".join(f"- [Step {h['step']}] {h['approach_tag']} → metric={h['metric']}" for h in history)
    return render(HISTORY_BLOCK, {"lines": lines})


def plan_text(plan: Mapping[str, Mapping[str, Any]]) -> str:
    parts = []
    for locus in LOCI:
        entry = plan[locus]
        parts.append(f"### # [SECTION: {locus}] — from {entry['source']}\n```python\n{entry['code']}\n```")
    return "\n\n".join(parts)


def _common() -> dict[str, str]:
    return {"structure": STRUCTURE_RULES, "run_rules": RUN_RULES}


def _request(effect_id: str, agent_type: str, prompt: str, variables: Mapping[str, Any],
             output_schema: dict[str, Any] | None = None) -> AgentCallRequested:
    return AgentCallRequested(effect_id=effect_id, agent_type=agent_type, prompt=prompt,
                              variables=json.loads(json.dumps(dict(variables))), output_schema=output_schema)


def draft_request(effect_id: str, *, task_description: str, draft_history: list[dict[str, Any]],
                  profile: str) -> AgentCallRequested:
    variables = {"task_description": task_description, "draft_history": draft_history, "profile": profile}
    prompt = render(DRAFT, {**variables, **_common(), "history_block": history_block(draft_history)})
    return _request(effect_id, "draft", prompt, variables)


def merge_request(effect_id: str, *, task_description: str, primary_parent: str, primary_code: str,
                  gene_plan: dict[str, dict[str, Any]], profile: str) -> AgentCallRequested:
    variables = {"task_description": task_description, "primary_parent": primary_parent,
                 "primary_code": primary_code, "gene_plan": gene_plan, "profile": profile}
    prompt = render(MERGE, {**variables, **_common(), "plan_text": plan_text(gene_plan)})
    return _request(effect_id, "merge", prompt, variables)


def mutate_request(effect_id: str, *, task_description: str, parent: str, code: str, target_locus: str,
                   profile: str) -> AgentCallRequested:
    variables = {"task_description": task_description, "parent": parent, "code": code,
                 "target_locus": target_locus, "profile": profile}
    return _request(effect_id, "mutate", render(MUTATE, {**variables, **_common()}), variables)


def debug_request(effect_id: str, *, task_description: str, code: str, error: str, output: str,
                  attempt: int) -> AgentCallRequested:
    variables = {"task_description": task_description, "code": code, "error": error, "output": output,
                 "attempt": attempt}
    prompt = render(DEBUG, {**variables, **_common(), "attempt": str(attempt)})
    return _request(effect_id, "evo_debug", prompt, variables)


def review_request(effect_id: str, *, task_description: str, code: str, output: str) -> AgentCallRequested:
    variables = {"task_description": task_description, "code": code, "output": output}
    return _request(effect_id, "review", render(REVIEW, variables), variables, output_schema=REVIEW_SCHEMA)


def profile_evolver_request(effect_id: str, *, profile: str, elite_profile: str,
                            stats: dict[str, Any]) -> AgentCallRequested:
    variables = {"profile": profile, "elite_profile": elite_profile, "stats": stats}
    prompt = render(PROFILE_EVOLVER, {**variables, "stats_text": json.dumps(stats, indent=2, sort_keys=True)})
    return _request(effect_id, "profile_evolver", prompt, variables)
