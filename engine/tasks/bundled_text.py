"""Bundled tasks with free text (issue 62): text classifications and tables with a text column
beside numbers. Each is cut from text a Debian package ships; ``LICENSE-fortunes.txt``,
``LICENSE-wordnet.txt``, ``LICENSE-bible-kjv.txt``, ``LICENSE-gcide.txt``,
``LICENSE-linux-kconfig.txt`` and ``LICENSE-foldoc.txt`` say which files, under which licence and
how they were cut. Whether a
task is held out is ``engine.tasks.protocol``'s business.
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
    BundledSpec(
        name="webster-part-of-speech",
        title="The Part of Speech of a Word From Its Definition",
        one_liner="tell whether a word defined in Webster's 1913 dictionary is a noun, an adjective, an adverb or a transitive or intransitive verb, from its definition",
        load=text_table("gcide_definitions.csv.gz"),
        target="part_of_speech",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is the first definition of an entry of Webster's Revised Unabridged "
            "Dictionary (1913), as the GNU Collaborative International Dictionary of English "
            "keeps it: sometimes with a field in parentheses, a quotation, its author, or a note "
            "such as [Obs.]. The word itself is not given. Predict `part_of_speech`, the one the "
            "dictionary gives the entry: noun, adjective, adverb, verb_transitive or "
            "verb_intransitive (15,000 definitions, 3,000 of each)."
        ),
        features="`definition` (text: the definition as the dictionary words it).",
        seed=96,
        modality=DataModality.text,
        reference=text_reference_score,
    ),
    BundledSpec(
        name="kernel-option-folder",
        title="Which Part of the Linux Kernel an Option Belongs To",
        one_liner="tell which of sixteen folders of the Linux kernel's source (drivers/net, arch/arm, sound/soc, ...) a configuration option comes from, from its help text and a few counts",
        load=text_table("kconfig_options.csv.gz"),
        target="folder",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is one option of the Linux 6.1 kernel's configuration, as its Kconfig file "
            "declares it: the help text its authors wrote, and counts of what the declaration "
            "holds (the option's name and prompt are not given). Predict `folder`, the folder of "
            "the kernel's source whose Kconfig file declares it, cut to two levels: arch/arm, "
            "arch/powerpc, arch/x86, drivers/clk, drivers/gpu, drivers/hwmon, drivers/iio, "
            "drivers/input, drivers/media, drivers/mtd, drivers/net, drivers/tty, drivers/usb, "
            "drivers/video, lib or sound/soc (3,200 options, 200 of each)."
        ),
        features=(
            "`help` (text: the help text, line breaks collapsed to spaces), `depends_on` (how many "
            "`depends on` lines the option has), `selects` (how many options it selects or implies), "
            "`defaults` (how many default values it lists), `help_lines` (the help text's lines) "
            "and `can_be_module` (1 when the option can be built as a module, else 0)."
        ),
        seed=97,
        modality=DataModality.mixed,
        reference=text_reference_score,
    ),
    BundledSpec(
        name="foldoc-subject",
        title="The Subject of a Computing Term From Its Definition",
        one_liner="tell which of nine subjects (programming, networking, jargon, hardware, ...) a computing dictionary files a term under, from its definition",
        load=text_table("foldoc_definitions.csv.gz"),
        target="subject",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is the first definition of an entry of FOLDOC, the Free On-line Dictionary "
            "of Computing, as its editors and contributors wrote it: sometimes with the "
            "expansion of an acronym or a pronunciation in front, sometimes several sentences. "
            "The term itself is not given. Predict `subject`, the one the dictionary tags the "
            "definition with: communications, company, hardware, jargon, language (a "
            "programming language), mathematics, networking, operating_system or programming "
            "(2,343 definitions, 162 to 300 of each)."
        ),
        features="`definition` (text: the definition as the dictionary words it, cross-reference marks removed).",
        seed=101,
        modality=DataModality.text,
        reference=text_reference_score,
    ),
)
