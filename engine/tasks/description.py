"""The Kaggle-style description.md of a bundled task.

It is a plain competition description — what to predict, the files, the metric and the
submission format. Anything about how the engine runs scripts (e.g. the score line a script
must print) is the agents' prompts' business and deliberately absent here.
"""

from __future__ import annotations

import pandas as pd

from engine.tasks.bundled_data import BundledSpec
from engine.tasks.model import ScoringSpec

_EVALUATION = {
    "roc_auc": (
        "Submissions are evaluated on the area under the ROC curve between the predicted "
        "probability and the observed target. Only the ranking of your predictions matters."
    ),
    "accuracy": (
        "Submissions are evaluated on classification accuracy: the fraction of test rows "
        "whose predicted `{target}` equals the true one."
    ),
    "rmse": (
        "Submissions are evaluated on the root mean squared error (RMSE) between the "
        "predicted and the observed `{target}`. Lower is better."
    ),
    "logloss": (
        "Submissions are evaluated with the multi-class logarithmic loss. Each row has exactly "
        "one true class; for each row you submit one probability per class. The score is\n\n"
        "    logloss = -(1/N) * sum over rows of log(p_true_class)\n\n"
        "Probabilities are clipped to [1e-15, 1 - 1e-15] and every row is rescaled to sum to "
        "1 before scoring. Lower is better."
    ),
}


def _submission_text(spec: BundledSpec, scoring: ScoringSpec) -> str:
    columns = ", ".join(f"`{c}`" for c in scoring.target_columns)
    if spec.per_class_probabilities:
        return f"For each `id` in the test set, give the probability of each class ({columns})."
    if spec.metric == "roc_auc":
        return f"For each `id` in the test set, give the probability that `{spec.target}` is 1."
    return f"For each `id` in the test set, predict `{spec.target}`."


def _data_files(spec: BundledSpec, train: pd.DataFrame, test: pd.DataFrame) -> str:
    if spec.images is not None:
        files = [
            f"- **train.csv** — {len(train)} rows: an `id` and the target `{spec.target}`.",
            f"- **train/** — {len(train)} images, `<id>.png`, one per row of train.csv.",
            f"- **test/** — {len(test)} images, `<id>.png`, one per row of sample_submission.csv.",
        ]
    else:
        files = [
            f"- **train.csv** — {len(train)} rows: an `id`, the features and the target `{spec.target}`.",
            f"- **test.csv** — {len(test)} rows: an `id` and the same features, without the target.",
        ]
    return "\n".join([*files, "- **sample_submission.csv** — a submission in the correct format."])


def render_description(spec: BundledSpec, scoring: ScoringSpec, train: pd.DataFrame,
                       test: pd.DataFrame, sample: pd.DataFrame) -> bytes:
    example = sample.head(3).to_csv(index=False, lineterminator="\n").strip()
    text = f"""# {spec.title}

## Overview

{spec.overview}

## Data

{_data_files(spec, train, test)}

### Features

{spec.features}

## Evaluation

{_EVALUATION[spec.metric].format(target=spec.target)}

## Submission File

{_submission_text(spec, scoring)} The file must have a header and one row per test `id`:

```
{example}
...
```
"""
    return text.encode("utf-8")
