"""Tasks with a free-text column, in the split layout (``public/``, ``private/answers.csv``), for the builtin agent's text block.

``review_task`` is synthetic (a seeded RNG writes short reviews from a shared vocabulary and a few
words that lean to each of three classes), so a test sees the same text on every machine.
``fortunes_task`` is real public text: three of the Debian ``fortunes`` package's files (politics,
science, work; BSD-licensed, see /usr/share/doc/fortunes/copyright), 500 quotations each, the
file a quotation came from as its class. It is there only where that package is installed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

FORTUNES = Path("/usr/share/games/fortunes")
FORTUNE_CLASSES = ("politics", "science", "work")
COMMON = ("the service was and it is we a very this place food time staff really would again "
          "one here our table order ordered came all but with for not so").split()
LEANING = {
    "negative": "cold rude slow awful bland dirty noisy overpriced disappointing stale".split(),
    "neutral": "okay average fine decent standard usual ordinary plain reasonable moderate".split(),
    "positive": "delicious friendly quick wonderful fresh lovely cosy tasty excellent perfect".split(),
}


def _write(dest: Path, frame: pd.DataFrame, target: str, default: str, test_share: float = 0.2) -> Path:
    public, private = dest / "public", dest / "private"
    public.mkdir(parents=True, exist_ok=True)
    private.mkdir(parents=True, exist_ok=True)
    order = np.random.default_rng(0).permutation(len(frame))
    frame = frame.iloc[order].reset_index(drop=True)
    frame.insert(0, "id", np.arange(len(frame)))
    cut = int(len(frame) * (1 - test_share))
    train, test = frame.iloc[:cut], frame.iloc[cut:]
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=target).to_csv(public / "test.csv", index=False)
    pd.DataFrame({"id": test["id"], target: default}).to_csv(public / "sample_submission.csv", index=False)
    test[["id", target]].to_csv(private / "answers.csv", index=False)
    (public / "description.md").write_text(f"Predict `{target}` from the text.\n\n## Evaluation\n\nAccuracy.\n")
    return dest


def review_text(rng: np.random.Generator, label: str) -> str:
    """A review of 8-20 words: mostly common words, a few leaning to its class, some to another."""
    words = list(rng.choice(COMMON, size=int(rng.integers(6, 15))))
    others = [k for k in LEANING if k != label]
    words += list(rng.choice(LEANING[label], size=int(rng.integers(1, 4))))
    words += list(rng.choice(LEANING[others[int(rng.integers(2))]], size=int(rng.integers(0, 3))))
    rng.shuffle(words)
    return " ".join(words).capitalize() + "."


def review_task(dest: Path, n: int = 900, extra_number: bool = False) -> Path:
    """Three-class review sentiment; with ``extra_number``, a numeric column of pure noise too."""
    rng = np.random.default_rng(11)
    labels = rng.choice(sorted(LEANING), size=n)
    frame = pd.DataFrame({"review": [review_text(rng, label) for label in labels]})
    if extra_number:
        frame["visits"] = rng.integers(0, 30, size=n)
    frame["sentiment"] = labels
    return _write(dest, frame, "sentiment", "neutral")


def fortunes(name: str) -> list[str]:
    """The quotations of one fortune file, whitespace collapsed."""
    text = (FORTUNES / name).read_text(encoding="utf-8", errors="replace")
    return [" ".join(entry.split()) for entry in text.split("\n%\n") if entry.strip()]


def fortunes_task(dest: Path, per_class: int = 500) -> Path:
    rows = []
    for name in FORTUNE_CLASSES:
        quotes = fortunes(name)
        picked = np.random.default_rng(len(name)).choice(len(quotes), size=min(per_class, len(quotes)), replace=False)
        rows += [{"quote": quotes[i], "topic": name} for i in sorted(picked)]
    return _write(dest, pd.DataFrame(rows), "topic", FORTUNE_CLASSES[0])
