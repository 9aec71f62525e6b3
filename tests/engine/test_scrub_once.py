"""``scrub_once``: the same result as the scrubber, each distinct text scanned once, results marked as scrubbed
(issue #29 item 5; spec 01 OBS-58, OBS-60; spec 04 FMT-33a).

Marking a scrub's result as scrubbed (a later walk keeps it as it is) is only sound if the scrubber is
idempotent; that is checked here on generated text with planted credentials of several shapes.
"""

from __future__ import annotations

import secrets

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine import scrub, scrub_once as once
from hermes_pipeline.engine.scrub import REDACTION_FAILED, safe_scrub, scrub_text
from hermes_pipeline.engine.scrub_once import is_scrubbed, scans, scrub_once

SECRETS = st.sampled_from([
    "sk-proj-{h}", "ghp_{h}", "AKIA{u}", "Authorization: Bearer {h}", "password={h}", '"api_key": "{h}"',
    "postgres://user:{h}@db:5432/x", "OPENAI_API_KEY={h}", "token: {h}", "xoxb-1234-{h}",
])
FILLER = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120)


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        parts.append(draw(FILLER))
        shape = draw(SECRETS)
        parts.append(shape.format(h=secrets.token_hex(16), u=secrets.token_hex(8).upper()[:16]))
    parts.append(draw(FILLER))
    text = draw(st.sampled_from(["".join(parts), " ".join(parts)]))
    return draw(st.sampled_from([text, repr(text), '{"content": ' + repr(text) + "}"]))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(texts())
def test_scrub_once_gives_a_fixpoint_of_the_scrubber(text: str) -> None:
    """OBS-58: what ``scrub_once`` returns is unchanged by another scrub, so a result marked as scrubbed needs no
    second walk; it is what ``safe_scrub`` returns whenever one pass is a fixpoint, the same the second time, and
    kept as it is when given back."""
    first = scrub_once(text)
    assert scrub_text(first) == first
    once_more = safe_scrub(text)
    if scrub_text(once_more) == once_more:
        assert first == once_more
    assert scrub_once(text) == first
    assert scrub_once(first) is first


def test_a_credential_glued_to_another_is_not_left_in_clear() -> None:
    """OBS-58: one pass of the scrubber replaces the first of two glued credentials and leaves the second in
    clear (found by the test above); ``scrub_once`` scrubs to a fixpoint, so neither is left."""
    tail = f"sk-proj-{secrets.token_hex(16)}"
    text = f"AKIA{secrets.token_hex(8).upper()}{tail}"
    assert tail not in scrub_once(text)
    assert tail not in scrub_once(f"keys: {text} end")


def test_each_distinct_text_is_scanned_once_and_its_result_is_kept_as_it_is() -> None:
    text = f"deploy with OPENAI_API_KEY=sk-proj-{secrets.token_hex(20)} now " + "x" * 400
    before = scans()
    out = scrub_once(text)
    assert out != text and "<redacted:" in out
    assert scrub_once(text) is out  # the remembered result, the same object: no container copy downstream
    assert scrub_once(out) is out and is_scrubbed(out)
    assert scrub_once(str(text)) is out
    assert scans() - before == 1


def test_a_new_redaction_key_forgets_remembered_markers() -> None:
    """A marker is keyed (BOOK-12): after a new key the same secret gets the new key's marker, never a stale one."""
    text = f"key sk-proj-{secrets.token_hex(20)} here"
    old = scrub._redaction_key
    first = scrub_once(text)
    try:
        scrub.set_redaction_key(b"another key for this test")
        second = scrub_once(text)
        assert second != first and second == safe_scrub(text)
    finally:
        scrub.set_redaction_key(old)
    assert scrub_once(text) == first


def test_a_failed_scrub_is_the_failure_marker_and_is_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-60: a scrub that raises yields ``<redaction failed>``, never the raw text; the next call scans again."""
    text = f"key sk-proj-{secrets.token_hex(20)} here"

    def boom(value: str) -> str:
        raise RuntimeError("regex engine exploded")

    with monkeypatch.context() as patch:
        patch.setattr(scrub, "scrub_text", boom)
        assert scrub_once(text) == REDACTION_FAILED
    assert "<redacted:" in scrub_once(text)


def test_the_tables_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory: both tables are emptied when they would hold more than their budget of characters."""
    monkeypatch.setattr(once, "BUDGET_CHARS", 2_000)
    for _ in range(20):
        scrub_once(f"key sk-proj-{secrets.token_hex(20)} " + "y" * 300)
    held = sum(len(k) + len(v) for k, v in once._memo.items())
    assert held <= 2_000 and len(once._scrubbed) <= 2_000 // 300
