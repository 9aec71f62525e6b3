"""The publication thread's shortcuts give what the general path gives (issue #29; spec 04 FMT-33a, FMT-9, FMT-21,
FMT-6; spec 01 OBS-38, OBS-58).

Each shortcut is compared, on generated hook fields with credentials planted in every host-supplied field, with
the path it stands for:

- the credential walk's ``_kept`` (a field told clean from its keys and values, no walk) against the walk itself;
- the turn's memo of the ids its tool starts found clean (``TurnState.clean_ids``), with several tool calls per
  turn, against every field walked;
- a tool start held alone published by its own end (``HeldStarts.release_alone``) against routing the end, with
  marks waiting under held starts and overlapping calls;
- the tool kind deriving a deferred status itself against the fields with the status derived beforehand.

Each test also checks that its shortcut is taken, so that the comparison compares something.
"""

from __future__ import annotations

from typing import Any, Final

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import hermes_pipeline.export.redaction as redaction
import hermes_pipeline.export.scope_kinds.tool_call as tool_call
import hermes_pipeline.export.scopes as scopes
from hermes_pipeline.engine import sanitized_fields
from hermes_pipeline.engine.callbacks import RECORD_LANE
from hermes_pipeline.engine.readonly import ReadOnlyDict
from hermes_pipeline.engine.sanitize import sanitize
from hermes_pipeline.engine.scrub import scrub_text
from hermes_pipeline.engine.tool_status import DEFERRED_STATUS, derive_status
from hermes_pipeline.export.events import ScopeEvent
from hermes_pipeline.export.overlap import HeldStarts
from hermes_pipeline.export.redaction import redact_event, redact_value
from hermes_pipeline.export.scope_hooks import ScopePlugin

SECRET = "sk-proj-" + "a1B2c3D4e5F6g7H8" * 2
ALWAYS = ["read_file", "s1", "s2", "task_1", "turn_1", "turn_2", "turn_1:api:1", "turn_2:api:1", "call_1", "ok",
          "files", "notes.txt", "hello there"]
PLANTED = [SECRET, f"turn_{SECRET}", f"call_{SECRET}", f"files {SECRET}", f"s {SECRET}", "pwd=hunter2"]
KEYS = ["path", "api_key", "input_tokens", "content", "headers", "a", "authorization", "password"]
for _text in ALWAYS:  # texts the scrubber has seen: in known_clean, so the shortcuts apply to them
    scrub_text(_text)
redact_value({key: "x" for key in KEYS})  # the keys the walk has met (the plain ones become one set look-up)

texts = st.one_of(st.sampled_from(ALWAYS), st.sampled_from(PLANTED), st.sampled_from(["", "abc", "x" * 1_500]),
                  st.text(max_size=12))
ids = st.one_of(st.sampled_from(ALWAYS), st.sampled_from(PLANTED))
"""Ids and names: the same objects from call to call (as a host passes them), a credential in about half."""
keys = st.one_of(st.sampled_from(["path", "content", "a"]), st.sampled_from(KEYS))
"""Mostly keys the walk keeps (so that whole fields are often kept), sometimes one it redacts or has not met."""
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False), texts)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(keys, inner, max_size=3)),
                      max_leaves=8)


def _row(event: ScopeEvent) -> tuple[Any, ...]:
    return (event.kind, event.phase, event.name, event.category, event.attributes, repr(event.profile),
            repr(event.data), repr(event.metadata), repr(event.facts))


def _no_secret(rows: list[tuple[Any, ...]]) -> bool:
    return all(SECRET not in "".join(str(part) for part in row) and "hunter2" not in "".join(str(p) for p in row)
               for row in rows)


# ---------------------------------------------------------------------------------------------- the walk's _kept

def _full_walk(m: pytest.MonkeyPatch) -> None:
    """No shortcut of the walk: no kept field, no clean bit, no start's name and profile."""
    m.setattr(redaction, "_kept", lambda value, cap: False)
    m.setattr(tool_call, "known_clean_text", lambda value: False)
    real = redaction.redact_event
    m.setattr(scopes, "redact_event", lambda event, cap=None, start=None: real(event, cap))


