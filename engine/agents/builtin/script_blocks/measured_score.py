"""A test version whose blend learns nothing from out-of-fold predictions does not score again.

The run measured its score on the search's rows (``render_final.test_gene``: ``rescore`` False);
the script only refits every model on all rows.
"""

# --- script ---
blender = None
print("Validation score: measured by the run on the search's rows, not recomputed here")
