"""A call's usage over its tries (engine/agents/retry.py): what each try used adds up, in both
backends, so a call that failed twice and then answered shows all it used and spent."""

from __future__ import annotations

from engine.agents.retry import add_try_usage, with_earlier_tries
from events.core import AgentCallCompleted


def test_counts_add_up_nested_ones_too_and_the_rest_is_the_latest_tries():
    first = {"input_tokens": 100, "output_tokens": 5, "cost_source": "relay",
             "relay": {"requests": 2, "charged_at_most_usd": 0.25, "refused": ["402: spent"], "cli_cost_usd": None}}
    second = {"input_tokens": 40, "output_tokens": 7, "cost_source": "relay",
              "relay": {"requests": 1, "cli_cost_usd": 0.01}, "stopped_for_deadline": True}
    total = add_try_usage(add_try_usage({}, first), second)
    assert total == {"input_tokens": 140, "output_tokens": 12, "cost_source": "relay", "stopped_for_deadline": True,
                     "relay": {"requests": 3, "charged_at_most_usd": 0.25, "refused": ["402: spent"],
                               "cli_cost_usd": 0.01}}
    assert first["relay"]["requests"] == 2  # the tries' own usage is left as it was


def test_a_result_after_failed_tries_carries_their_cost_and_usage():
    answer = AgentCallCompleted(effect_id="e", text="ok", cost_usd=0.02, usage={"input_tokens": 10, "num_turns": 1})
    assert with_earlier_tries(answer, None, {}) is answer
    after = with_earlier_tries(answer, 0.03, {"input_tokens": 5})
    assert after.cost_usd == 0.05 and after.usage == {"input_tokens": 15, "num_turns": 1}
    unknown = with_earlier_tries(answer, None, {"input_tokens": 5})  # the earlier tries' cost unknown
    assert unknown.cost_usd == 0.02 and unknown.usage["input_tokens"] == 15
    flags = with_earlier_tries(answer, 0.0, {"denied": True})
    assert flags.usage["denied"] is True  # a flag is not a count
