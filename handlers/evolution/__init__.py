"""The ``evolve`` strategy: the two-phase evolutionary search (spec evolution-two-phase-plan).

Modules: ``genes`` (the seven markers), ``journal`` (nodes, a projection of NodeAppended),
``selection`` (pheromone, degeneration check, primary parent, tournament), ``prompts``,
``develop`` (execution, chained debug, review), ``steps`` (one step = one node),
``profiles`` (agent-level evolution), ``search`` (the phases, budget and time), ``summary``.
"""

from handlers.evolution.search import Search, main

__all__ = ["Search", "main"]