fields_of_an_event = st.one_of(st.none(), st.dictionaries(keys, values, max_size=4),
                               st.builds(lambda d: ReadOnlyDict(d), st.dictionaries(keys, texts)),
                               st.builds(lambda: sanitized_fields.mark(sanitize({"path": "notes.txt", "a": [SECRET]}))))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields_of_an_event, fields_of_an_event, fields_of_an_event, texts,
       st.sampled_from([None, 1_000, 1_000_000]))
@example({"path": SECRET}, {"a": {"path": "pwd=hunter2"}}, {"password": "notes.txt"}, SECRET, 1_000)
def test_a_kept_field_is_what_the_walk_gives(monkeypatch: pytest.MonkeyPatch, data: Any, profile: Any, meta: Any,
                                            name: str, cap: int | None) -> None:
    """FMT-33a, OBS-58: with ``_kept`` the redacted event equals the fully walked one, field by field, and a field is
    the very object given exactly when the walk gives it back (so a kept field is one the walk would keep)."""
    event = ScopeEvent("scope", "start", 1, None, 2, name, "tool", (), profile, data, meta if meta is not None else {},
                       3, 3)
    shortcut = redact_event(event, cap)
    with monkeypatch.context() as m:
        m.setattr(redaction, "_kept", lambda value, cap: False)
        walked = redact_event(event, cap)
    assert _row(shortcut) == _row(walked)
    for field in ("data", "profile", "metadata", "name"):
        assert (getattr(shortcut, field) is getattr(event, field)) == (getattr(walked, field) is getattr(event, field))
    assert SECRET not in repr(shortcut.data) + repr(shortcut.profile) + repr(shortcut.metadata) + shortcut.name


