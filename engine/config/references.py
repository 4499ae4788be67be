"""Reference discussions for finalization's contamination check (REQ-FN-026..034), off by default.

The check compares the final solution with each reference discussion (e.g. top public
notebooks of the competition) and records a "Novel"/"Same" verdict (``ContaminationChecked``).
It runs only when the run is given reference discussions, from the CLI
(``engine start ... --reference-discussions FILE``) or the library
(``run_pipeline(..., reference_discussions=[...])``). Either way the config records that the
check is on (``contamination_check: true``) and ``RunStarted.params`` the discussions
themselves, so a replay or resume sees exactly what the run saw.

The file is either JSON — a list of strings, or ``{"discussions": [...]}`` — or plain text with
the discussions separated by lines holding only ``---``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.config.validate import InputError

SEPARATOR = "---"
PARAM = "reference_discussions"


def read_reference_discussions(path: Path) -> list[str]:
    """The discussions in ``path``; ``InputError`` saying what is wrong with it otherwise."""
    where = f"--reference-discussions {path}"
    if not path.is_file():
        raise InputError(f"{where}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{where}: cannot be read as UTF-8 text ({exc})") from None
    if path.suffix.lower() == ".json":
        try:
            data: Any = json.loads(text)
        except ValueError as exc:
            raise InputError(f"{where}: not valid JSON ({exc})") from None
        if isinstance(data, dict):
            data = data.get("discussions")
        if not isinstance(data, list) or not all(isinstance(d, str) for d in data):
            raise InputError(f'{where}: expected a JSON list of strings or {{"discussions": [...]}}')
        found: list[str] = data
    else:
        found = []
        current: list[str] = []
        for line in text.splitlines():
            if line.strip() == SEPARATOR:
                found.append("\n".join(current))
                current = []
            else:
                current.append(line)
        found.append("\n".join(current))
    return checked_discussions(found, where)


def checked_discussions(discussions: Sequence[str], where: str = "reference_discussions") -> list[str]:
    """The non-empty discussions; at least one is required (an empty set would silently skip the check)."""
    if isinstance(discussions, str) or not all(isinstance(d, str) for d in discussions):
        raise InputError(f"{where}: expected a list of strings (one per reference discussion)")
    kept = [d.strip() for d in discussions if d.strip()]
    if not kept:
        raise InputError(f"{where}: holds no reference discussion (separate several with a line '---')")
    return kept


def with_contamination_check(params: dict[str, Any] | None, discussions: Sequence[str]) -> dict[str, Any]:
    """Run parameters carrying the discussions for finalization (``handlers.finalization``)."""
    return dict(params or {}) | {PARAM: list(discussions)}
