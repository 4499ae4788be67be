"""Bounded capture of a script's stdout/stderr (REQ-EX-038, REQ-EX-043)."""

from __future__ import annotations

from collections import deque

HARNESS_PREFIX = "[harness] "
DEFAULT_OUTPUT_LIMIT_BYTES = 100 * 1024 * 1024


def truncation_marker(omitted: int, limit: int) -> str:
    return f"\n{HARNESS_PREFIX}output truncated: {omitted} bytes omitted (limit {limit} bytes)\n"


class CappedBuffer:
    """Keeps at most ``limit`` bytes of a stream: the first half and the last half.

    REQ-EX-038 asks to truncate beyond the limit with a warning marker. The marker is put where
    bytes were dropped rather than at the very end, because the end is what matters most: the
    score line (the LAST match) and the traceback both come last.
    """

    def __init__(self, limit: int) -> None:
        if limit < 2:
            raise ValueError("output limit must be at least 2 bytes")
        self.limit = limit
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.omitted = 0

    def write(self, chunk: bytes) -> None:
        if len(self._head) < self._head_limit:
            room = self._head_limit - len(self._head)
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(bytes(chunk))
        self._tail_size += len(chunk)
        while self._tail_size > self._tail_limit:
            excess = self._tail_size - self._tail_limit
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_size -= len(first)
                self.omitted += len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_size -= excess
                self.omitted += excess

    def text(self) -> str:
        """Decoded as UTF-8 with replacement characters (REQ-EX-043)."""
        tail = b"".join(self._tail)
        if not self.omitted:
            return (bytes(self._head) + tail).decode("utf-8", errors="replace")
        return (
            bytes(self._head).decode("utf-8", errors="replace")
            + truncation_marker(self.omitted, self.limit)
            + tail.decode("utf-8", errors="replace")
        )
