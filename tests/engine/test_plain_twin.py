"""The one-walk copies of ``plain_twin`` and ``sanitize_with_part`` equal the general paths (issue #29).

OBS-51 / OBS-55 / OBS-56 / OBS-61: the sanitized copy is value-scrubbed with sensitive keys redacted, exactly
as ``sanitize`` gives it; the raw twin is the raw tree (nothing scrubbed) rebuilt with the caller's container
types, exactly as the host's freezing gives it (``hermes_pipeline.host.message``). Generated trees mix plain
and sensitive keys, plural-token keys, keys that scrubbing changes, planted credentials, long strings, big
integers, non-finite floats, tuples, nested containers past the depth limit and over-long lists.
"""

from __future__ import annotations

import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_pipeline.engine.sanitize as sz
from hermes_pipeline.engine.plain_twin import plain_twin, sanitize_with_part
from hermes_pipeline.engine.sanitize import sanitize
from hermes_pipeline.host.message import FrozenList, MessageView, _freeze

from tests._payloads import payload_limit, same

SECRET = "sk-ZX0123456789ABCDEFGHIJ"

keys = st.one_of(
    st.text(alphabet=string.ascii_lowercase + "_", max_size=8),
    st.sampled_from(["token", "api_key", "access_tokens", "input_tokens", "Authorization", "headers",
                     "password=hunter2hunter2", SECRET, "_truncated_items", "é", "id", "function", "arguments"]),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**62, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=string.ascii_lowercase + string.digits + " ={}\":,é漢", max_size=40),
    st.sampled_from([f"Bearer {SECRET[3:]}", SECRET, f'{{"api_key": "{SECRET}"}}', "x" * 9000, "y" * 300,
                     "\x01\x1f", "\ud800"]),
)
trees = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.lists(inner, min_size=199, max_size=202),
                            st.tuples(inner, inner), st.dictionaries(keys, inner, max_size=5)),
    max_leaves=30,
)
containers = st.one_of(st.lists(trees, max_size=6), st.dictionaries(keys, trees, max_size=6),
                       st.tuples(trees, trees))


def full_algorithm(value: object) -> Any:
    """sanitize() with its plain shortcut switched off: the general two-pass algorithm."""
    original = sz._plain_pass
    sz._plain_pass = lambda value, limit: sz._NOTHING  # type: ignore[assignment]
    try:
        return sanitize(value)
    finally:
        sz._plain_pass = original


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=containers, depth=st.integers(0, 8))
def test_obs51_plain_twin_is_the_plain_copy_and_the_frozen_raw_tree(value: Any, depth: int) -> None:
    """OBS-51/OBS-55/OBS-56: the copy is the sanitizer's pass-1 copy at that depth; the twin is the raw tree as
    the host freezes it; ``None`` wherever the sanitizer's shortcut does not apply."""
    shared = plain_twin(value, depth, MessageView, FrozenList)
    try:
        expected: Any = sz._plain_copy(value, depth)
    except Exception:
        expected = None
    if shared is None:
        return  # the general paths decide (it may also give up where a redacted key hides a container)
    assert expected is not None, "the twin walk took a tree the sanitizer's shortcut refuses"
    copy, twin = shared
    assert same(copy, expected)
    assert same(twin, _freeze(value))


def test_obs55_planted_credentials_are_scrubbed_in_the_copy_and_raw_in_the_twin() -> None:
    """OBS-55/OBS-56: a credential in a value and under a sensitive key is redacted in the copy (only its span),
    and kept raw in the twin (the legacy raw field)."""
    calls = [{"id": "call_1", "type": "function",
              "function": {"name": "login", "arguments": f'{{"note": "key {SECRET} here"}}'}, "api_key": SECRET}]
    copy, twin = plain_twin(calls, 2, MessageView, FrozenList)  # type: ignore[misc]
    assert SECRET not in repr(copy)
    assert copy[0]["function"]["arguments"].startswith('{"note": "key <redacted')  # type: ignore[index]
    assert copy[0]["function"]["arguments"].endswith(' here"}')  # type: ignore[index]
    assert copy[0]["api_key"] != SECRET  # type: ignore[index]
    assert twin[0]["api_key"] == SECRET and SECRET in twin[0].function.arguments
    assert type(twin) is FrozenList and type(twin[0]) is MessageView and type(twin[0]["function"]) is MessageView


def test_obs51_plain_twin_gives_up_where_the_raw_twin_needs_the_general_freezing() -> None:
    """A redacted key over a container, an object, a big integer: ``None`` (the general paths decide)."""
    assert plain_twin([{"api_key": {"nested": 1}}], 2, MessageView, FrozenList) is None
    assert plain_twin([{"a": object()}], 2, MessageView, FrozenList) is None
    assert plain_twin([2**70], 2, MessageView, FrozenList) is None
    assert plain_twin("text", 2, MessageView, FrozenList) is None  # type: ignore[arg-type]


path_keys = st.one_of(st.sampled_from(["assistant_message", "tool_calls", "body"]), keys)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(part=st.one_of(st.lists(trees, max_size=6), st.dictionaries(keys, trees, max_size=4)),
       outer=st.dictionaries(keys, trees, max_size=4), inner=st.dictionaries(keys, trees, max_size=4),
       path=st.tuples(path_keys, path_keys), limit=st.sampled_from([None, "1000", "3000"]))
def test_obs51_sanitize_with_part_equals_the_general_algorithm(part: Any, outer: dict[str, Any],
                                                               inner: dict[str, Any], path: tuple[str, str],
                                                               limit: str | None) -> None:
    """OBS-51/OBS-54/OBS-61: ``sanitize`` of a value whose part was copied by ``plain_twin`` equals the general
    algorithm, including the truncation envelope when the limit is small and redacted keys on the path."""
    value = {**outer, path[0]: {**inner, path[1]: part}}
    with payload_limit(limit):
        shared = plain_twin(part, 2, MessageView, FrozenList)
        if shared is None:
            return
        assert same(sanitize_with_part(value, path, shared[0]), full_algorithm(value))


def test_obs54_sanitize_with_part_reads_the_limit_for_each_payload() -> None:
    """OBS-54: a change of the limit takes effect for the next payload (the envelope appears at once)."""
    part = [{"id": f"call_{k}", "function": {"arguments": "a" * 400}} for k in range(10)]
    value = {"assistant_message": {"tool_calls": part}}
    shared = plain_twin(part, 2, MessageView, FrozenList)
    assert shared is not None
    with payload_limit(None):
        assert sanitize_with_part(value, ("assistant_message", "tool_calls"), shared[0]) == sanitize(value)
    with payload_limit("1000"):
        out = sanitize_with_part(value, ("assistant_message", "tool_calls"), shared[0])
        assert isinstance(out, dict) and out.get("_truncated") is True and out == full_algorithm(value)