def test_the_walk_keeps_a_clean_flat_field_without_walking_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above compares something: known keys with clean strings, numbers, token counts and a sanitized
    value are kept by ``_kept`` (no walk state made); a planted credential at either level, a sensitive key, a token
    key with a value that is not a count are not."""
    marked = sanitized_fields.mark(sanitize({"role": "user", "content": [SECRET]}))
    made: list[Any] = []
    real = redaction._Walk
    monkeypatch.setattr(redaction, "_Walk", lambda cap: made.append(cap) or real(cap))
    event = ScopeEvent("scope", "start", 1, None, 2, "read_file", "tool", (), {"path": "notes.txt"},
                       {"path": {"a": "notes.txt", "content": 3}, "content": marked}, {"a": 1.5, "content": None, "input_tokens": 12}, 3, 3)
    assert redact_event(event, 1_000_000) is event
    assert made == []
    for planted in ({"path": {"a": SECRET}}, {"path": SECRET}, {"password": "notes.txt"}, {"input_tokens": "12"},
                    {"a": {"input_tokens": True}}):
        out = redact_event(ScopeEvent("scope", "start", 1, None, 2, "read_file", "tool", (), None, planted, {}, 3, 3))
        assert out.data != planted and SECRET not in repr(out.data)



def test_a_dict_deeper_than_one_level_or_a_cycle_is_walked() -> None:
    """``_kept`` looks one level of dicts deep and no further: a deeper dict, and two dicts holding each other
    (which the walk cuts with its depth marker), answer ``False`` and are walked, never recursed into."""
    redact_value({"path": {"a": "notes.txt"}})  # the keys are met once: known plain
    assert redaction._kept({"path": {"a": "notes.txt"}}, None)
    assert not redaction._kept({"path": {"a": {"a": "notes.txt"}}}, None)
    first: dict[str, Any] = {"a": "notes.txt"}
    second: dict[str, Any] = {"a": first}
    first["path"] = second
    assert not redaction._kept({"path": first}, None)
    assert "depth limit" in repr(redact_value({"path": first}))

# ---------------------------------------------------------------------------------------------- the tool path

calls = st.fixed_dictionaries({
    "tool_name": ids, "args": st.dictionaries(keys, values, max_size=3),
    "task_id": st.sampled_from(["task_1", "task_1", f"task_{SECRET}"]),
    "session_id": st.sampled_from(["s1", "s1", "s2", f"s {SECRET}"]), "tool_call_id": ids,
    "turn_id": st.sampled_from(["turn_1", "turn_1", "turn_2", f"turn_{SECRET}"]),
    "api_request_id": st.sampled_from(["turn_1:api:1", "turn_2:api:1", SECRET]),
    "middleware_trace": st.sampled_from([[], [{"source": "mw"}], [{"source": SECRET}]]),
    "toolset": st.one_of(st.none(), ids), "result": texts,
    "duration_ms": st.one_of(st.integers(0, 10**6), st.none(), st.sampled_from(["5", SECRET])),
    "status": st.sampled_from(["ok", "ok", "error", SECRET]), "error_type": st.one_of(st.none(), ids),
    "error_message": st.one_of(st.none(), texts), "exit_code": st.one_of(st.none(), st.integers(-1, 2)),
    "how": st.sampled_from(["alone", "alone", "with_next", "asks"]),
})
CALL: Final = dict(tool_name="read_file", args={"path": "notes.txt"}, task_id="task_1", session_id="s1",
                  tool_call_id="call_1", turn_id="turn_1", api_request_id="turn_1:api:1", middleware_trace=[],
                  toolset=None, result="done", duration_ms=3, status="ok", error_type=None, error_message=None,
                  exit_code=None, how="alone")
"""A lone tool call of turn ``turn_1`` with every field known clean."""
START_FIELDS = ("tool_name", "args", "task_id", "session_id", "tool_call_id", "turn_id", "api_request_id",
                "middleware_trace", "toolset")
END_FIELDS = ("result", "duration_ms", "status", "error_type", "error_message", "exit_code")


def published(hook_calls: list[dict[str, Any]], cap: int | None) -> list[tuple[Any, ...]]:
    """What a listener gets for ``hook_calls``, ids and times left out. The turns of the calls are opened first
    (each call of a turn then passes the same id objects); a call ``with_next`` overlaps the next one (both start
    before either ends), one that ``asks`` raises a human-input request while it runs (a mark under its start)."""
    seen: list[ScopeEvent] = []
    plugin = ScopePlugin((seen.append,), max_value_chars=cap, toolsets={"read_file": "files"})
    turns = dict.fromkeys((c["session_id"], c["turn_id"], c["task_id"]) for c in hook_calls)
    for session_id, turn_id, task_id in turns:
        plugin.pre_llm_call(session_id=session_id, task_id=task_id, turn_id=turn_id, user_message="hello there",
                            is_first_turn=True, model="m", platform="cli", sender_id=None, agent_version=None)
    pending: list[dict[str, Any]] = []
    for fields in hook_calls:
        start = {k: fields[k] for k in START_FIELDS}
        plugin.pre_tool_call(**start)
        if fields["how"] == "asks":
            plugin.on_human_input_request(kind="clarify", request_id="call_1", session_id=fields["session_id"],
                                          prompt=fields["result"])
        pending.append(fields)
        if fields["how"] != "with_next":
            for done in pending:
                plugin.post_tool_call(**{k: done[k] for k in START_FIELDS}, **{k: done[k] for k in END_FIELDS})
            pending.clear()
    for done in pending:
        plugin.post_tool_call(**{k: done[k] for k in START_FIELDS}, **{k: done[k] for k in END_FIELDS})
    plugin.shutdown(5.0)
    return [_row(event) for event in seen]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(st.lists(calls, min_size=1, max_size=5), st.sampled_from([None, 1_000, 1_000_000]))
@example([{**CALL, "api_request_id": id_} for id_ in ("turn_1:api:1", SECRET)], None)
@example([{**CALL, "task_id": id_} for id_ in ("task_1", f"task_{SECRET}")], None)
def test_the_tool_path_with_turns_gives_the_full_walk(monkeypatch: pytest.MonkeyPatch,
                                                      hook_calls: list[dict[str, Any]], cap: int | None) -> None:
    """FMT-33a: several tool calls per turn (the turn's memo of clean ids, calls held alone and published by their
    end, marks waiting under a held start, overlapping calls) publish what every field walked publishes."""
    shortcut = published(hook_calls, cap)
    with monkeypatch.context() as m:
        _full_walk(m)
        walked = published(hook_calls, cap)
    assert shortcut == walked
    assert _no_secret(shortcut)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(st.lists(calls, min_size=1, max_size=5))
def test_a_start_released_alone_is_what_routing_its_end_gives(monkeypatch: pytest.MonkeyPatch,
                                                              hook_calls: list[dict[str, Any]]) -> None:
    """FMT-9, FMT-21, FMT-6: the tool end that publishes its start held alone gives the same events, in the same
    order and with the same flags, as routing that end through the held starts."""
    shortcut = published(hook_calls, None)
    with monkeypatch.context() as m:
        m.setattr(HeldStarts, "release_alone", lambda self, start, publish: False)
        routed = published(hook_calls, None)
    assert shortcut == routed


def test_the_tool_shortcuts_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparisons above compare something: a turn's second tool call finds its ids in the turn's memo (no
    look-up), and a lone call's end publishes its held start itself."""
    looked: list[object] = []
    real = tool_call.known_clean_text
    monkeypatch.setattr(tool_call, "known_clean_text", lambda value: looked.append(value) or real(value))
    released: list[bool] = []
    real_release = HeldStarts.release_alone

    def release_alone(self: HeldStarts, start: ScopeEvent, publish: Any) -> bool:
        released.append(real_release(self, start, publish))
        return released[-1]

    monkeypatch.setattr(HeldStarts, "release_alone", release_alone)
    published([CALL, {**CALL, "tool_call_id": "call_2"}], None)
    starts = [value for value in looked if value in ("s1", "task_1", "turn_1", "turn_1:api:1")]
    assert starts.count("turn_1:api:1") == 1  # the second call's ids: the memo
    assert released == [True, True]


