"""The ids the engine makes are their own scrubbed form, so recording them as clean where they are made gives what
a scan would (issue #29 item 5; spec 01 §4, OBS-58; spec 04 FMT-33a).

Every generator of :mod:`hermes_pipeline.engine.ids` is run on generated random bits (its random source replaced
by the drawn value) and the scrubber, every rule ungated, finds nothing in what it returns; the generator records
that very text in ``made_clean``, and ``scrub_once`` then keeps it without a scan. A text the engine did not make
(a host's id of the same shape with a credential after it) is not recorded and is scanned.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine import ids, scrub_once
from hermes_pipeline.engine.scrub import find_spans, scrub_text

SECRET = "sk-proj-" + "a1B2c3D4e5F6g7H8" * 2


class Bits:
    """A stand-in for the ids' random source that returns a drawn value (cut to the bits asked for)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def getrandbits(self, k: int) -> int:
        return self.value & ((1 << k) - 1)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(0, 2**96 - 1), st.sampled_from([0, 2**96 - 1, int("a" * 24, 16), int("0f" * 12, 16),
                                                              int("deadbeef" * 3, 16)])),
       st.binary(min_size=16, max_size=16), st.integers(0, 10**9))
def test_every_generated_id_is_clean_and_recorded(bits: int, raw: bytes, count: int) -> None:
    """OBS-58: no credential rule matches an id the engine makes, whatever its random digits; the very text is
    recorded as made, and a scan of it changes nothing."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ids, "_rng", Bits(bits))
        m.setattr(ids.uuid, "uuid4", lambda: uuid.UUID(bytes=raw, version=4))
        m.setattr(ids.os, "urandom", lambda n: raw[:n])
        turn = ids.new_turn_id()
        made = [turn, ids.new_task_id(), ids.new_session_id(), ids.new_tool_call_id(), ids.new_request_id(),
                ids.new_subagent_id(), ids.api_request_id(turn, count)]
    for text in made:
        assert find_spans(text, gated=False) == [], text
        assert scrub_text(text) == text
        assert text in scrub_once.made_clean
        assert scrub_once.scrub_once(text) is text


def test_a_made_id_is_never_scanned() -> None:
    """The point of recording: ``scrub_once`` (and so the export's walk) does not hand a made id to the scanner."""
    made = ids.new_turn_id()
    before = scrub_once.scans()
    request_id = ids.api_request_id(made, 3)
    assert scrub_once.scrub_once(made) is made and scrub_once.scrub_once(request_id) is request_id
    assert scrub_once.scans() == before


@pytest.mark.parametrize("shape", ["turn_{s}", "task_{s}", "call_{s}", "subagent_{s}", "{s}"])
def test_a_foreign_text_of_the_same_shape_is_not_recorded(shape: str) -> None:
    """A host's id that looks like a made one is not in the table (membership is by the text made, not by a
    shape), so it is scanned and its credential redacted; an ``api_request_id`` built on it is not recorded."""
    foreign = shape.format(s=SECRET)
    assert foreign not in scrub_once.made_clean
    assert SECRET not in scrub_once.scrub_once(foreign)
    assert ids.api_request_id(foreign, 1) not in scrub_once.made_clean
    assert ids.api_request_id(ids.new_turn_id(), True) not in scrub_once.made_clean  # a count that is no int


def test_the_table_is_bounded() -> None:
    """Full, the table is emptied (a made id seen after that is scanned once more: time, never privacy)."""
    for _ in range(scrub_once._MADE_MAX_ENTRIES + 5):
        ids.new_task_id()
    assert len(scrub_once.made_clean) <= scrub_once._MADE_MAX_ENTRIES
