"""The ``request`` field built from reused parts equals the plain sanitizer's (spec 01 §8.2.2, §8.3; issue #29).

OBS-61 (``request`` passes through ``sanitize()``), OBS-54 (``L`` read on every call), OBS-55/OBS-56 (scrubbed,
sensitive keys redacted), OBS-68 (built once per event): :func:`hermes_pipeline.engine.request_field.build_request_field`
must give exactly what :func:`hermes_pipeline.engine.sanitize.build_request_field` gives, for any request, however
the request's lists and dicts were changed since an earlier call.
"""

from __future__ import annotations

import enum
import math
import threading
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_pipeline.engine.request_field as rf
import hermes_pipeline.engine.scrub as sc
from hermes_pipeline.engine.request_field import build_request_field, cache_stats
from hermes_pipeline.engine.sanitize import build_request_field as fresh

from tests._payloads import payload_limit

SECRET = "sk-" + "A1b2C3d4E5f6G7h8J9k0L1m2"


class Role(enum.Enum):
    USER = "user"


def _same(a: object, b: object) -> bool:
    """Equal, with -0.0 and 0.0 told apart (the encoding does)."""
    return repr(a) == repr(b) and a == b


_texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from([SECRET, f"Bearer {SECRET}", "x" * 300, "y" * 1_200 + SECRET, "password=hunter2hunter2", "null"]),
    st.sampled_from(["sshpass", "--api-key", "-p", "Xk9mQ2vLp7Rt", "API_KEY"]),  # command lines, named values
)
_keys = st.one_of(st.sampled_from(["role", "content", "api_key", "max_tokens", "input_tokens", "type", "enum", "a", "A",
                                   "name", "value"]),
                  st.text(max_size=6))
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), _texts,
    st.sampled_from([Role.USER, uuid.UUID(int=7), -0.0]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_keys, inner, max_size=5),
        st.dictionaries(st.integers(0, 3), inner, max_size=2),
        st.dictionaries(st.sampled_from([0, 1, "0", "1"]), inner, max_size=4),  # keys rendering alike
    ),
    max_leaves=30,
)
_messages = st.lists(st.dictionaries(_keys, _values, max_size=4), max_size=8)
_requests = st.fixed_dictionaries(
    {"model": _texts, "messages": _messages, "tools": st.lists(_values, max_size=4)},
    optional={"max_tokens": _scalars, "stream": st.booleans(), "timeout": _scalars, "extra_headers": _values,
              "input": _values},
)


def _mutate(request: dict[str, Any], data: st.DataObject) -> None:
    """Change a list or dict the request holds, in place (the same objects are sent again)."""
    messages, tools = request["messages"], request["tools"]
    choice = data.draw(st.integers(0, 4))
    if choice == 0:
        messages.append(data.draw(st.dictionaries(_keys, _values, max_size=3)))
    elif choice == 1 and messages:
        messages[data.draw(st.integers(0, len(messages) - 1))][data.draw(_keys)] = data.draw(_values)
    elif choice == 2 and tools:
        target = tools[data.draw(st.integers(0, len(tools) - 1))]
        if isinstance(target, dict):
            target[data.draw(_keys)] = data.draw(_values)
        elif isinstance(target, list):
            target.append(data.draw(_values))
        else:
            tools[0] = data.draw(_values)
    elif choice == 3 and messages:
        messages.pop()
    else:
        tools.append(data.draw(_values))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(request=_requests, limit=st.sampled_from([None, 1_000, 1_500, 3_000]), data=st.data())
def test_reused_parts_equal_a_fresh_sanitize_across_mutations(request: dict[str, Any], limit: int | None,
                                                              data: st.DataObject) -> None:
    """OBS-61, OBS-54: every call, after in-place changes of the lists and dicts already sent, equals a fresh
    sanitize (pass 1, pass 2 and the envelope; NaN, Enum, UUID, tuples, non-str keys and keys that render alike,
    secrets)."""
    with payload_limit(limit):
        for _ in range(3):
            assert _same(build_request_field(request), fresh(request))
            _mutate(request, data)
        assert _same(build_request_field(request), fresh(request))


