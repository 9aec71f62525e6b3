"""A redaction marker is opaque to every later pass (spec 01 OBS-59, OBS-60; spec 04 FMT-33a; review s44 O2 / R10).

``scrub_text`` scans its result again until nothing changes (a credential glued to another's end has no boundary
before it until the first is replaced). That rescan read the markers of the first pass as text:
``curl -u sk_live_…: https://…`` became ``curl -u <redacted:<redacted:9b7914a2> https://…`` (the client rule took
``<redacted`` for a user and the rest for a password). No span may now cover any part of a marker: a text keeps
every marker it holds whole, the result never holds a malformed marker, and scrubbing is idempotent.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import MARKER_RE, find_spans, redaction_marker, scrub_text

P = "Xk9mQ2vLp7Rt"
KEYS = ("ghp_" + "Ab3dEf6hIj" * 3 + "abcdef", "AKIAIOSFODNN7ABCDEF2", "sk_live_" + "Ab3dEf6hIj" * 3, P,
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0." + P, "xoxb-123456789012-" + P + P, "483920")
PIECES = ("curl -u ", "curl --user ", "-u ", ":", "@", "//", "https://", "password=", "token: ", "smbclient //h/s -U ",
          "%", "/", " ", "Bearer ", "Authorization: Basic ", "sqlplus ", "mysql -p", "'", '"', "=", ",", ";", "\\n",
          "Cookie: a=", "; b=", "user:", "redis://", "?sig=", "&key=", "${DB_PASSWORD:-", "}", "-p ", "sshpass -p ",
          "openssl enc -pass pass:", "xfreerdp /p:", "docker login -p ", '{"pin": ', "credentials: ", "user/pass: ",
          "# Key: ", "session_key=", "(", ")", "[", "]", "\n", "...", ". Next", "%2F", "%22")


def _malformed(text: str) -> bool:
    """Whether ``text`` holds a piece of a marker outside the whole markers in it."""
    rest = MARKER_RE.sub("", text)
    return "<redacted" in rest or "redacted:" in rest


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.one_of(st.sampled_from(PIECES), st.sampled_from(KEYS)), min_size=2, max_size=8),
       wrap=st.sampled_from(["plain", "json", "doc"]))
def test_property_obs59_no_malformed_marker_and_scrubbing_is_idempotent(parts: list[str], wrap: str) -> None:
    """OBS-59, OBS-60 (O2): texts built of credentials and the pieces of the shapes around them (client options,
    userinfo, names, schemes, quotes, brackets), plain or JSON-escaped: the result holds no piece of a marker
    outside whole markers, and scrubbing it again changes nothing."""
    text = "".join(parts)
    if wrap == "json":
        text = json.dumps(text)
    elif wrap == "doc":
        text = json.dumps({"command": text, "n": 1})
    out = scrub_text(text)
    assert not _malformed(out), (text, out)
    assert scrub_text(out) == out, (text, out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), parts=st.lists(st.sampled_from(PIECES), min_size=1, max_size=6))
def test_property_obs59_markers_already_in_a_text_stay_whole(seed: int, parts: list[str]) -> None:
    """OBS-59 (O2): markers of an earlier scrub, put anywhere among the pieces of the shapes (after ``-u``, as a
    value, glued to a ``:``), are kept byte for byte; no span of ``find_spans`` covers a piece of one."""
    r = random.Random(seed)
    markers = [redaction_marker(str(r.random())) for _ in range(3)]
    pieces = list(parts)
    for marker in markers:
        pieces.insert(r.randrange(len(pieces) + 1), marker)
    text = "".join(pieces)
    for start, end, _ in find_spans(text):
        for m in MARKER_RE.finditer(text):
            assert end <= m.start() or start >= m.end(), (text, text[start:end])
    out = scrub_text(text)
    for marker in markers:
        assert out.count(marker) >= text.count(marker)
    assert not _malformed(out)


@pytest.mark.parametrize("text, expected", [
    ("curl -u sk_live_" + "Ab3dEf6hIj" * 3 + ": https://api.stripe.com/v1/charges",
     "curl -u {m0}: https://api.stripe.com/v1/charges"),
    (f"curl -u AKIAIOSFODNN7ABCDEF2:{P}abcd https://x", "curl -u {m0}:{m1} https://x"),
    ("curl --user ghp_" + "Ab3dEf6hIj" * 3 + "abcdef:x-oauth-basic https://api.github.com",
     "curl --user {m0}:x-oauth-basic https://api.github.com"),
])
def test_obs59_the_reviewed_client_options_keep_their_markers_whole(text: str, expected: str) -> None:
    """OBS-59 (O2): the review's ``curl -u KEY:`` forms: the key becomes one marker, the ``:`` and the rest stay."""
    secrets = [s for s in ("sk_live_" + "Ab3dEf6hIj" * 3, "AKIAIOSFODNN7ABCDEF2", P + "abcd",
                           "ghp_" + "Ab3dEf6hIj" * 3 + "abcdef") if s in text]
    out = scrub_text(text)
    assert out == expected.format(**{f"m{i}": redaction_marker(s) for i, s in enumerate(secrets)})
    assert scrub_text(out) == out


def test_obs59_a_value_reaching_a_marker_keeps_it() -> None:
    """OBS-59 (O2): a user name left before a redacted password (``credentials: admin:<marker>``) is read with the
    marker as its value's end: the rescan takes nothing more."""
    once = scrub_text(f"credentials: admin:{P}")
    assert once == f"credentials: admin:{redaction_marker(P)}"
    assert scrub_text(once) == once
