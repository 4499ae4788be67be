"""The end of an ablation study: every variant run (``ablation_run.py`` at ``# insert runs``) and
the component whose change moved the score most, printed with the metric's direction.
"""

# Scripts carry no annotations: their empty collections are filled further down.
# mypy: disable-error-code="var-annotated"

from engine.agents.builtin.script_blocks.names import GREATER_IS_BETTER, METRIC

# --- script ---
results = []
# insert runs
baseline = results[0][1]
changes = [(name, s - baseline) for name, s in results[1:]]
name, delta = max(changes, key=lambda item: abs(item[1]))
print(f"Most impactful component: {name} (score change {delta:+.6f} when changed; {METRIC} {'higher' if GREATER_IS_BETTER else 'lower'} is better)")
