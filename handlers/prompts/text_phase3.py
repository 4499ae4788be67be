"""Phase 3 prompts (Algorithm 3): ensemble plan (Fig 17) and ensemble script (Fig 18)."""

from __future__ import annotations

from events.enums import AgentType
from handlers.prompts.fragments import CODE_ANSWER, SCORE_LINE
from handlers.prompts.template import PromptTemplate

ENS_PLANNER = PromptTemplate(
    agent_type=AgentType.ens_planner,
    figure_ref="Figure 17",
    variables=["solutions", "plans", "scores"],
    derive="ensemble_planning",
    template=(
        "We have several independently refined solutions to the same machine-learning competition.\n\n"
        "# Solutions\n{solutions}\n\n"
        "{plan_history}\n"
        "Propose a plan for combining these solutions into one ensemble that scores better than "
        "each of them (and better than the plans above, if any). Concentrate on how the models' "
        "predictions are merged (averaging, weighting, stacking and the like) rather than on "
        "tuning their hyperparameters, and leave the individual solutions largely as they are. "
        "The plan should be easy to implement and different from any plan already tried.\n\n"
        "Answer with an outline of the plan in plain prose, without headings or code."
    ),
)

ENSEMBLER = PromptTemplate(
    agent_type=AgentType.ensembler,
    figure_ref="Figure 18",
    variables=["solutions", "plan"],
    derive="ensemble_solutions",
    template=(
        "Implement an ensemble of the following solutions to a machine-learning competition.\n\n"
        "# Solutions\n{solutions}\n\n"
        "# Ensemble plan\n{plan}\n\n"
        "Write one new, complete Python program that trains the models of these solutions and "
        "combines them as the plan says.\n"
        "- Read the data from the `./input` directory; do not load earlier submission files.\n"
        "- Use the full training data: do not subsample.\n"
        "- Every variable you use must be defined in the program; no placeholders.\n"
        "- Compute the ensemble's score on a validation split and print it as one line\n"
        f"  `{SCORE_LINE}`.\n"
        "- Also predict the test data and write the predictions to `./final/submission.csv` in the "
        "format of the sample submission.\n"
        "- Never call `exit()`, and do not hide errors behind `try`/`except`.\n\n" + CODE_ANSWER
    ),
)

TEMPLATES: tuple[PromptTemplate, ...] = (ENS_PLANNER, ENSEMBLER)
