"""The code of the builtin agent's scripts, one block of a script per file.

Each file is real Python: above its ``# --- script ---`` line it says what it is and imports, from
``names.py``, the names it reads from the blocks before it (so ruff and mypy read it as code);
below that line is the text a script holds. ``engine.agents.builtin.blocks`` reads them as package
data and fills in what varies per spec (constants, placeholders, insertion points, optional
regions); the ``render_*`` modules decide which blocks a spec's script holds, in which order.
Nothing imports these files at run time.

A script, top to bottom: ``preamble`` (imports, task constants, the metric from ``metrics``);
DATA: ``data`` (``extra_train``, ``side_table``, ``target``, ``subsample``, ``features``,
``labels``, ``text_features``, ``holdout_split``; an image task's ``image_data`` holds the same
``target``, ``subsample``, ``labels`` and ``holdout_split``), ``preprocessor``;
MODEL: ``model`` (``member``); LOSS: ``loss_classification`` or ``loss_regression``;
REGULARIZATION: ``regularization``; TRAINING_TRICKS: ``training``, a ``blend_*``, ``early_stop``
or ``not_sized``, ``seed_bag``, ``cv``, ``validation``, ``calibration``, ``score_groups``,
``full_fit``, ``submission_file`` (around ``submission``), ``final_run_estimate``. A task with
several targets adds ``multi_target_score`` to the preamble, ``multi_target_data`` to DATA,
``multi_target_model`` to MODEL and ``per_target`` after the members, and writes
``submission_multi`` for ``submission``.
An ablation study wraps each variant's sections in a function (``ablation``); the retriever's
example code is ``example``.

Each ``blend_<method>.py`` defines the same two functions: ``fit_blender(val_preds, y_true)``
learns what ``blend(preds, state)`` needs (None when it learns nothing: mean, median, rank).
"""
