"""Every shortcut of the credential walk gives what the full walk gives (issue #29 item 5; spec 04 FMT-33a,
spec 01 OBS-53, OBS-58).

On generated hook fields (credentials, look-alikes of engine ids, sensitive keys, long strings cut by the value
bound, texts the scrubber has or has not seen yet, ids the engine made), the tool calls a scope projection
publishes with its shortcuts (the fields a kind says are clean, ``ScopeEvent.clean``; an end's name and profile
that are its published start's own objects) equal those it publishes with every field walked; and the walk
keeps the sanitized ``response`` and ``request`` the host made, the very objects, exactly as a full walk would
render them.
"""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_pipeline.export.redaction as redaction
import hermes_pipeline.export.scope_kinds.tool_call as tool_call
import hermes_pipeline.export.scopes as scopes
from hermes_pipeline.engine import ids, sanitized_fields
from hermes_pipeline.engine.request_field import build_request_field
from hermes_pipeline.engine.sanitize import sanitize
from hermes_pipeline.engine.scrub import SCRUB_MIN_CHARS, known_clean, scrub_text
from hermes_pipeline.export.events import ScopeEvent
from hermes_pipeline.export.redaction import redact_value
from hermes_pipeline.export.scope_hooks import ScopePlugin

SECRET = "sk-proj-" + "a1B2c3D4e5F6g7H8" * 2
ALWAYS = ["read_file", "s1", "task_1", "turn_1", "turn_1:api:1", "call_1", "ok", "files", "notes.txt"]
for _text in ALWAYS:  # texts the scrubber has seen: in known_clean, so the kinds' shortcuts apply to them
    scrub_text(_text)

texts = st.one_of(
    st.sampled_from(ALWAYS),
    st.sampled_from([SECRET, f"turn_{SECRET}", f"call_{SECRET}", f"files {SECRET}", "x" * 1_500, "pwd=hunter2",
                     "", "abc"]),
    st.builds(lambda: ids.new_turn_id()), st.builds(lambda: ids.new_tool_call_id()),
    st.builds(lambda: f"fresh-{secrets.token_hex(6)}"),
    st.text(max_size=12),
)
names = st.one_of(st.sampled_from(ALWAYS), st.sampled_from([SECRET, f"turn_{SECRET}", f"s {SECRET}"]), texts)
"""Ids and names: a credential in about a third of them."""
keys = st.sampled_from(["path", "api_key", "input_tokens", "content", "headers", "a"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False), texts)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(keys, inner, max_size=3)), max_leaves=8)
calls = st.fixed_dictionaries({
    "tool_name": names, "args": st.dictionaries(keys, values, max_size=3), "task_id": names, "session_id": names,
    "tool_call_id": names, "turn_id": names, "api_request_id": names,
    "middleware_trace": st.sampled_from([[], [{"source": "mw"}], [{"source": SECRET}]]),
    "toolset": st.one_of(st.none(), names), "result": texts,
    "duration_ms": st.one_of(st.integers(0, 10**6), st.none(), st.sampled_from(["5", SECRET, 1.5])),
    "status": st.sampled_from(["ok", "ok", "error", "blocked", SECRET]), "error_type": st.one_of(st.none(), names),
    "error_message": st.one_of(st.none(), texts), "exit_code": st.one_of(st.none(), st.integers(-1, 2)),
})


START_FIELDS = ("tool_name", "args", "task_id", "session_id", "tool_call_id", "turn_id", "api_request_id",
                "middleware_trace", "toolset")
END_FIELDS = ("result", "duration_ms", "status", "error_type", "error_message", "exit_code")


def published(hook_calls: list[dict[str, Any]], cap: int | None, parallel: bool) -> list[tuple[Any, ...]]:
    """What a listener gets for ``hook_calls`` (each a tool call: start, then end; with ``parallel`` every start
    before the first end, so the calls overlap and their starts are flagged), ids and times left out."""
    seen: list[ScopeEvent] = []
    plugin = ScopePlugin((seen.append,), max_value_chars=cap, toolsets={"read_file": "files"})
    starts = [{k: fields[k] for k in START_FIELDS} for fields in hook_calls]
    ends = [{k: fields[k] for k in END_FIELDS} for fields in hook_calls]
    for start, end in zip(starts, ends):
        plugin.pre_tool_call(**start)
        if not parallel:
            plugin.post_tool_call(**start, **end)
    for start, end in zip(starts, ends) if parallel else ():
        plugin.post_tool_call(**start, **end)
    plugin.shutdown(5.0)
    return [(e.kind, e.phase, e.name, e.category, e.attributes, repr(e.profile), repr(e.data), repr(e.metadata))
            for e in seen]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(st.lists(calls, min_size=1, max_size=3), st.sampled_from([None, 1_000, 1_000_000]), st.booleans())
def test_the_tool_path_shortcuts_give_the_full_walk(monkeypatch: pytest.MonkeyPatch, hook_calls: list[dict[str, Any]],
                                                    cap: int | None, parallel: bool) -> None:
    """FMT-33a: the tool scopes published with the kind's ``clean`` fields and the end's start shortcut equal the
    tool scopes published with every field of every event walked, for sequential and overlapping calls."""
    shortcut = published(hook_calls, cap, parallel)
    with monkeypatch.context() as m:
        m.setattr(tool_call, "known_clean_text", lambda value: False)  # the kind claims no field clean
        real = redaction.redact_event
        m.setattr(scopes, "redact_event", lambda event, cap=None, start=None: real(event, cap))  # no start
        walked = published(hook_calls, cap, parallel)
    assert shortcut == walked
    assert all(SECRET not in row[2] + row[5] + row[6] + row[7] for row in shortcut)


