"""Gene schema (decisions "Genes"), stub detection and select_non_stub_gene (plan §7, §16)."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from handlers.evolution.genes import (
    LOCI,
    STUB_THRESHOLD,
    gene_id,
    is_stub,
    parse_genes,
    select_non_stub_gene,
    structure_error,
)
from tests.evolution.helpers import code_from, long


def test_seven_markers_validate_and_preamble_belongs_to_no_locus():
    code = code_from({locus: long(locus) for locus in LOCI}, preamble="import numpy as np\nSEED = 1\n")
    genes = parse_genes(code)
    assert genes.valid
    assert genes.preamble == "import numpy as np\nSEED = 1\n"
    assert list(genes.bodies) == list(LOCI)
    assert genes.bodies["MODEL"] == long("MODEL")


def test_missing_duplicate_and_unknown_markers_are_invalid_with_reasons():
    bodies = {locus: long(locus) for locus in LOCI}
    missing = code_from(bodies).replace("# [SECTION: LOSS]\n", "")
    dup = code_from(bodies) + "# [SECTION: MODEL]\nx = 2\n"
    unknown = code_from(bodies) + "# [SECTION: EXTRA]\nx = 2\n"
    indented = code_from(bodies).replace("# [SECTION: DATA]", "    # [SECTION: DATA]")
    for code, word in ((missing, "LOSS"), (dup, "MODEL"), (unknown, "EXTRA"), (indented, "DATA")):
        genes = parse_genes(code)
        assert not genes.valid
        assert word in structure_error(genes)
        assert genes.gene_ids() == {}


def test_gene_id_is_the_hash_of_the_normalised_body():
    assert gene_id("x = 1\r\ny = 2  \n\n\n\nz = 3\n") == gene_id("\nx = 1\ny = 2\n\nz = 3")
    assert gene_id("x = 1") != gene_id("x = 2")


def test_stub_threshold_is_twenty_stripped_characters():
    assert is_stub("   # not applicable   ")          # 16 characters once stripped
    assert is_stub("x" * (STUB_THRESHOLD - 1))
    assert not is_stub("x" * STUB_THRESHOLD)


def test_select_non_stub_gene_never_picks_a_stub():
    bodies = {locus: long(locus) for locus in ("DATA", "MODEL", "TRAINING_TRICKS")}
    genes = parse_genes(code_from(bodies))   # LOSS, OPTIMIZER, REGULARIZATION, INITIALIZATION are "# n/a"
    seen = set()
    for seed in range(200):
        locus, candidates, all_stubs = select_non_stub_gene(genes, random.Random(seed))
        assert not all_stubs and candidates == ["DATA", "MODEL", "TRAINING_TRICKS"]
        seen.add(locus)
    assert seen == {"DATA", "MODEL", "TRAINING_TRICKS"}   # random among the non-stubs


def test_select_non_stub_gene_falls_back_to_any_locus_when_all_are_stubs():
    genes = parse_genes(code_from({}))
    picks = {select_non_stub_gene(genes, random.Random(s))[0] for s in range(300)}
    assert select_non_stub_gene(genes, random.Random(0))[2] is True
    assert picks == set(LOCI)


@given(st.dictionaries(st.sampled_from(LOCI), st.text(alphabet="abc xyz=", max_size=40)), st.integers(0, 10**6))
def test_select_non_stub_gene_property(bodies, seed):
    bodies = {k: v.replace("#", "") for k, v in bodies.items()}
    genes = parse_genes(code_from(dict(bodies.items())))
    locus, candidates, all_stubs = select_non_stub_gene(genes, random.Random(seed))
    non_stub = [lc for lc in LOCI if len(genes.bodies[lc].strip()) >= STUB_THRESHOLD]
    assert locus in candidates
    assert candidates == (non_stub or list(LOCI))
    assert all_stubs == (not non_stub)


def test_the_prompted_stub_form_is_a_stub():
    from handlers.evolution.genes import STUB_BODY, STUB_EXAMPLE
    from handlers.evolution.prompts import STRUCTURE_RULES

    assert is_stub(STUB_BODY)
    genes = parse_genes(STUB_EXAMPLE)
    assert genes.stub_loci() == ["LOSS", "OPTIMIZER", "INITIALIZATION"]
    assert STUB_EXAMPLE.strip() in STRUCTURE_RULES
    for locus in LOCI:
        assert f"# [SECTION: {locus}]" in STRUCTURE_RULES
