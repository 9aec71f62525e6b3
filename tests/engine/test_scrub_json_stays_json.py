"""A JSON document stays the same JSON after scrubbing (spec 01 OBS-59, §8.2.5; spec 04 FMT-33a; review s44 O1 / R9).

A credential written as a bare scalar under a quoted key (``{"pin": 483920}``, ``{"api_key": 12345678901234}``,
``{"passwords": [4839201, 5839202]}``) was replaced by a bare marker, and the document no longer parsed. Its span is now
replaced by the marker between two of the key's own quotes, as the text writes them (``"``, ``\\"`` inside a JSON
string, ``'`` in a Python dict): the redaction is still the value's span and one marker, and the text stays valid.
YAML and ``.env`` values, written bare, keep a bare marker.

Property: generated JSON documents (nested objects and lists; credential and ordinary keys; numbers, strings,
booleans, nulls and texts holding credentials; compact, indented, non-ASCII, and as a string inside another
document) parse after ``scrub_text`` and have the same structure: the same keys in the same order, the same list
lengths, every value the same unless it became a string holding a marker.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import MARKER_RE, redaction_marker, scrub_text

CREDENTIAL_KEYS = ("password", "api_key", "pin", "otp", "token", "secret", "passcode", "db_pass", "client_secret",
                   "mfa_code", "refresh_token", "apiKey", "private_key", "auth_token", "signature", "session", "key")
ORDINARY_KEYS = ("name", "value", "count", "id", "url", "note", "max_tokens", "port", "enabled", "args", "content")
P = "Xk9mQ2vLp7Rt"

_scalars = st.one_of(
    st.integers(-10**15, 10**15), st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none(),
    st.sampled_from(["hello world", P, f"API_KEY={P}", f"Bearer {P}", f"postgres://u:{P}@h/db",
                     "ghp_" + "Ab3dEf6hIj" * 4, f"password: {P}\nuser: bob", json.dumps({"password": P, "n": 5}),
                     json.dumps({"pin": 483920}), "%040x" % 0xABCDEF, "same-origin", "483920", "Grüße, 世界"]),
    st.text(max_size=20),
)
_keys = st.sampled_from(CREDENTIAL_KEYS + ORDINARY_KEYS)
documents = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=12,
)


def _same_shape(before: Any, after: Any) -> bool:
    """``after`` is ``before`` with some scalars replaced by strings holding a marker."""
    if isinstance(before, dict):
        return isinstance(after, dict) and list(before) == list(after) and all(
            _same_shape(before[k], after[k]) for k in before)
    if isinstance(before, list):
        return isinstance(after, list) and len(before) == len(after) and all(
            _same_shape(a, b) for a, b in zip(before, after))
    if before == after and type(before) is type(after):
        return True
    return isinstance(after, str) and MARKER_RE.search(after) is not None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=st.dictionaries(_keys, documents, min_size=1, max_size=5),
       style=st.sampled_from(["compact", "indent", "unicode", "nested"]))
@example(doc={"password": "password: Xk9mQ2vLp7Rt\nuser: bob", "api_key": ["API_KEY=Xk9mQ2vLp7Rt", 0]}, style="compact")
# unescaped, {"password":"\\"","api_key":"\\""} holds three quotes in a row, once read as a triple-quoted string
@example(doc={"password": '"', "api_key": '"'}, style="compact")
def test_property_obs59_json_documents_stay_json_with_the_same_structure(doc: dict[str, Any], style: str) -> None:
    """OBS-59 (O1): a generated JSON document scrubbed as text parses, and parses to the same structure apart from
    the redacted values (a number under a credential key becomes the string of its marker)."""
    if style == "compact":
        text = json.dumps(doc, separators=(",", ":"))
    elif style == "indent":
        text = json.dumps(doc, indent=2)
    elif style == "unicode":
        text = json.dumps(doc, ensure_ascii=False)
    else:
        text = json.dumps({"tool": "write_file", "arguments": json.dumps(doc)})
    out = scrub_text(text)
    parsed = json.loads(out)
    if style == "nested":
        assert list(parsed) == ["tool", "arguments"] and parsed["tool"] == "write_file"
        parsed = json.loads(parsed["arguments"])
    assert _same_shape(doc, parsed), (text, out)


@pytest.mark.parametrize("doc, secret", [
    ({"pin": 483920}, "483920"),
    ({"password": 12345678}, "12345678"),
    ({"otp": 123456, "n": 1}, "123456"),
    ({"api_key": 12345678901234}, "12345678901234"),
    ({"refresh_token": 4839201234}, "4839201234"),
    ({"passcode": 1.5e+20}, "1.5e+20"),
])
def test_obs59_a_bare_number_under_a_credential_key_becomes_a_quoted_marker(doc: dict[str, Any], secret: str) -> None:
    """OBS-59 (O1): the number's span is replaced by its marker between the key's quotes; the rest is kept."""
    text = json.dumps(doc)
    assert scrub_text(text) == text.replace(secret, '"' + redaction_marker(secret) + '"', 1)
    assert json.loads(scrub_text(text)) == {**doc, next(iter(doc)): redaction_marker(secret)}


def test_obs59_bare_numbers_in_a_list_and_in_nested_json_stay_json() -> None:
    """OBS-59 (O1): the items of a list under a credential key, and a number in JSON inside a JSON string (its
    quotes escaped as the key's are), get quoted markers; the documents parse."""
    text = json.dumps({"passwords": [4839201, 5839202], "n": 2})
    out = scrub_text(text)
    assert json.loads(out) == {"passwords": [redaction_marker("4839201"), redaction_marker("5839202")], "n": 2}
    inner = json.dumps({"pin": 483920})
    outer = json.dumps({"arguments": inner})
    assert json.loads(json.loads(scrub_text(outer))["arguments"]) == {"pin": redaction_marker("483920")}
    twice = json.dumps(outer)
    assert json.loads(json.loads(json.loads(scrub_text(twice)))["arguments"]) == {"pin": redaction_marker("483920")}


@pytest.mark.parametrize("text, expected", [
    ("{'pin': 483920}", "{'pin': '<M>'}"),
    ("'password' => 12345678,", "'password' => '<M>',"),
    ('config["pin"] = 48392012', 'config["pin"] = "<M>"'),
    ("pin: 483920", "pin: <M>"),
    ("PIN=483920", "PIN=<M>"),
    ("password: 12345678\nuser: bob", "password: <M>\nuser: bob"),
])
def test_obs59_the_marker_is_quoted_as_the_key_is_and_bare_where_values_are_bare(text: str, expected: str) -> None:
    """OBS-59 (O1): after a quoted key (Python, PHP, code) the marker takes the key's quote; in YAML and ``.env`` a bare
    value keeps a bare marker."""
    secret = next(word for word in ("48392012", "12345678", "483920") if word in text)
    assert scrub_text(text) == expected.replace("<M>", redaction_marker(secret))


def test_obs59_quoted_markers_are_stable() -> None:
    """OBS-59 (O1): scrubbing the result again changes nothing (the quoted marker is a placeholder)."""
    text = json.dumps({"pin": 483920, "password": 12345678, "api_keys": [4839201]})
    once = scrub_text(text)
    assert scrub_text(once) == once


@pytest.mark.parametrize("doc", [{"password": '"', "api_key": '"'}, {"token": '"""', "note": "x"},
                                 {"secret": "'", "b": "'''", "c": "'"}, {"password": '\\"', "x": '"'}])
def test_obs59_quotes_as_values_read_unescaped_are_no_string_over_the_structure(doc: dict[str, Any]) -> None:
    """OBS-59: a JSON document whose values are quotes stays byte for byte: unescaped, its escaped quotes stand
    beside the document's own and read as a triple-quoted string running over keys and commas; a deeper view's span
    never covers a quote that ends a string of the text it was decoded from."""
    text = json.dumps(doc, separators=(",", ":"))
    assert scrub_text(text) == text
