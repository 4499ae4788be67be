"""structlog set-up: human-readable on a terminal, JSON otherwise; secrets never printed."""

from __future__ import annotations

import logging
import re
import sys

import structlog
from structlog.typing import EventDict, WrappedLogger

_SECRET = re.compile(r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9]{20,}|(?i:api[_-]?key|token|secret)=\S+)")


def redact(text: str) -> str:
    return _SECRET.sub("[REDACTED]", text)


def _redact_processor(_logger: WrappedLogger, _name: str, event: EventDict) -> EventDict:
    return {k: redact(v) if isinstance(v, str) else v for k, v in event.items()}


def configure(level: str = "INFO", *, json_output: bool | None = None) -> None:
    if json_output is None:
        json_output = not sys.stderr.isatty()
    renderer = structlog.processors.JSONRenderer() if json_output else structlog.dev.ConsoleRenderer(colors=True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact_processor,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper(), logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
