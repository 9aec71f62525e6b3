"""FMT-28: credential header keys are stripped from recorded requests at any depth, whatever the shape.

:func:`strip_header_keys` skips its walk when one encoding of the value shows that no header name can
be a key; these properties compare it with the plain recursive definition on generated data, header
names in any case (and with a non-ASCII character that lowercases to ASCII) included.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.export.header_keys import HEADER_KEYS, strip_header_keys


def reference(value: Any) -> Any:
    """The definition: drop every string key whose lowercase form is a header name, at any depth."""
    if isinstance(value, dict):
        return {k: reference(v) for k, v in value.items() if not (isinstance(k, str) and k.lower() in HEADER_KEYS)}
    if isinstance(value, list):
        return [reference(item) for item in value]
    return value


def _case_variants(name: str) -> st.SearchStrategy[str]:
    flips = st.lists(st.booleans(), min_size=len(name), max_size=len(name))
    return flips.map(lambda bits: "".join(c.upper() if b else c for c, b in zip(name, bits)))


header_names = st.sampled_from(sorted(HEADER_KEYS)).flatmap(_case_variants)
kelvin = st.sampled_from([name for name in HEADER_KEYS if "k" in name]).map(lambda n: n.replace("k", "\u212a", 1))
keys = st.one_of(header_names, kelvin, st.text(max_size=12), st.integers(-5, 5))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
                    header_names, st.integers(min_value=2**70, max_value=2**71))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(keys, inner, max_size=4)), max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(values)
def test_strip_matches_the_definition(value: Any) -> None:
    """FMT-28: the result equals the recursive definition for any JSON-like value, odd keys included."""
    assert strip_header_keys(value) == reference(value)


@settings(max_examples=200, deadline=None)
@given(values)
def test_unchanged_values_are_returned_as_they_are(value: Any) -> None:
    """FMT-28: a value holding no header key comes back as the same object (events share it)."""
    if reference(value) == value and not _holds_header_key(value):
        assert strip_header_keys(value) is value


def _holds_header_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(isinstance(k, str) and k.lower() in HEADER_KEYS for k in value) or \
            any(_holds_header_key(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_header_key(item) for item in value)
    return False


def test_a_header_name_inside_a_string_value_is_kept() -> None:
    """FMT-28: only keys are stripped; a value that merely names a header stays (and is scrubbed elsewhere)."""
    request = {"messages": [{"role": "user", "content": "send the Authorization header"}], "note": "cookie"}
    assert strip_header_keys(request) == request
    assert strip_header_keys({"headers": {"Authorization": "Bearer x", "Accept": "*/*"}}) == {"headers": {"Accept": "*/*"}}
    assert strip_header_keys({"x-api-\u212aey": "v", "k": 1}) == {"k": 1}
