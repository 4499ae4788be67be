"""Every member refit on all training rows, then the test predictions (``FINAL_FIT`` "full").

The refit is timed (``FIT_STARTED``, ``FIT_ENDED``) for the final run's estimate. With seed bags
(``bags``) a bag's fits on all rows may outlast the time the engine gave the script, which would
then kill it and keep the search's own submission: each bag gets an even part of the time left
before the deadline, less FINISH_S, and fits the seeds it holds (a smaller bag on every row rather
than none); single models fit first. A test version that grows its bags (``growth``) then lets the
bags take turns adding one more fit while the time left holds it and the test predictions of every
fit, at the rate the first predictions took: growing one bag into its share first left the members
after it no time for their own fits. Log-loss probabilities are calibrated as the validation
predictions were (``calibrated``).
"""

# The loops unpack each member's (name, model) as the scripts have always written them:
# ruff: noqa: B007
# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import (
    DEADLINE,
    FINAL_FIT,
    FINISH_S,
    GROW_SEEDS,
    SeedBagged,
    X,
    X_test,
    blend,
    blender,
    calibrate,
    calibration,
    members,
    predict_values,
    time,
    y,
)

# --- script ---
FIT_STARTED = time.monotonic()
if FINAL_FIT == "full":
    # The validation score above is settled; now every model learns from all training rows.
    # when not bags:
    for name, model in members:
        model.fit(X, y)
    # end bags
    # when bags:
    # Single models first: a bag's part of the time is what they left.
    fit_order = sorted(range(len(members)), key=lambda j: isinstance(members[j][1], SeedBagged))
    for n, j in enumerate(fit_order):
        model = members[j][1]
        if isinstance(model, SeedBagged):
            model.fit(X, y, fit_by=time.time() + (DEADLINE - FINISH_S - time.time()) / (len(members) - n))
        else:
            model.fit(X, y)
    # end bags
FIT_ENDED = time.monotonic()
test_preds = [predict_values(model, X_test) for _, model in members]
test_blend = blend(test_preds, blender) if len(members) > 1 else test_preds[0]
# when growth:
if FINAL_FIT == "full" and GROW_SEEDS:
    bags = [model for _, model in members if isinstance(model, SeedBagged)]
    fits = sum(len(model.estimators_) if isinstance(model, SeedBagged) else 1 for _, model in members)
    predict_s_per_fit = (time.monotonic() - FIT_ENDED) / fits
    grown, added = 0, True
    while added:
        added = False
        for bag in bags:
            if bag.grow(X, y, DEADLINE - FINISH_S - predict_s_per_fit * (fits + grown + 1)):
                grown, added = grown + 1, True
    if grown:
        print(f"Seed bags grown by {grown} fits to {[len(bag.estimators_) for bag in bags]} in the time the engine gave")
    test_preds = [predict_values(model, X_test) for _, model in members]
    test_blend = blend(test_preds, blender) if len(members) > 1 else test_preds[0]
# end growth
# when calibrated:
test_blend = calibrate(test_blend, calibration)
# end calibrated
