"""The event vocabulary. Importing the package registers every event type, so any log can be
read (verified, exported, shown) without first loading the strategy that wrote it."""

from events import campaign, core, evolution, hidden, phase1, phase2, phase3, pipeline, sandbox, spend  # noqa: F401 - registers them
