"""Fixtures for the grading tests: a real task with a held-back slice (tests/support/hidden_slice.py)."""

from tests.support.hidden_slice import drawn, task  # noqa: F401 - fixtures
