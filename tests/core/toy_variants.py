"""Toy backend variants for the core tests: the toy echo backend, slowed down by TOY_DELAY_S
seconds per call so a driver can be caught mid-run (signals, two resumes at once)."""

from __future__ import annotations

import os

import anyio

from events.core import AgentCallCompleted, AgentCallRequested
from tests.toy.strategy import EchoBackend


class SlowEchoBackend(EchoBackend):
    name = "slow-echo"

    async def call(self, request: AgentCallRequested, ctx) -> AgentCallCompleted:
        await anyio.sleep(float(os.environ.get("TOY_DELAY_S", "0.3")))
        return await super().call(request, ctx)
