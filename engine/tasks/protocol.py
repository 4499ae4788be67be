"""The held-out protocol (issue 28; docs/heldout-protocol.md): which bundled tasks the builtin
agent may be tuned on, and which are kept back to measure whether a change holds on unseen data.

A change to the agent is measured on DEVELOPMENT only, as often as needed; HELD_OUT is run
once per change, after the change is settled, and both sets are always reported apart.
"""

from __future__ import annotations

DEVELOPMENT: tuple[str, ...] = (
    "breast-cancer", "wine", "diabetes", "penguins", "iris", "wage-education", "bike-sharing",
    "caravan-insurance", "credit-default", "digits", "seattle-weather",
    # Held out until 2026-11-25: their runs were read to find faults the agent was then changed for
    # (forests first past ten classes from zip-state, the final fit's deadline from flight-delay,
    # ...), which makes them tasks the agent was tuned on (docs/heldout-protocol.md, rule 2).
    "football-goals", "flight-delay", "zip-state", "bird-strike-damage",
    # Held out until 2026-11-26: run once (120 s, seed 0: behind FLAML on all four), their runs
    # read, and the agent changed for what they showed (Phase 1 waits for the retriever's first
    # choice, from airport-state).
    "airport-state", "earthquake-magnitude", "car-origin", "species-habitat",
    # Held out until 2026-11-26 (second rotation that day): run at 120, 300 and 600 s on f4171dc
    # and 637307d, their runs read, and the agent changed for what they showed (both Phase 2
    # paths making the same moves on industry-unemployment).
    "movie-genre", "life-expectancy", "industry-unemployment", "annual-precipitation",
    # Held out from 2026-11-26's second rotation to its third: run once at 120 s on e01d6d6
    # (behind FLAML on 3 of 4), then the agent changed from development runs (the extractor's
    # evidence over its preference for blocks not improved before, f8ec377), which by rule 2's
    # letter makes them development tasks; one of their runs, population-by-age's, was also read.
    "occupation-workers", "population-by-age", "regime-type", "vowel-speaker",
    # Held out from 2026-11-26's third rotation to 2026-11-27: their logs were read and the agent
    # changed from that reading (senator-tenure: the planner's widening to a blend, stop 43), or
    # read in full without a change (route-airline), or read for a fall no change was made from
    # (solar-module-technology, whose rotation stop 42 asked for).
    "route-airline", "senator-tenure", "solar-module-technology",
    # Held out on 2026-11-27 for one run (120 s, seed 0, 6c0edd3: far behind both peers), then their
    # logs were read and the agent changed for what they showed (Phase 1 waits longer for its first
    # choice, from town-country; docs/heldout-protocol.md).
    "airport-elevation", "town-country",
    # Held out from 2026-11-26's third rotation to 2026-11-27 (stop 49): six runs at 120 s and
    # 600 s with seeds 0-2, two of them 3.5-5 % worse than the other four, a failure that comes and
    # goes with the seed; its runs are read to find why, which makes it a development task.
    "athlete-weight",
    # Held out on 2026-11-27 (stop 49) in athlete-weight's place: run at 120 s with seeds 0-2 and at
    # 600 s with seed 0, behind both peers every time (1.6-2.7 % on the means); its runs are read to
    # find why (stop 50), which makes it a development task.
    "galaxy-velocity",
)
HELD_OUT: tuple[str, ...] = (
    "film-oscar",
    # Added on 2026-11-27 (the fifth rotation) from two packages' tables no run had seen.
    "hourly-sunlight", "yeast-gene-function", "image-segment",
    # Added on 2026-11-27 in galaxy-velocity's place (a regression with text columns), from a package
    # no task had used (nk_datasets' Japanese baseball seasons), before any run of the agent on it.
    "batter-home-runs",
    # The pre-registered set of issue 64 (docs/heldout-protocol.md, "The pre-registered held-out
    # set"): chosen by the written criteria and committed with them before any run on them.
    "census-occupation", "bike-trip-duration", "thyroid-hypothyroid", "wine-low-quality",
    "software-defects", "german-credit-risk", "batter-stolen-bases", "player-salary",
    "fielder-position", "pitcher-strikeouts",
)
# Held-out tasks whose runs or figures were read to debug or to decide a change (rule 6): they are
# tuned on now (most were moved to DEVELOPMENT), but they stay in every held-out report, marked
# burned, so that a task that did badly never quietly leaves the held-out figures. When and why.
BURNED: dict[str, str] = {
    **dict.fromkeys(("football-goals", "flight-delay", "zip-state", "bird-strike-damage"),
                    "2026-11-25: runs read, agent changed for them"),
    **dict.fromkeys(("airport-state", "earthquake-magnitude", "car-origin", "species-habitat"),
                    "2026-11-26: run once, runs read, agent changed (from airport-state)"),
    **dict.fromkeys(("movie-genre", "life-expectancy", "industry-unemployment", "annual-precipitation"),
                    "2026-11-26: runs read, agent changed (from industry-unemployment)"),
    **dict.fromkeys(("occupation-workers", "population-by-age", "regime-type", "vowel-speaker"),
                    "2026-11-26: run once, agent changed after; population-by-age's run read"),
    **dict.fromkeys(("route-airline", "senator-tenure", "solar-module-technology"),
                    "2026-11-27: logs read (senator-tenure: agent changed)"),
    **dict.fromkeys(("airport-elevation", "town-country"),
                    "2026-11-27: run once, logs read, agent changed (from town-country)"),
    "athlete-weight": "2026-11-27: behind in 2 of 6 runs; its runs read to find why",
    "galaxy-velocity": "2026-11-27: behind both peers every run; its runs read to find why",
    # Still in HELD_OUT (run with the set) but not blind: the set's 600 s figures are the figure
    # that decided docs/decisions/0028 (members drop), and batter-home-runs' anytime curve (600 s
    # worse than 120 s) is the context of 0029 (noise margin).
    **dict.fromkeys(("film-oscar", "hourly-sunlight", "yeast-gene-function", "image-segment"),
                    "2026-11-28: the set's 600 s figures decided decision 0028"),
    "batter-home-runs": "2026-11-28: its 600 s figures decided decision 0028, its anytime curve led to 0029",
    # Of the pre-registered set, still run with it: its final graded 29 % below its own Phase 1 best
    # at 120 s; one run's candidates were graded to find why (a linear member's -47,647 s for one
    # test row), and regression predictions are kept within the training target's range since.
    "bike-trip-duration": "2026-11-30: one run's candidates graded to debug; agent changed (predictions kept in the target's range)",
}
# Every task ever registered held out (rule 5: the list only grows; engine/tasks/heldout_registry.json
# is the committed record a test compares it with): the held-out report covers all of them.
EVER_HELD_OUT: tuple[str, ...] = tuple(dict.fromkeys((*HELD_OUT, *BURNED)))
SETS: dict[str, tuple[str, ...]] = {"dev": DEVELOPMENT, "heldout": HELD_OUT}

