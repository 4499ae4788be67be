"""The retriever's example code for a model family: a short snippet that runs alone on synthetic data.

``__MODULE__`` and ``__ESTIMATOR__`` name the family's estimator, ``__ARGS__`` its default settings
(the script's own names, its seed and cores, as the values a standalone snippet runs with),
``__MAKER__`` the synthetic data set and ``__SCORING__`` its scikit-learn scoring name.
"""

# The imports are the snippet's, in the order it has always had them:
# ruff: noqa: I001

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.agents.builtin.script_blocks.names import __ARGS__, __SCORING__

# --- script ---
from sklearn.datasets import __MAKER__
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from __MODULE__ import __ESTIMATOR__

X, y = __MAKER__(n_samples=400, n_features=10, random_state=0)
model = make_pipeline(StandardScaler(), __ESTIMATOR__(__ARGS__))
print(cross_val_score(model, X, y, cv=3, scoring=__SCORING__).mean())
