"""One variant's run in an ablation study: its score, kept and printed for the engine to read."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.agents.builtin.script_blocks.names import METRIC, results, run_variant___INDEX__

# --- script ---
score = run_variant___INDEX__()
results.append(("__COMPONENT__", score))
print(f"ABLATION __COMPONENT__ | __DESCRIPTION__ | {METRIC}={score:.6f}")
