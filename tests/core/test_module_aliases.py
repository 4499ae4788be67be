"""Module paths recorded before the tree was reorganised still load (events/module_aliases.py).

A run started with ``--strategy package.module:function`` or ``--agent package.module:Class``
records that path; resuming or replaying it after a move must find the same code."""

from __future__ import annotations

import importlib

import pytest

from engine.agents.errors import BackendUnavailable
from engine.agents.recorded import ReplayBackend
from engine.agents.select import select_backend
from engine.run.strategies import StrategyError, load_strategy
from events.domain import PipelineConfig
from events.module_aliases import MOVED, current_module
from handlers.mlestar import baselines, pipeline


def test_old_strategy_paths_load_the_moved_code():
    assert load_strategy("handlers.pipeline:main") is pipeline.main
    assert load_strategy("handlers.baselines:best_candidate") is baselines.best_candidate
    assert load_strategy("mle-star") is pipeline.main


def test_an_old_backend_path_loads_the_moved_class():
    choice = select_backend("engine.agents.replay:ReplayBackend", config=PipelineConfig(), replay_source=[])
    assert isinstance(choice.backend, ReplayBackend)


def test_names_that_did_not_move_are_left_alone_and_unknown_ones_still_fail():
    assert current_module("handlers.evolution") == "handlers.evolution"
    assert current_module("handlers.phase2_inner.helper") == "handlers.mlestar.phase2_inner.helper"
    assert current_module("handlers.phase2") == "handlers.mlestar.phase2"  # not phase2_inner's entry
    with pytest.raises(StrategyError):
        load_strategy("handlers.nowhere:main")
    with pytest.raises(BackendUnavailable):
        select_backend("engine.agents.nowhere:Backend", config=PipelineConfig())


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_moved_module_exists_where_the_table_says(old):
    importlib.import_module(MOVED[old])