def test_a_shortcut_is_taken_on_the_tool_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above compares something: on known texts the kind marks its fields clean, and the walk
    then neither scans nor walks them."""
    for text in ALWAYS:  # known again here: the suite's other tests may have emptied the bounded set since import
        scrub_text(text)
    assert all(text in known_clean for text in ALWAYS if len(text) >= SCRUB_MIN_CHARS)
    seen: list[ScopeEvent] = []
    real = redaction.redact_event
    monkeypatch.setattr(scopes, "redact_event", lambda event, cap=None, start=None: seen.append(event) or
                        real(event, cap, start))
    plugin = ScopePlugin()
    fields = dict(tool_name="read_file", args={"path": "notes.txt"}, task_id="task_1", session_id="s1",
                  tool_call_id="call_1", turn_id="turn_1", api_request_id="turn_1:api:1", middleware_trace=[],
                  toolset=None)
    plugin.pre_tool_call(**fields)
    plugin.post_tool_call(**fields, result="done", duration_ms=3, status="ok", error_type=None, error_message=None)
    plugin.shutdown(5.0)
    tool = [event.clean for event in seen if event.category == "tool"]
    assert tool == [7, 12]  # the start: name, profile, metadata; the end: metadata, data (name, profile: the start's)


responses = st.fixed_dictionaries({
    "model": texts, "finish_reason": texts, "usage": st.dictionaries(keys, values, max_size=3),
    "assistant_message": st.fixed_dictionaries({"role": st.just("assistant"), "content": st.one_of(texts, values),
                                                "tool_calls": st.lists(values, max_size=3)}),
}, optional={"id": texts, "api_key": texts, "extra": values, "long": st.just("y" * 20_000 + SECRET)})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(responses, st.sampled_from([None, 1_000, 16_000, 50_000, 1_000_000]))
def test_the_sanitized_response_is_kept_as_a_full_walk_would_render_it(monkeypatch: pytest.MonkeyPatch,
                                                                       raw: dict[str, Any], cap: int | None) -> None:
    """OBS-53: the ``response`` the host sanitized and recorded is kept, the very object, under a bound that fits its
    strings, and the event's data then equals what the full walk renders; under a smaller bound it is walked."""
    response = sanitized_fields.mark(sanitize(raw))
    data = {"response": response, "usage": {"input_tokens": 3}, "finish_reason": "stop"}
    shortcut = redact_value(data, cap)
    with monkeypatch.context() as m:
        m.setattr(redaction, "is_marked", lambda value, cap: False)
        walked = redact_value(data, cap)
    assert repr(shortcut) == repr(walked)
    if cap is None or cap >= sanitized_fields.bound():
        assert shortcut is data  # kept, without a walk (and the walk too keeps it: it is the sanitizer's output)
    assert SECRET not in repr(shortcut)


def test_the_response_is_known_by_identity_only() -> None:
    """An equal copy of a recorded response is walked (it may be anyone's object); the recorded one is known."""
    response = sanitized_fields.mark(sanitize({"model": "m", "content": "hello"}))
    assert sanitized_fields.is_marked(response, None)
    assert not sanitized_fields.is_marked(dict(response), None)
    assert not sanitized_fields.is_marked(response, 1_000)  # a bound below the sanitizer's longest string


requests = st.fixed_dictionaries({"model": texts, "messages": st.lists(st.dictionaries(keys, values, max_size=4),
                                                                       max_size=5)},
                                 optional={"tools": st.lists(st.dictionaries(keys, values, max_size=3), max_size=3),
                                           "api_key": texts, "temperature": st.floats(0, 2),
                                           "extra": st.just(["z" * 9_000 + SECRET])})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(requests, st.sampled_from([None, 1_000, 16_000, 1_000_000]))
def test_the_request_field_is_kept_as_a_full_walk_would_render_it(monkeypatch: pytest.MonkeyPatch,
                                                                  kwargs: dict[str, Any], cap: int | None) -> None:
    """OBS-53, FMT-33a: the ``request`` field the host built and recorded (``pre_api_request``) is kept, the very
    object, and the event's data equals what the full walk renders, the request field's own part shortcut off too."""
    field = sanitized_fields.mark(build_request_field(kwargs))
    data = {"request": field}
    shortcut = redact_value(data, cap)
    with monkeypatch.context() as m:
        m.setattr(redaction, "is_marked", lambda value, cap: False)
        m.setattr(redaction, "is_sanitized_part", lambda value: False)
        walked = redact_value(data, cap)
    assert repr(shortcut) == repr(walked)
    if cap is None or cap >= sanitized_fields.bound():
        assert shortcut is data
    assert SECRET not in repr(shortcut)


counts = st.one_of(st.none(), st.integers(-5, 10**6), st.floats(), st.just(2**12_001), st.just(-(2**12_500)),
                   st.sampled_from([float("inf"), float("-inf"), float("nan")]), texts, st.booleans())
token_keys = st.sampled_from(["input_tokens", "max_tokens", "prompt_tokens", "cached_tokens", "path"])
counted = st.recursive(counts, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(token_keys, inner, max_size=3)), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(token_keys, counted, max_size=4))
def test_the_sanitizer_renders_counts_the_walk_keeps(value: dict[str, Any]) -> None:
    """OBS-53, FMT-33a: under a ``...tokens`` key (the plural-token rule, 01 §8.2.4), the sanitizer keeps a count only
    when it stays a number once rendered; a non-finite float or an int too long to print would be rendered as a
    string there, which the credential walk redacts. So the sanitizer's output, and the host's request field built
    from the same values, are what the walk makes of them: the walk keeps them as they are."""
    for rendered in (sanitize(value), build_request_field({"model": "m", "messages": [value], "usage": value})):
        walked = redact_value(rendered)
        assert repr(walked) == repr(rendered)
        assert walked is rendered
