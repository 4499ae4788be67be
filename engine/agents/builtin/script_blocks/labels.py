"""The labels: ``y`` coded from the target (classes sorted, ``CLASSES``) or its values, and the
stratification the split uses where every class has two rows. Shared by ``data.py`` and
``image_data.py``.
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import TARGET, TASK_KIND, np, pd, train_df

# --- script ---
if TASK_KIND == "classification":
    y, CLASSES = pd.factorize(train_df[TARGET], sort=True)
    CLASSES = np.asarray(CLASSES)
    counts = np.bincount(y)
    stratify = y if counts.min() >= 2 else None
else:
    y = train_df[TARGET].to_numpy(dtype=float)
    stratify = None