# ---------------------------------------------------------------------------------------------- deferred status

results = st.one_of(
    texts, st.sampled_from(['{"error": "boom"}', ' \n{"error": "bad ' + SECRET + '"}', '{"error": null}',
                            '{"error": false, "x": 1}', '{"\\u0065rror": "escaped"}', '{"error": ""}', "{not json",
                            '[{"error": "in a list"}]', '{"error": {"code": 3}}']),
    st.builds(lambda e: '{"error": %s}' % e, st.sampled_from(['"x"', "1", "true", "[]", "[1]", "0", '" "'])),
    st.none(), st.just({"error": "not text"}),
)


def _post(plugin: ScopePlugin, fields: tuple[Any, ...]) -> None:
    getattr(plugin.post_tool_call, RECORD_LANE)(plugin)(fields)


@settings(max_examples=200, deadline=None)
@given(results, ids, st.sampled_from(["s1", f"s {SECRET}"]))
def test_a_deferred_status_is_derived_as_the_general_path_derives_it(result: Any, tool_call_id: str,
                                                                     session_id: str) -> None:
    """OBS-38: a tool end whose status the host left to derive (``DEFERRED_STATUS`` on its record lane) publishes
    what the end with the status derived beforehand (``derive_status``) publishes."""
    rows = []
    for deferred in (True, False):
        seen: list[ScopeEvent] = []
        plugin = ScopePlugin((seen.append,))
        start = ("read_file", {"path": "notes.txt"}, "task_1", session_id, tool_call_id, "turn_1", "turn_1:api:1",
                 [], None)
        getattr(plugin.pre_tool_call, RECORD_LANE)(plugin)(start)
        status = (DEFERRED_STATUS, None, None) if deferred else \
            (derive_status(result) if isinstance(result, str) else ("ok", None, None))
        _post(plugin, (*start[:7], result, 4, *status, [], None, None))
        plugin.shutdown(5.0)
        rows.append([_row(event) for event in seen])
    assert rows[0] == rows[1]
    assert "DEFERRED" not in repr(rows[0])
    assert _no_secret(rows[0])


def test_a_tool_end_keeps_the_agent_threads_short_lane() -> None:
    """FMT-79 (issue #29): the tool kind deriving the status itself does not change the lane the agent's thread runs
    for a tool end: the record is offered at the size of its result alone (no look at the other fields), as
    before, and carries ``DEFERRED_STATUS`` as the host gave it."""
    from hermes_pipeline.export.sizes import ITEM_BYTES

    plugin = ScopePlugin(deferred=True)
    offered: list[tuple[Any, int]] = []
    assert plugin._publication is not None
    plugin._publication.submit_sized = lambda record, size: offered.append((record, size)) or True  # type: ignore
    lane = getattr(plugin.post_tool_call, RECORD_LANE)(plugin)
    lane(("read_file", {"path": "x" * 5_000}, "task_1", "s1", "call_1", "turn_1", "turn_1:api:1", "done", 4,
          DEFERRED_STATUS, None, None, [{"source": "y" * 5_000}], None, None))
    [(record, size)] = offered
    assert size == ITEM_BYTES + len("done")
    assert record[3][9] is DEFERRED_STATUS
    plugin.shutdown(5.0)
