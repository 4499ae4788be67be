"""Where modules went when the tree was reorganised, for names recorded before the move.

A run's log records a strategy or an agent backend as ``package.module:attr`` when it was not one
of the built-in names (``engine start --strategy handlers.pipeline:main``). Those names must keep
loading after a module moves, the same way an upcaster keeps an old event shape loading; this
table is that upcaster for module paths, read by the strategy and backend loaders.
"""

from __future__ import annotations

MOVED: dict[str, str] = {
 "engine.cli": "engine.cli.main",
 "engine.cli_audit": "engine.cli.audit",
 "engine.cli_campaign": "engine.cli.campaign",
 "engine.cli_tasks": "engine.cli.tasks",
 "engine.runs": "engine.run.lifecycle",
 "engine.driver": "engine.run.driver",
 "engine.agent_executor": "engine.run.agent_calls",
 "engine.strategies": "engine.run.strategies",
 "engine.replaying": "engine.run.replayer",
 "engine.config": "engine.config.presets",
 "engine.envconfig": "engine.config.env_settings",
 "engine.validate": "engine.config.validate",
 "engine.references": "engine.config.references",
 "engine.logs": "engine.config.logs",
 "engine.grading": "engine.grading.grader",
 "engine.grading_mlebench": "engine.grading.mlebench",
 "engine.agents.claude": "engine.agents.claude.backend",
 "engine.agents.claude_setup": "engine.agents.claude.setup",
 "engine.agents.claude_launch": "engine.agents.claude.launch",
 "engine.agents.launcher": "engine.agents.claude.reaper",
 "engine.agents.hooks": "engine.agents.claude.hooks",
 "engine.agents.api_relay": "engine.agents.claude.relay",
 "engine.agents.relay_bridge": "engine.agents.claude.relay_bridge",
 "engine.agents.mcp_tools": "engine.agents.claude.mcp_tools",
 "engine.agents.session_store": "engine.agents.claude.session_store",
 "engine.agents.openai_backend": "engine.agents.openai.backend",
 "engine.agents.openai_chat": "engine.agents.openai.chat",
 "engine.agents.openai_failures": "engine.agents.openai.failures",
 "engine.agents.openai_tools": "engine.agents.openai.tools",
 "engine.agents.replay": "engine.agents.recorded",
 "engine.agents.budget": "engine.agents.ledger",
 "engine.agents.builtin.budget": "engine.agents.builtin.search_rows",
 "engine.agents.builtin.common": "engine.agents.builtin.call",
 "engine.agents.builtin.search": "engine.agents.builtin.coordinate_search",
 "engine.audit.common": "engine.audit.runlog",
 "engine.campaign.state": "engine.campaign.stream",
 "engine.campaign.report": "engine.campaign.tally",
 "engine.campaign.report_html": "engine.campaign.tally_html",
 "engine.campaign.ray_eval": "engine.run.ray_eval",
 "handlers.common": "handlers.toolkit",
 "handlers.prompts.common": "handlers.prompts.fragments",
 "handlers.phase1": "handlers.mlestar.phase1",
 "handlers.phase2": "handlers.mlestar.phase2",
 "handlers.phase2_inner": "handlers.mlestar.phase2_inner",
 "handlers.phase3": "handlers.mlestar.phase3",
 "handlers.phaserun": "handlers.mlestar.phaserun",
 "handlers.pipeline": "handlers.mlestar.pipeline",
 "handlers.bestsofar": "handlers.mlestar.bestsofar",
 "handlers.baselines": "handlers.mlestar.baselines",
}


def current_module(name: str) -> str:
    """The module's path today: ``name`` itself, or where it moved (a submodule of a moved module
    follows its parent: ``handlers.phase1.x`` -> ``handlers.mlestar.phase1.x``)."""
    head = name
    while head:
        if head in MOVED:
            return MOVED[head] + name[len(head):]
        head = head.rpartition(".")[0]
    return name
