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
    st.sampled_from(["sshpass", "mysql", "-p", "--password", "--api-key", "-pXk9mQ2vLp7Rt", "Xk9mQ2vLp7Rt"]),
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


def _plain_copy_or_none(value: Any, depth: int) -> Any:
    """The sanitizer's pass-1 copy of ``value`` at ``depth``, or ``None`` where its shortcut refuses it."""
    try:
        return sz._plain_copy(value, depth)
    except Exception:
        return None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=containers, depth=st.integers(0, 8))
def test_obs51_plain_twin_is_the_plain_copy_and_the_frozen_raw_tree(value: Any, depth: int) -> None:
    """OBS-51/OBS-55/OBS-56: the copy is the sanitizer's pass-1 copy at that depth; the twin is the raw tree as
    the host freezes it; ``None`` wherever the sanitizer's shortcut does not apply."""
    shared = plain_twin(value, depth, MessageView, FrozenList)
    expected = _plain_copy_or_none(value, depth)
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


def test_obs58_a_command_line_hiding_a_credential_from_its_neighbours_takes_the_general_walk() -> None:
    """OBS-58: ``["sshpass", "-p", P]`` hides ``P`` only as a command line; the twin walk leaves such a list to the
    general paths (``None``), whose copy hides it, and keeps other lists of words."""
    line = ["sshpass", "-p", "Xk9mQ2vLp7Rt", "ssh", "host"]
    assert plain_twin([{"args": line}], 2, MessageView, FrozenList) is None
    assert "Xk9mQ2vLp7Rt" not in repr(sanitize({"args": line}))
    assert plain_twin([{"args": ["ls", "-l", "src"]}], 2, MessageView, FrozenList) is not None


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


call_strings = st.one_of(
    st.text(alphabet=string.ascii_lowercase + string.digits + " ={}\":,é", max_size=40),
    st.sampled_from([SECRET, f'{{"api_key": "{SECRET}"}}', f'{{"note": "key {SECRET} here"}}', "x" * 9000, "y" * 300,
                     "call_0", "function", "read_file", '{"path": "notes.txt"}', "\ud800"]),
)
call_values = st.one_of(call_strings, st.none(), st.integers(), st.dictionaries(keys, call_strings, max_size=2))


@st.composite
def tool_calls(draw: st.DrawFn) -> list[Any]:
    """Lists of OpenAI-shaped tool calls, most of the exact shape, some one step off it (a key missing, added or
    sensitive, another order, a value of another type)."""
    out = []
    for _ in range(draw(st.integers(0, 12))):
        function = {"name": draw(call_strings), "arguments": draw(call_strings)}
        call: dict[str, Any] = {"id": draw(call_strings), "type": draw(st.sampled_from(["function", SECRET])),
                                "function": function}
        variant = draw(st.sampled_from(["exact"] * 6 + ["reordered", "extra", "sensitive", "missing", "odd_value",
                                                        "odd_function"]))
        if variant == "reordered":
            call = {"function": function, "type": call["type"], "id": call["id"]}
        elif variant == "extra":
            call[draw(st.sampled_from(["index", "api_key", "name"]))] = draw(call_values)
        elif variant == "sensitive":
            function["token"] = draw(call_strings)
            del function["name"]
        elif variant == "missing":
            del call[draw(st.sampled_from(["id", "type", "function"]))]
        elif variant == "odd_value":
            call[draw(st.sampled_from(["id", "type"]))] = draw(call_values)
        elif variant == "odd_function":
            call["function"] = draw(st.one_of(call_values, st.just({"arguments": "{}", "name": "f"})))
        out.append(call)
    return out


def _general_twin(value: Any, depth: int) -> Any:
    import hermes_pipeline.engine.plain_twin as pt

    try:
        return pt._twin(value, depth, MessageView, FrozenList)
    except Exception:
        return None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=tool_calls(), depth=st.integers(0, 7), limit=st.sampled_from([None, "3000"]))
