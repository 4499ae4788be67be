"""The event vocabulary. Importing the package registers every event type, so any log can be
read (verified, exported, shown) without first loading the strategy that wrote it."""

from importlib import import_module

_MODULES = ("core", "phase1", "phase2", "phase3", "pipeline", "evolution", "spend")

for _name in _MODULES:
    try:
        import_module(f"events.{_name}")
    except ModuleNotFoundError as _exc:  # a vocabulary module not written yet
        if _exc.name != f"events.{_name}":
            raise
