"""What a run costs with the claude backend, per preset — measured through the REAL bundled Claude
CLI (in its sandbox) against the loopback Messages-API stand-in (tests/support), which answers
the engine's real prompts with canned scripts and counts tokens at ~4 characters each. The CLI
prices those tokens for the model named here, so the figures are what the same number of calls
and tokens would cost; a real model writes longer answers and uses more tool turns, so treat
them as a floor, not a quote.

    python bench/bench_claude_cost.py [--presets quick paper] [--task iris] [--model claude-sonnet-4-5] [--smoke]

(--smoke: the quick preset with every phase as small as it gets, to check the bench runs.) Exit 1 when a
run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.campaign.support import SMALL_ARGS  # noqa: E402  (every phase once, as small as it gets)
from tests.support.canned_model import CannedModel  # noqa: E402
from tests.support.messages_api import MessagesAPIStandIn  # noqa: E402


def run(preset: str, task: str, model: str, work: Path, extra: list[str]) -> dict:
    with MessagesAPIStandIn(CannedModel()) as api:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
        env.update(ANTHROPIC_API_KEY="sk-ant-bench-" + "0" * 30, ANTHROPIC_BASE_URL=api.url, MLE_STAR_MODEL=model,
                   PYTHONPATH=str(ROOT))
        db = work / preset / "engine.db"
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "engine.cli", "start", "--task", task, "--agent", "claude",
                               "--preset", preset, "--db", str(db), "--run-id", preset, "--json", *extra],
                              env=env, capture_output=True, text=True, cwd=ROOT)
        wall = time.monotonic() - started
        if proc.returncode != 0:
            return {"preset": preset, "error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}
        summary = json.loads(proc.stdout[proc.stdout.index("{"):])
        tokens_in = sum(len(json.dumps(e.body)) // 4 for e in api.message_calls())
        return {"preset": preset, "agent_calls": summary["agent_calls"], "api_requests": len(api.message_calls()),
                "cost_usd": summary["cost_usd"], "cost_breakdown": summary["cost_breakdown"],
                "input_tokens_approx": tokens_in, "wall_s": round(wall, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["quick", "paper"])
    parser.add_argument("--task", default="iris")
    parser.add_argument("--model", default="claude-sonnet-4-5")
    parser.add_argument("--smoke", action="store_true", help="quick, every phase as small as it gets")
    args = parser.parse_args()
    extra = SMALL_ARGS if args.smoke else []
    if args.smoke:
        args.presets = ["quick"]
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-claude-cost-") as tmp:
        for preset in args.presets:
            row = run(preset, args.task, args.model, Path(tmp), extra)
            failed = failed or "error" in row
            print(json.dumps(row))
            if "error" not in row:
                print(f"{preset:>6}: {row['agent_calls']} agent calls, {row['api_requests']} API requests, "
                      f"${row['cost_usd']:.2f} at {args.model} prices, {row['wall_s']} s", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
