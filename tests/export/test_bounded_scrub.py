"""The bound of one value cuts scrubbed text: no credential across the cut, no half marker (FMT-33a, OBS-59).

``bounded_scrub`` scrubs a window of the text a little longer than the bound and keeps its head. Long values that
the scrubber replaced by short markers shorten the window, so the head reaches further into the text than the
bound: a credential where the head ends must still have been scrubbed whole, and the cut must not halve a marker.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.sanitize import sanitize
from hermes_pipeline.engine.scrub import MARKER_RE, marker_cut, scrub_message, truncate
from hermes_pipeline.export.bounds import SCRUB_MARGIN, bounded, bounded_scrub
from hermes_pipeline.sinks.observability_store.scan import excerpt

CAP = 1_000
SECRETS = ["postgres://app:S3cr3tPassw0rdQ@db.example.com/app", "ghp_Ab3dEf6hIjKlMnOpQrStUvWxYz0123456789",
           "sk-proj-Ab3dEf6hIjKlMnOpQrStUvWxYz0123456789abcd", "API_KEY=Xk9mQ2vLp7RtZw4Nc8"]
_BASE64 = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3"
_HALF_MARKER = re.compile(r"<redacted(?::[0-9a-f]{0,7})?(?:\.\.\.\[truncated|$)")


def _secret_part(secret: str) -> str:
    """The part of the planted secret that must never show (its credential, not its name or host)."""
    return {"p": "S3cr3tPassw0rdQ", "g": "ghp_Ab3dEf6h", "s": "sk-proj-Ab3dEf6h", "A": "Xk9mQ2vLp7Rt"}[secret[0]]


@settings(max_examples=200, deadline=None)
@given(size=st.integers(SCRUB_MARGIN - 2_000, SCRUB_MARGIN + CAP - 200), before=st.integers(0, 100),
       into=st.integers(1, 12), secret=st.sampled_from(SECRETS), extra=st.integers(0, 2 * SCRUB_MARGIN))
def test_fmt_33a_no_credential_across_the_cut_however_much_redaction_shortened_the_window(
        size: int, before: int, into: int, secret: str, extra: int) -> None:
    """A long credential before the cut (a long ``*_KEY=`` base64 value) shortens the scrubbed window by about its
    length; a credential planted across the end of the first window, or further on, never shows, even in part."""
    prefix = "x" * before + "\nPRIVATE_KEY_B64=" + (_BASE64 * (size // len(_BASE64) + 1))[:size] + "\n"
    for end in (CAP + SCRUB_MARGIN, CAP + SCRUB_MARGIN + extra):  # across the first window's end, or anywhere
        at = max(len(prefix), end - into - (len(secret) - len(_secret_part(secret))))
        text = prefix + "b" * (at - len(prefix)) + " " + secret + " " + "z" * (3 * SCRUB_MARGIN)
        out, cut = bounded_scrub(text, CAP)
        assert cut
        assert _secret_part(secret)[:8] not in out
        head = out.split("...[truncated")[0]
        assert not _HALF_MARKER.search(head)


def _partial_marker_at_end(kept: str) -> bool:
    """Whether ``kept``, once its whole markers are removed, ends in a marker's head (``<``, ``<reda``,
    ``<redacted:01``)."""
    rest = MARKER_RE.sub("", kept)
    start = rest.rfind("<", max(0, len(rest) - len("<redacted:0123abcd>")))
    return start >= 0 and "<redacted:0123abcd>".startswith(rest[start:start + 10]) and len(rest) - start < 19


@settings(max_examples=300, deadline=None)
@given(pad=st.integers(0, 40), cap=st.integers(1, 80), short=st.booleans(), twice=st.booleans())
def test_obs_59_a_cut_never_halves_a_marker(pad: int, cap: int, short: bool, twice: bool) -> None:
    """The cut falls before a marker that would cross it, wherever in the marker the bound falls (its first
    characters included); the same cut serves the sanitizer, the bound, ``truncate`` and the store's excerpt."""
    marker = "<redacted>" if short else "<redacted:0123abcd>"
    text = "x" * pad + marker + ("y" * 3 + marker if twice else "") + "y" * 100
    cut = marker_cut(text, cap)
    assert cut <= cap
    assert cut == cap or MARKER_RE.match(text, cut) is not None
    assert not _partial_marker_at_end(text[:cut])
    for value in (truncate(text, cap), bounded(text, max(cap, 1)), excerpt(text, cap + 1) or ""):
        head = value.split("...[truncated")[0].removesuffix("…")
        assert not _partial_marker_at_end(head)
        assert MARKER_RE.sub("", head).find("<") < 0


@settings(max_examples=60, deadline=None)
@given(pad=st.integers(960, 1_000))
def test_obs_59_a_scrubbed_value_cut_at_its_marker_keeps_no_half_marker(pad: int) -> None:
    """A credential just before the bound: its marker is kept whole or dropped whole by the sanitizer, the bound,
    and the error-message cut (``scrub_message``, whose cut the JSON log formatter shares)."""
    long_text = "x" * pad + " password=Xk9mQ2vLp7RtZw4Nc8 " + "y" * 9000
    for value in (sanitize(long_text), bounded_scrub(long_text, 1_000)[0], scrub_message(long_text, 1_000)):
        head = value.split("...[truncated")[0]
        assert "Xk9mQ2vLp7Rt" not in head
        assert not _partial_marker_at_end(head)
        assert MARKER_RE.sub("", head).find("<") < 0


@given(megabytes=st.sampled_from([0.25, 0.5, 1.0, 2.0]))
@settings(max_examples=4, deadline=None)
def test_fmt_33a_a_redaction_running_on_for_megabytes_costs_a_few_passes(megabytes: float) -> None:
    """An unterminated private key block redacts to the end of every window; the window at least doubles each time
    it grows, so the passes over the text grow with the logarithm of its length, not with the length."""
    import hermes_pipeline.export.bounds as bounds

    size = int(megabytes * 1_000_000)
    text = "note\n-----BEGIN RSA PRIVATE KEY-----\n" + ("MIIEpAIBAAKCAQEA3x9" * (size // 19 + 1))[:size]
    passes = []
    real = bounds.safe_scrub

    def counted(value: str) -> str:
        passes.append(len(value))
        return real(value)

    bounds.safe_scrub = counted
    try:
        out, cut = bounded_scrub(text, CAP)
    finally:
        bounds.safe_scrub = real
    assert cut and "MIIEpAIBAAKCAQEA3x9" not in out
    assert len(passes) <= 2 + (len(text) // (CAP + SCRUB_MARGIN)).bit_length(), passes
