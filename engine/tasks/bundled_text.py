"""Bundled tasks with free text (issue 62): two text classifications and a table with a text
column beside numbers. Each is cut from text a Debian package ships; ``LICENSE-fortunes.txt``,
``LICENSE-wordnet.txt`` and ``LICENSE-bible-kjv.txt`` say which files, under which licence and how
they were cut. Whether a task is held out is ``engine.tasks.protocol``'s business.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from engine.tasks.bundled_islp import read_vendored
from engine.tasks.bundled_spec import BundledSpec
from engine.tasks.reference_media import text_reference_score
from events.domain import DataModality, TaskType


def text_table(name: str) -> Callable[[], pd.DataFrame]:
    """A vendored table whose text is kept as written: only an empty cell is missing ("None",
    "NA" or "null" inside a quotation are words)."""
    def load() -> pd.DataFrame:
        return read_vendored(name, only_empty_is_missing=True)

    return load


TEXT_SPECS: tuple[BundledSpec, ...] = (
    BundledSpec(
        name="fortune-file",
        title="Which Fortune File a Quotation Comes From",
        one_liner="tell which of twelve fortune-cookie files a quotation or joke comes from, from its text",
        load=text_table("debian_fortunes.csv.gz"),
        target="fortune_file",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is one entry of the fortune-cookie files of the BSD `fortune` program: a "
            "quotation, a joke, a definition or a verse. Predict `fortune_file`, the file it is "
            "filed in: art, computers, definitions, men-women, people, platitudes, politics, "
            "science, songs-poems, wisdom, work or zippy (8,657 entries)."
        ),
        features="`quotation` (text: the entry, line breaks collapsed to spaces).",
        seed=93,
        modality=DataModality.text,
        reference=text_reference_score,
    ),
    BundledSpec(
        name="wordnet-noun-category",
        title="The Category of a Noun From Its Definition",
        one_liner="tell which of twelve categories (animal, artifact, person, ...) a noun sense belongs to, from its dictionary definition",
        load=text_table("wordnet_noun_glosses.csv.gz"),
        target="category",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is one sense of an English noun in WordNet 3.0, given by its gloss: the "
            "definition and, for some, examples of use (the noun itself is not given). Predict "
            "`category`, the lexicographer file WordNet files the sense under: act, animal, "
            "artifact, attribute, cognition, communication, group, location, person, plant, "
            "state or substance (15,000 senses, 1,250 of each)."
        ),
        features="`gloss` (text: the definition, examples in quotes after a semicolon).",
        seed=94,
        modality=DataModality.text,
        reference=text_reference_score,
    ),
    BundledSpec(
        name="bible-verse-section",
        title="Which Part of the Bible a Verse Comes From",
        one_liner="tell which of seven parts of the Bible a King James verse comes from, from its text and where it stands in its chapter",
        load=text_table("kjv_verses.csv.gz"),
        target="book_group",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is one verse of the King James Version (12,000 of its 31,102 verses). "
            "Predict `book_group`, the part of the Bible its book belongs to: law (Genesis to "
            "Deuteronomy), history (Joshua to Esther), wisdom (Job to the Song of Solomon), "
            "major_prophets (Isaiah to Daniel), minor_prophets (Hosea to Malachi), gospels_acts "
            "(Matthew to Acts) or epistles_revelation (Romans to Revelation)."
        ),
        features=(
            "`text` (the verse), `chapter` (the chapter's number in its book), `verse` (the "
            "verse's number in its chapter) and `verses_in_chapter` (how many verses that chapter has)."
        ),
        seed=95,
        modality=DataModality.mixed,
        reference=text_reference_score,
    ),
)
