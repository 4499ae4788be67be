"""The engine's deadline for this script (``ENGINE_EVAL_DEADLINE``, a Unix time; none by hand).

Early stopping, seed bags and folds fitted to the window read it; the first of them in a script
defines it.
"""

from engine.agents.builtin.script_blocks.names import os

# --- script ---
DEADLINE = float(os.environ.get("ENGINE_EVAL_DEADLINE", "inf"))
