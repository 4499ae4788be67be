"""Riding through a lost PostgreSQL connection: a managed server's restart, a failover, an
administrator's ``pg_terminate_backend``, a dropped network path.

An operation is a function of the connection that is safe to run again: the store writes each one
so that a second run after an unknown outcome settles it (an append reads the run's head, a lease
looks for its own token, ...). When it fails because the connection went away, the connection is
replaced — retried with backoff for at most the reconnect budget — and the operation runs again.
Once the budget is spent the caller gets :class:`StoreUnavailable`, a one-line reason. Errors that
are not about the connection (a constraint, a bad query) pass through untouched.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

import psycopg
import structlog

from store.base import StoreError, StoreUnavailable

T = TypeVar("T")
log = structlog.get_logger("store.postgres")

RECONNECT_ENV = "ENGINE_DB_RECONNECT_S"
DEFAULT_RECONNECT_S = 60.0
_FIRST_DELAY_S = 0.05
_MAX_DELAY_S = 2.0
# admin_shutdown, crash_shutdown, cannot_connect_now (starting up / shutting down / in recovery),
# too_many_connections: all end when the server is back.
_TRANSIENT_STATES = frozenset({"57P01", "57P02", "57P03", "53300"})


def reconnect_budget_from_env() -> float:
    """$ENGINE_DB_RECONNECT_S: seconds to keep reconnecting before giving up (default 60; 0: never)."""
    raw = os.environ.get(RECONNECT_ENV, "").strip()
    if not raw:
        return DEFAULT_RECONNECT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise StoreError(f"{RECONNECT_ENV} must be a number of seconds (0 or more), not {raw!r}")
    return value


def connection_lost(exc: BaseException, conn: psycopg.Connection | None) -> bool:
    """Whether ``exc`` means the connection (or the server behind it) went away."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = getattr(exc, "sqlstate", None) or ""
    return (state.startswith("08") or state in _TRANSIENT_STATES
            or conn is None or conn.closed or conn.broken)


def reason_of(exc: BaseException) -> str:
    text = str(exc).strip()  # libpq's first line says what failed; the rest are hints
    return text.splitlines()[0].strip() if text else type(exc).__name__


class Reconnector:
    """Holds the store's connection and replaces it when it is lost."""

    def __init__(self, connect: Callable[[float], psycopg.Connection], *, label: str, budget_s: float) -> None:
        """``connect(timeout_s)`` opens and sets up a new connection (raising OperationalError if
        the server cannot be reached)."""
        self._connect = connect
        self.label = label
        self.budget_s = budget_s
        self.conn: psycopg.Connection | None = None
        self.last_reason = ""  # why the last connection attempt failed

    def open(self, connect_timeout_s: float) -> None:
        """The first connection. A server that cannot be reached is waited for as a lost one is (it
        may be restarting: a campaign's worker may open the store just then); the first failure is
        logged at once, so a wrong URL is seen without waiting for the budget to run out."""
        try:
            self.conn = self._connect(connect_timeout_s)
        except psycopg.OperationalError as exc:
            self.last_reason = reason_of(exc)
            log.warning("event_database_unreachable", database=self.label, reason=self.last_reason,
                        retrying_for_s=self.budget_s)
            self.reconnect(exc, time.monotonic() + self.budget_s)

    def live(self) -> psycopg.Connection:
        if self.conn is None:  # an earlier reconnect gave up; the next operation tries afresh
            raise psycopg.OperationalError("no connection (an earlier reconnect gave up)")
        return self.conn

    def run(self, op: Callable[[psycopg.Connection, bool], T], *, budget_s: float | None = None) -> T:
        """``op(conn, retried)``; ``retried`` is True once an earlier try may have half-happened."""
        deadline: float | None = None
        retried = False
        while True:
            try:
                return op(self.live(), retried)
            except psycopg.OperationalError as exc:
                deadline = self.recover(exc, deadline, budget_s)
                retried = True

    def recover(self, exc: psycopg.OperationalError, deadline: float | None, budget_s: float | None = None) -> float:
        """Re-raise ``exc`` unless the connection was lost; else reconnect (until ``deadline``, set
        from the budget on the first loss) and return the deadline for the next loss."""
        if not connection_lost(exc, self.conn):
            raise exc
        if deadline is None:
            budget = self.budget_s if budget_s is None else budget_s
            deadline = time.monotonic() + budget
            log.warning("event_database_connection_lost", database=self.label, reason=reason_of(exc),
                        reconnecting_for_s=budget)
        self.reconnect(exc, deadline)
        return deadline

    def reconnect(self, cause: BaseException, deadline: float) -> None:
        """Replace the connection, retrying with backoff until ``deadline``; StoreUnavailable after."""
        self.drop()
        started = time.monotonic()
        delay = _FIRST_DELAY_S
        last = cause
        while True:
            self.last_reason = reason_of(last)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StoreUnavailable(
                    f"the event database {self.label} is unreachable ({self.last_reason}); gave up after "
                    f"reconnecting for {time.monotonic() - started:.0f} s (${RECONNECT_ENV} sets how long). "
                    "Every committed event is kept: `engine resume` continues once the server is back") from None
            try:
                self.conn = self._connect(max(remaining, 0.1))
                log.warning("event_database_reconnected", database=self.label,
                            after_s=round(time.monotonic() - started, 2))
                return
            except psycopg.OperationalError as exc:
                last = exc
            time.sleep(min(delay, max(deadline - time.monotonic(), 0.0)))
            delay = min(delay * 2, _MAX_DELAY_S)

    def drop(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except psycopg.Error:
                pass
            self.conn = None
