"""The seven-gene schema: parsing, validation, gene ids, stubs, the mutate target.

A marker is a line ``# [SECTION: NAME]`` starting in column 0 (trailing blanks allowed). Text
before the first marker is the preamble (imports, constants): it belongs to no locus. A
solution's genes are valid iff each of the seven names occurs exactly once and no other name
occurs. A body under ``STUB_THRESHOLD`` characters once stripped is a stub. Everything here is
a pure function of the text.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from random import Random  # pure-ok: the seeded generator type only; the global RNG is never used

LOCI: tuple[str, ...] = ("DATA", "MODEL", "LOSS", "OPTIMIZER", "REGULARIZATION", "INITIALIZATION",
                         "TRAINING_TRICKS")
STUB_THRESHOLD = 20
MARKER_RE = re.compile(r"^# \[SECTION: ([^\]\n]*)\][ \t]*$", re.M)


@dataclass(frozen=True)
class Genes:
    """A script split at its markers. ``bodies`` keeps the first body of each name."""

    preamble: str
    names: tuple[str, ...]            # marker names in order of appearance (duplicates kept)
    bodies: dict[str, str]            # locus -> body text (marker line excluded, outer newlines stripped)

    @property
    def problems(self) -> list[str]:
        """Why the genes do not validate (empty when they do), phrased for the debugger."""
        out = []
        missing = [n for n in LOCI if n not in self.names]
        if missing:
            out.append("missing section markers: " + ", ".join(f"# [SECTION: {n}]" for n in missing))
        dupes = sorted({n for n in self.names if self.names.count(n) > 1})
        if dupes:
            out.append("section markers occurring more than once: " + ", ".join(dupes))
        unknown = sorted({n for n in self.names if n not in LOCI})
        if unknown:
            out.append("unknown section names: " + ", ".join(unknown) + " (allowed: " + ", ".join(LOCI) + ")")
        return out

    @property
    def valid(self) -> bool:
        return not self.problems

    def gene_ids(self) -> dict[str, str]:
        return {locus: gene_id(self.bodies[locus]) for locus in LOCI} if self.valid else {}

    def stub_loci(self) -> list[str]:
        return [locus for locus in LOCI if locus in self.bodies and is_stub(self.bodies[locus])]


def parse_genes(code: str) -> Genes:
    text = code.replace("\r\n", "\n").replace("\r", "\n")
    matches = list(MARKER_RE.finditer(text))
    if not matches:
        return Genes(preamble=text, names=(), bodies={})
    names: list[str] = []
    bodies: dict[str, str] = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        name = m.group(1).strip()
        names.append(name)
        bodies.setdefault(name, text[m.end():end].strip("\n"))
    return Genes(preamble=text[: matches[0].start()], names=tuple(names), bodies=bodies)


def normalise(body: str) -> str:
    """LF endings, right-stripped lines, blank runs collapsed to one, outer blanks stripped."""
    lines = [line.rstrip() for line in body.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if line == "" and out and out[-1] == "":
            continue
        out.append(line)
    return "\n".join(out).strip()


def gene_id(body: str) -> str:
    return hashlib.sha256(normalise(body).encode("utf-8")).hexdigest()[:16]


def is_stub(body: str, threshold: int = STUB_THRESHOLD) -> bool:
    return len((body or "").strip()) < threshold


def non_stub_loci(genes: Genes, threshold: int = STUB_THRESHOLD) -> list[str]:
    return [locus for locus in LOCI if len((genes.bodies.get(locus) or "").strip()) >= threshold]


def select_non_stub_gene(genes: Genes, rng: Random,
                         stub_threshold: int = STUB_THRESHOLD) -> tuple[str, list[str], bool]:
    """(target locus, the candidates it was drawn from, whether every locus was a stub).

    Plan §7: random among loci whose stripped content is at least ``stub_threshold``
    characters; if all are stubs, any locus.
    """
    candidates = non_stub_loci(genes, stub_threshold)
    all_stubs = not candidates
    pool = list(LOCI) if all_stubs else candidates
    return pool[rng.randrange(len(pool))], pool, all_stubs


# The stub form the prompts show. The plan's §11 example ("# Not applicable — loss is handled
# internally by the model.") is longer than the 20-character threshold that defines a stub, so
# a model copying it would write genes that count as real (and could be picked for mutation);
# the prompts therefore ask for this short form.
STUB_BODY = "# not applicable"
STUB_EXAMPLE = "".join(f"# [SECTION: {name}]\n{STUB_BODY}\n\n" for name in ("LOSS", "OPTIMIZER", "INITIALIZATION"))


def structure_error(genes: Genes) -> str:
    """The synthetic error a debugger sees when a script's genes do not validate."""
    return ("The script does not carry the required gene structure: " + "; ".join(genes.problems) + ".\n"
            "Every solution must contain each of these seven marker lines exactly once, starting in "
            "column 0, in this order: " + ", ".join(f"# [SECTION: {n}]" for n in LOCI) + ".")