# Text and image tasks (issue 62; docs/heldout-protocol.md, "Text and image tasks"): the same
# rules, sets of their own, reported apart from the tables and by kind, each measured against the
# peers of its kind (bench/automl_media_peers.py). The held-out ones were committed with their
# criteria before any run of any model on them.
MEDIA_KINDS: dict[str, str] = {
    "fortune-file": "text", "handwritten-digits-mnist": "image",
    "wordnet-noun-category": "text", "icon-context": "image", "bible-verse-section": "mixed",
    "webster-part-of-speech": "text", "wesnoth-unit-race": "image", "kernel-option-folder": "mixed",
    "crossfire-tile-kind": "image", "clipart-category": "image", "foldoc-subject": "text",
}
MEDIA_DEVELOPMENT: tuple[str, ...] = (
    "fortune-file", "handwritten-digits-mnist",
    # Held out from 2026-11-29 to 2026-11-30 (burned, below): tuned on since.
    "wordnet-noun-category", "icon-context", "bible-verse-section",
    # Held out blind on 2026-11-30, burned the same day (below): tuned on since.
    "wesnoth-unit-race",
)
MEDIA_HELD_OUT: tuple[str, ...] = (
    # Added on 2026-11-30, chosen by the criteria (docs/heldout-protocol.md, "Text and image tasks")
    # before any run of any model on them, from packages no other task uses.
    "webster-part-of-speech", "kernel-option-folder",
    # Added on 2026-11-30 (second), the same way, in wesnoth-unit-race's place.
    "crossfire-tile-kind", "clipart-category", "foldoc-subject",
)
# Media tasks held out and since burned (rule 6), with when and why: they stay in every held-out
# report, marked, though the agent is tuned on them now.
_TEXT_REVERT = "2026-11-30: its 120 s figures decided the revert of the text block's reading by the run's limit (792140a)"
MEDIA_BURNED: dict[str, str] = {
    "wordnet-noun-category": _TEXT_REVERT,
    "icon-context": "2026-11-30: its 120 s figures (behind pixels + HGB) led to the image features' change",
    "bible-verse-section": _TEXT_REVERT,
    "wesnoth-unit-race": ("2026-11-30: its 120 s figures (behind pixels + HGB) led to Phase 1's drafts paced to their "
                          "window (docs/decisions/0032); its runs were read to debug"),
}
# Every media task ever registered held out (rule 5): heldout_registry.json's "media_tasks", in the
# order they were registered, so the registry grows by appending (a task burned after a later one
# was registered keeps its place). tests/tasks/test_bundled_media.py fails if the order stops
# matching it, or if a task of MEDIA_BURNED or MEDIA_HELD_OUT is missing here.
MEDIA_EVER_HELD_OUT: tuple[str, ...] = (
    "wordnet-noun-category", "icon-context", "bible-verse-section",
    "webster-part-of-speech", "wesnoth-unit-race", "kernel-option-folder",
    "crossfire-tile-kind", "clipart-category", "foldoc-subject",
)
MEDIA_SETS: dict[str, tuple[str, ...]] = {"dev": MEDIA_DEVELOPMENT, "heldout": MEDIA_HELD_OUT}


def is_burned(task: str) -> bool:
    """Whether a held-out task's runs were read to debug (rule 6)."""
    return task in BURNED


def set_of(task: str) -> str | None:
    """"dev", "heldout", or None for a task outside the protocol (a user's own directory)."""
    return next((name for name, tasks in SETS.items() if task in tasks), None)


def kind_of(task: str) -> str:
    """"text", "image" or "mixed" (a table with a text column) for a media task, else "tabular"."""
    return MEDIA_KINDS.get(task, "tabular")


def media_set_of(task: str) -> str | None:
    """"dev" or "heldout" for a text or image task, None for any other."""
    return next((name for name, tasks in MEDIA_SETS.items() if task in tasks), None)
