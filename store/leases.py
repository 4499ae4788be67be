"""Run leases: one live driver per run. A lease held by a dead process or past its expiry is
taken over; a live one is refused, naming the holder so the user knows whom to stop."""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid

import psutil

from store.base import LeaseHeld

# Releasing is a courtesy: a lease left behind expires after its TTL, and one whose holder died on
# this host is taken over at once. So a release waits out only a short outage, never the full
# reconnect budget, and its failure must not hide how the run itself ended.
RELEASE_BUDGET_S = 5.0


def take_lease(conn: sqlite3.Connection, run_id: str, ttl_s: float) -> str:
    """Inside the caller's write transaction: take the run's lease or raise LeaseHeld."""
    host = socket.gethostname()
    row = conn.execute("SELECT pid, host, expires_at FROM leases WHERE run_id=?", (run_id,)).fetchone()
    if row is not None:
        refuse_live_holder(run_id, *row, now=time.time())
    token = uuid.uuid4().hex
    conn.execute("INSERT OR REPLACE INTO leases(run_id, token, pid, host, expires_at) VALUES (?,?,?,?,?)",
                 (run_id, token, os.getpid(), host, time.time() + ttl_s))
    return token


def refuse_live_holder(run_id: str, pid: int, holder_host: str, expires_at: float, *, now: float) -> None:
    """Raise LeaseHeld if the recorded holder may still be driving the run."""
    # A holder on this host whose process is gone cannot renew: no need to wait for expiry.
    alive = now < expires_at and not (holder_host == socket.gethostname() and not pid_alive(pid))
    if alive:
        raise LeaseHeld(run_id, pid, holder_host)


def pid_alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
