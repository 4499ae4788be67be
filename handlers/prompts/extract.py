"""REQ-SF-005: pulling code out of an agent's reply. Pure; shared by the backends and handlers."""

from __future__ import annotations

import re

# A fence line: three or more backticks (or tildes), an optional language tag. The closing
# fence must use the same character and at least as many of them (CommonMark's rule), which
# keeps ``` inside a ```` block from ending it early.
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$", re.MULTILINE)


def fenced_blocks(text: str) -> list[str]:
    """The contents of every fenced block, in order (fences and language tags removed)."""
    blocks: list[str] = []
    pos = 0
    while True:
        opening = _FENCE.search(text, pos)
        if opening is None:
            return blocks
        fence = opening.group("fence")
        body_start = opening.end() + 1
        closing = None
        for candidate in _FENCE.finditer(text, body_start):
            mark = candidate.group("fence")
            if mark[0] == fence[0] and len(mark) >= len(fence) and not candidate.group("info").strip():
                closing = candidate
                break
        if closing is None:
            # An unterminated fence (a truncated reply): take the rest as the block.
            blocks.append(text[body_start:].strip("\n"))
            return blocks
        blocks.append(text[body_start : closing.start()].strip("\n"))
        pos = closing.end()


def longest_fenced_block(text: str) -> str | None:
    """The longest fenced block by characters, or None when the reply has no fence."""
    blocks = fenced_blocks(text or "")
    if not blocks:
        return None
    return max(blocks, key=len)  # max keeps the first of equally long blocks


def extract_code_block(text: str) -> str:
    """REQ-SF-005 in full: the longest fenced block, else the whole reply stripped."""
    block = longest_fenced_block(text)
    return block if block is not None else (text or "").strip()
