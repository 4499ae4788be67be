"""A stand-in for MLE-bench's package (github.com/openai/mle-bench, not on PyPI, so not installable
in CI): only the API surface engine/grading/mlebench.py calls — ``registry.set_data_dir(dir)
.get_competition(id)`` and ``grade.grade_csv(path, competition).to_dict()``. It knows one
competition, ``iris``, and scores a submission by its row count, so a test can tell whose score
it got."""