def test_obs51_tool_calls_shortcut_equals_the_general_twin(calls: list[Any], depth: int, limit: str | None) -> None:
    """OBS-51/OBS-55/OBS-56: a response's tool calls of the chat-completions shape are copied by literals
    (``_calls_twin``): the copy and the twin are, type for type and key order for key order, what the general
    twin walk gives (scrubbed strings, planted credentials, long strings, odd values, keys out of order or
    sensitive); ``None`` from both, or a fallback to the general walk, where the shape differs."""
    import hermes_pipeline.engine.plain_twin as pt

    sz._plain_copy([{"id": "i", "type": "t", "function": {"name": "n", "arguments": "a"}}], 0)  # keys learned
    with payload_limit(limit):
        try:
            fast = pt._calls_twin(calls, depth, MessageView, FrozenList)
        except Exception:  # a string the pass-1 caps refuse: the general walk must refuse it too
            fast = "raised"
        try:
            general = pt._twin(calls, depth, MessageView, FrozenList)
        except Exception:
            general = None
        if fast == "raised":
            assert general is None
        elif fast is not None:
            assert general is not None
            assert same(fast[0], general[0]) and same(fast[1], general[1])
            assert same(fast[1], _freeze(calls))
        shared = plain_twin(calls, depth, MessageView, FrozenList)
        assert (shared is None) == (general is None)
        if shared is not None and general is not None:
            assert same(shared[0], general[0]) and same(shared[1], general[1])


def test_the_tool_calls_shortcut_serves_the_chat_completions_shape() -> None:
    """The exact shape goes through the literals (the shortcut is not dead code), a credential in the arguments
    scrubbed in the copy only; a key the sanitizer has not yet classified leaves the decision to the walk."""
    import hermes_pipeline.engine.plain_twin as pt

    calls = [{"id": f"call_{k}", "type": "function",
              "function": {"name": "read_file", "arguments": f'{{"path": "{k}", "key": "{SECRET}"}}'}}
             for k in range(3)]
    sz._plain_copy(calls, 2)
    fast = pt._calls_twin(calls, 2, MessageView, FrozenList)
    assert fast is not None
    assert SECRET not in repr(fast[0]) and SECRET in repr(fast[1])
    assert type(fast[1]) is FrozenList and type(fast[1][0]["function"]) is MessageView
    assert type(fast[0]) is list and type(fast[0][0]["function"]) is dict
    assert pt._calls_twin(calls, 6, MessageView, FrozenList) is None  # the function dict would pass the depth cap
    sz._plain_keys.clear()  # (a bounded cache: cleared when full) keys not yet classified as plain
    assert pt._calls_twin(calls, 2, MessageView, FrozenList) is None
    assert same(plain_twin(calls, 2, MessageView, FrozenList), fast)  # the walk classifies them again
    assert pt._calls_twin(calls, 2, MessageView, FrozenList) is not None



@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.one_of(containers, tool_calls()), depth=st.integers(0, 8))
def test_obs51_without_a_twin_the_copy_is_the_same(value: Any, depth: int) -> None:
    """OBS-51: asked for no twin (no listener reads the frozen view), :func:`plain_twin` gives the very copy it gives
    beside a twin, and ``None`` for the twin; it gives up where it gives up with a twin, or falls back to the
    sanitizer's own pass-1 copy where only the twin needed the general freezing."""
    sz._plain_copy([{"id": "i", "type": "t", "function": {"name": "n", "arguments": "a"}}], 0)  # keys learned
    alone = plain_twin(value, depth, None, None)
    both = plain_twin(value, depth, MessageView, FrozenList)
    expected = _plain_copy_or_none(value, depth)
    if alone is None:
        assert both is None and expected is None
        return
    copy, twin = alone
    assert twin is None
    assert same(copy, expected)
    if both is not None:
        assert same(copy, both[0])