def test_a_part_changed_in_place_is_converted_again() -> None:
    """A tool schema mutated between calls (same list, same dict objects) is not served from the table."""
    tools = [{"type": "function", "function": {"name": "read_file", "description": "d" * 400}}]
    request = {"model": "m", "tools": tools, "messages": [{"role": "user", "content": "hi"}]}
    assert build_request_field(request) == fresh(request)
    tools[0]["function"]["description"] = f"now with {SECRET} " + "d" * 400
    out = build_request_field(request)
    assert out == fresh(request)
    assert SECRET not in str(out)


@pytest.mark.parametrize("swap", [float("nan"), math.inf, Role.USER, (1, 2)])
def test_values_orjson_renders_alike_are_not_confused(swap: object) -> None:
    """``None``/NaN, a plain value/its Enum, a list/tuple render alike to the table's key: the conversion differs."""
    plain: object = {float: None, Role: "user", tuple: [1, 2]}[type(swap)]
    first = {"model": "m", "messages": [{"role": "user", "content": "c" * 300, "x": plain}]}
    second = {"model": "m", "messages": [{"role": "user", "content": "c" * 300, "x": swap}]}
    assert build_request_field(first) == fresh(first)
    assert _same(build_request_field(second), fresh(second))
    assert _same(build_request_field(first), fresh(first))


def test_unchanged_parts_are_reused_not_converted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second call of a session converts only the new message: the schemas and the history come from the table."""
    tools = [{"type": "function", "function": {"name": f"tool{i}", "parameters": {"type": "object"}}} for i in range(5)]
    history = [{"role": "system", "content": "s" * 500}, {"role": "user", "content": "hello"}]
    build_request_field({"model": "m", "tools": tools, "messages": history})
    converted: list[object] = []
    real = rf._convert_part
    monkeypatch.setattr(rf, "_convert_part", lambda value, *a: converted.append(value) or real(value, *a))
    history2 = [*history, {"role": "assistant", "content": "new answer"}]
    request = {"model": "m", "tools": tools, "messages": history2}
    assert build_request_field(request) == fresh(request)
    assert {"role": "assistant", "content": "new answer"} in converted
    assert not any(isinstance(v, dict) and ("function" in v or v.get("role") in ("system", "user")) for v in converted)


def test_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table holds at most BUDGET_BYTES bytes of keys (emptied when full)."""
    monkeypatch.setattr(rf, "BUDGET_BYTES", 2_000)
    for i in range(200):
        request = {"model": "m", "messages": [{"role": "user", "content": f"{i} " + "z" * 300}]}
        assert build_request_field(request) == fresh(request)
        assert cache_stats()["bytes"] <= 2_000


def test_redaction_key_change_empties_the_table() -> None:
    """Markers are keyed: after a new redaction key, a cached part would hold stale markers (OBS-59)."""
    request = {"model": "m", "messages": [{"role": "user", "content": f"key {SECRET} " + "p" * 300}]}
    old = sc._redaction_key
    try:
        build_request_field(request)
        sc.set_redaction_key(b"another key for this test")
        assert build_request_field(request) == fresh(request)
    finally:
        sc.set_redaction_key(old)


def test_threads_share_the_table_safely() -> None:
    """Concurrent calls on overlapping requests each get the fresh result."""
    tools = [{"name": f"t{i}", "description": "w" * 300} for i in range(10)]
    failures: list[int] = []
    barrier = threading.Barrier(4)

    def worker(n: int) -> None:
        barrier.wait()
        for i in range(60):
            request = {"model": "m", "tools": tools, "messages": [{"role": "user", "content": f"{n}-{i % 7} " + "q" * 300}]}
            if build_request_field(request) != fresh(request):
                failures.append(i)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_obs58_a_list_entry_or_a_named_value_of_the_body_hides_what_a_fresh_sanitize_hides() -> None:
    """OBS-58, OBS-61: a body entry that is a command line (``["--api-key", P]``) or a value named by a sibling
    (``{"name": "API_KEY", "value": P}``) is what a fresh sanitize gives: ``P`` hidden, the rest kept."""
    for request in ({"model": "m", "messages": [], "stop": ["--api-key", "Xk9mQ2vLp7Rt"]},
                    {"model": "m", "messages": [], "name": "API_KEY", "value": "Xk9mQ2vLp7Rt"}):
        built = build_request_field(request)
        assert _same(built, fresh(request)) and "Xk9mQ2vLp7Rt" not in repr(built)
