"""The chain check hashes an event's fields around its payload's stored text (``store.chain.sealed_text``)
instead of parsing and dumping the payload again: that text must be exactly the canonical JSON the
event was sealed with, for any fields, and a payload stored in any other form must not chain."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from events.base import canonical_json
from store.chain import sealed_text

texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=30) | st.sampled_from(
    ['"', "\\", '","payload":{}', "\u2028", "é", "\x00", "😀"])
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | texts
payloads = st.dictionaries(texts, st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                                              | st.dictionaries(texts, inner, max_size=3), max_leaves=8),
                           max_size=5)


@given(run_id=texts, seq=st.integers(min_value=1), typ=texts, version=st.integers(min_value=1), scope=texts,
       cause=st.none() | st.integers(min_value=1), recorded_at=texts, payload=payloads)
def test_the_text_hashed_is_the_canonical_json_of_the_fields(run_id, seq, typ, version, scope, cause, recorded_at,
                                                              payload) -> None:
    fields = {"run_id": run_id, "seq": seq, "type": typ, "version": version, "scope": scope,
              "causation_seq": cause, "recorded_at": recorded_at, "payload": payload}
    assert sealed_text(run_id, seq, typ, version, scope, cause, recorded_at, canonical_json(payload)) \
        == canonical_json(fields)


@given(payload=payloads.filter(lambda p: len(p) > 0))
def test_a_payload_stored_in_another_form_gives_another_text(payload) -> None:
    spaced = json.dumps(payload, sort_keys=True, ensure_ascii=False, allow_nan=True, indent=1)
    fields = {"run_id": "r", "seq": 1, "type": "T", "version": 1, "scope": "run", "causation_seq": None,
              "recorded_at": "t", "payload": payload}
    assert sealed_text("r", 1, "T", 1, "run", None, "t", spaced) != canonical_json(fields)
