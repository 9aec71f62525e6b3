"""Record lanes (``RECORD_LANE``, :meth:`Engine.record_lanes`): the tool path without payload or dispatch.

When every listener of a tool hook is a deferred scope plugin's recorder, the host hands each one the
hook's fields as one tuple in hookspec order instead of building the payload dict and dispatching it
(FMT-79: the caller's thread only timestamps and enqueues). The scope events must be the same as
through the dispatch, FMT-80's pairing of dropped records must hold, and a listener that can answer
(a plugin's hookimpl) or hang protection must switch the lanes off.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.contract import hookspecs
from hermes_pipeline.contract.hooks import OBSERVER_HOOKS
from hermes_pipeline.contract.hookspecs import hookimpl
from hermes_pipeline.export import ScopeEvent, ScopePlugin
from hermes_pipeline.engine.callbacks import LANE_READS, RECORD_LANE, lanes_read
from hermes_pipeline.host.message import MessageView
from hermes_pipeline.host.tools import (IDENTITY, NO_TRACE, post_tool_fields, post_tool_payload, pre_tool_fields,
                                      pre_tool_payload)

from tests.host._lanes import normalised
from tests.sinks.atof._support import stuck_scope_plugin

TOOL_HOOKS = ("pre_tool_call", "post_tool_call")


class Answering:
    @hookimpl
    def pre_tool_call(self, tool_name: str) -> None:
        return None


def _spec_names(hook: str) -> list[str]:
    names = [n for n in inspect.signature(getattr(hookspecs, hook)).parameters if n != "telemetry_schema_version"]
    assert tuple(names) == OBSERVER_HOOKS[hook].fields  # the catalogue the lanes read states the same order
    return names


def test_fields_are_the_payload_in_hookspec_order() -> None:
    """One shape: the payload dict is made from the fields (never built beside them), in hookspec order with the
    schema key last, and the fields zipped with the hookspec's parameters are that payload."""
    engine = Engine()
    turn = Host(engine, model="m").session().turn("hi")
    args = {"path": "a"}
    fields = pre_tool_fields(turn, "read_file", args, "c1", "r1", [], "files")
    pre = pre_tool_payload(fields, args)
    assert list(pre) == [*_spec_names("pre_tool_call"), "telemetry_schema_version"]
    assert dict(zip(_spec_names("pre_tool_call"), fields, strict=True)) == \
        {k: v for k, v in pre.items() if k != "telemetry_schema_version"}
    ended = post_tool_fields(turn, "read_file", args, "c1", "r1", "x", 3, "error", "tool_error", "m", [], None)
    post = post_tool_payload(ended, args)
    assert list(post) == [*_spec_names("post_tool_call"), "telemetry_schema_version"]
    assert dict(zip(_spec_names("post_tool_call"), ended, strict=True)) == \
        {k: v for k, v in post.items() if k != "telemetry_schema_version"}
    assert ended[:IDENTITY] == fields[:IDENTITY]  # one identity, shared by both hooks of the call


class _LaneRecorder:
    """A recorder offering record lanes: keeps each hook's fields as received."""

    def __init__(self) -> None:
        self.fields: list[tuple[str, tuple[Any, ...]]] = []


def _lane_recorder(engine: Engine) -> _LaneRecorder:
    recorder = _LaneRecorder()
    for hook in TOOL_HOOKS:
        def callback(*a: Any, _hook: str = hook, **k: Any) -> None:
            raise AssertionError(f"{_hook} dispatched although every listener offers a lane")

        def bind(plugin: Any, _hook: str = hook) -> Any:
            return lambda fields: recorder.fields.append((_hook, fields))

        setattr(callback, RECORD_LANE, bind)
        engine.register_hook(hook, callback)
    return recorder


@pytest.mark.parametrize("gated", [False, True])
def test_lane_fields_are_the_dispatched_payloads(gated: bool) -> None:
    """OBS-19 / FMT-79: a call's fields handed to record lanes are, value for value, the payload a dict listener
    gets for the same call (the identity built once per call, on the fast path and on the gated one), the status
    left to derive as ``DEFERRED_STATUS``; the payload's ``args`` are the read-only view of the same arguments."""
    from hermes_pipeline.engine.tool_status import DEFERRED_STATUS, resolve_status

    def calls(engine: Engine) -> None:
        host = Host(engine, model="m", toolsets={"read_file": "files"})
        turn = host.session("s1").turn("go", task_id="k1", turn_id="u1")
        guard = (lambda name, args: None) if gated else None
        turn.call_tool("read_file", {"path": "a"}, lambda path: "milk", tool_call_id="a", guardrail=guard)
        turn.call_tool("read_file", {"path": "b"}, lambda path: '{"error": "gone"}', tool_call_id="b",
                       api_request_id="r9", guardrail=guard)

    lanes_engine = Engine()
    recorder = _lane_recorder(lanes_engine)
    calls(lanes_engine)
    dict_engine = Engine()
    payloads: list[tuple[str, dict[str, Any]]] = []
    for hook in TOOL_HOOKS:
        dict_engine.register_hook(hook, lambda _hook=hook, **payload: payloads.append((_hook, payload)))
    calls(dict_engine)
    assert [hook for hook, _ in recorder.fields] == [hook for hook, _ in payloads] == list(TOOL_HOOKS) * 2
    assert recorder.fields[1][1][9] is DEFERRED_STATUS  # derived off the agent's thread, not here
    for (hook, fields), (_, payload) in zip(recorder.fields, payloads, strict=True):
        if hook == "post_tool_call":
            fields = resolve_status(fields, 7, 9)
            payload = {**payload, "duration_ms": fields[8]}
        named = dict(zip(_spec_names(hook), fields, strict=True))
        assert named.pop("args") == payload.pop("args")
        trace = named.pop("middleware_trace")
        assert list(trace) == payload.pop("middleware_trace") == []
        if not gated:  # no middleware ran: the empty trace is the one empty tuple, not a new list per call
            assert trace is NO_TRACE
        assert payload.pop("telemetry_schema_version")
        assert named == payload


def test_lanes_only_when_every_listener_is_a_recorder() -> None:
    engine = Engine()
    engine.add_plugin(ScopePlugin(deferred=True), name="scopes")
    for hook in TOOL_HOOKS:
        lanes = engine.record_lanes(hook, engine.hook_listeners[hook])
        assert lanes is not None and len(lanes) == 1
    engine.add_plugin(Answering(), name="answering")  # may block or modify: the dispatch is needed
    assert engine.record_lanes("pre_tool_call", engine.hook_listeners["pre_tool_call"]) is None
    assert engine.record_lanes("post_tool_call", engine.hook_listeners["post_tool_call"]) is not None
    engine.remove_plugin("answering")
    assert engine.record_lanes("pre_tool_call", engine.hook_listeners["pre_tool_call"]) is not None
    engine.hook_callback_timeout = 1.0  # hang protection: every listener runs on the guarded path
    assert engine.record_lanes("pre_tool_call", engine.hook_listeners["pre_tool_call"]) is None



def _session(engine: Engine) -> None:
    session = Host(engine, model="m", toolsets={"read_file": "files"}).session("s1")
    turn = session.turn("go", task_id="k1", turn_id="u1")

    def boom(path: str) -> str:
        raise OSError("disk gone")

    args = {"path": "notes.txt"}
    turn.call_tool("read_file", args, lambda path: "milk", tool_call_id="a")
    args["path"] = "mutated after the call"  # the recorded arguments are a copy taken at the hook
    turn.call_tool("read_file", {"path": "x"}, lambda path: '{"error": "no such file"}', tool_call_id="b")
    turn.call_tool("read_file", {"path": "y"}, boom, tool_call_id="c")
    turn.call_tool("read_file", {"path": "z"}, lambda path: {"lines": 2}, tool_call_id="d")
    turn.end()
    session.finalize()


@pytest.mark.parametrize("deferred", [True, False])
def test_lanes_give_the_scope_events_of_the_dispatch(deferred: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[list[tuple[Any, ...]]] = []
    used: list[bool] = []
    for lanes in (True, False):
        engine = Engine()
        seen: list[ScopeEvent] = []
        plugin = ScopePlugin((seen.append,), deferred=deferred)
        engine.add_plugin(plugin, name="scopes")
        if not lanes:
            monkeypatch.setattr(engine, "record_lanes", lambda hook, entries: None)
        else:
            real = engine.record_lanes

            def spy(hook: str, entries: Any) -> Any:
                found = real(hook, entries)
                used.append(found is not None)
                return found

            monkeypatch.setattr(engine, "record_lanes", spy)
        _session(engine)
        assert plugin.shutdown(5.0)
        runs.append(normalised(seen))
    assert used and all(used)  # the first run really went through the lanes
    assert runs[0] == runs[1]
    tools = [e for e in runs[0] if e[5] == "tool"]
    assert len(tools) == 8
    assert '"mutated after the call"' not in "".join(e[8] for e in tools)


def test_fmt_80_a_dropped_opening_record_drops_its_closing_record_through_the_lanes() -> None:
    """FMT-80 with lanes: the queue is full for a tool start, so its end is dropped too (never half a pair)."""
    engine = Engine()
    plugin, seen, gate = stuck_scope_plugin(engine)

    def lane(hook: str, call_id: str, *extra: Any) -> None:
        lanes = engine.record_lanes(hook, engine.hook_listeners[hook])
        assert lanes is not None
        fields = ("t", {}, "k", "s", call_id, "u", "", *extra, [], None)
        for record in lanes:
            record(fields)

    done = ("x", 0, "ok", None, None)
    lane("pre_tool_call", "kept")      # queued (2 of 2)
    lane("pre_tool_call", "dropped")   # publication queue full: dropped, key remembered
    gate.set()
    assert plugin.flush(5.0)
    lane("post_tool_call", "dropped", *done)  # dropped with it
    lane("post_tool_call", "kept", *done)
    assert plugin.shutdown(5.0)
    tools = [(e.phase, (e.profile or {}).get("tool_call_id")) for e in seen if e.category == "tool"]
    assert tools == [("start", "kept"), ("end", "kept")]
    assert plugin.publication_stats()["pipeline.events_dropped"] == 2


def test_obs_38_lanes_derive_the_tool_status_off_the_agents_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-38 / FMT-79: through the lanes the host hands over the result and ``DEFERRED_STATUS``; the
    publication thread derives the status (a KB-sized result is scanned there, not on the agent's thread),
    and the scope events still carry ``error`` / ``tool_error`` and the error message of a JSON error result."""
    import threading

    import hermes_pipeline.engine.tool_status as tool_status
    import hermes_pipeline.host.tools as tools

    def forbidden(*a: Any, **k: Any) -> Any:
        raise AssertionError("status derived on the agent's thread")

    derived_on: list[int] = []
    real = tool_status.derive_status

    def spy(result: str) -> tuple[str, str | None, str | None]:
        derived_on.append(threading.get_ident())
        return real(result)

    monkeypatch.setattr(tools, "derive_status", forbidden)
    monkeypatch.setattr(tool_status, "derive_status", spy)
    engine = Engine()
    seen: list[ScopeEvent] = []
    plugin = ScopePlugin((seen.append,), deferred=True)
    engine.add_plugin(plugin, name="scopes")
    _session(engine)
    assert plugin.shutdown(5.0)
    assert derived_on and threading.get_ident() not in derived_on
    ends = " ".join(json.dumps(e.data, default=str) + json.dumps(e.metadata, default=str)
                    for e in seen if e.category == "tool")
    assert "no such file" in ends and "tool_error" in ends
    assert "DEFERRED_STATUS" not in ends


def _llm_turn(engine: Engine) -> None:
    calls = [{"id": f"call_{k}", "type": "function",
              "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}} for k in range(3)]
    response = {"id": "r", "object": "chat.completion", "model": "m", "choices": [
                {"index": 0, "finish_reason": "tool_calls",
                 "message": {"role": "assistant", "content": "", "tool_calls": calls}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}
    turn = Host(engine, model="m").session("s1").turn("go", task_id="k1", turn_id="u1")
    turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "go"}]}, lambda request: response)


@pytest.mark.parametrize("says", [True, False])
def test_the_message_view_is_built_only_for_a_lane_that_reads_it(says: bool) -> None:
    """OBS-19 / FMT-79: ``assistant_message`` (the frozen view of the provider's message) exists for listeners. A
    lane that says what it reads (``LANE_READS``) without it gets ``None`` in its place; one that does not say gets
    the view, as a dict listener does; the sanitized ``response`` is the same either way."""
    names = _spec_names("post_api_request")
    at, response_at = names.index("assistant_message"), names.index("response")
    got: list[tuple[Any, ...]] = []

    def callback(*a: Any, **k: Any) -> None:
        raise AssertionError("post_api_request dispatched although its one listener offers a lane")

    def bind(plugin: Any) -> Any:
        lane = got.append
        if says:
            def lane(fields: tuple[Any, ...]) -> None:
                got.append(fields)

            setattr(lane, LANE_READS, frozenset(names) - {"assistant_message"})
        return lane

    setattr(callback, RECORD_LANE, bind)
    engine = Engine()
    engine.register_hook("post_api_request", callback)
    _llm_turn(engine)
    dispatched: list[dict[str, Any]] = []
    dict_engine = Engine()
    dict_engine.register_hook("post_api_request", lambda **payload: dispatched.append(payload))
    _llm_turn(dict_engine)
    [fields], [payload] = got, dispatched
    assert isinstance(payload["assistant_message"], MessageView)
    assert len(payload["assistant_message"]["tool_calls"]) == 3
    if says:
        assert fields[at] is None
    else:
        assert fields[at] == payload["assistant_message"] and isinstance(fields[at], MessageView)
    assert fields[response_at] == payload["response"]


def test_the_scope_plugin_does_not_read_the_message_view() -> None:
    """The scope plugin's LLM end reads the sanitized ``response``, not the frozen view: its lane says so."""
    engine = Engine()
    engine.add_plugin(ScopePlugin(deferred=True), name="scopes")
    lanes = engine.record_lanes("post_api_request", engine.hook_listeners["post_api_request"])
    assert lanes is not None
    assert not lanes_read(lanes, "assistant_message") and lanes_read(lanes, "response")
    for hook in ("pre_llm_call", "post_llm_call", "pre_api_request"):  # nor the copy of the history
        lanes = engine.record_lanes(hook, engine.hook_listeners[hook])
        assert lanes is not None and not lanes_read(lanes, "conversation_history"), hook


@pytest.mark.parametrize("says", [True, False])
def test_the_history_is_copied_only_for_a_lane_that_reads_it(says: bool) -> None:
    """OBS-19: a turn's hooks hand their lanes a copy of the conversation history only when a lane reads it (or does
    not say what it reads); otherwise ``None`` in its place, and the history is not copied for nobody."""
    got: dict[str, tuple[Any, ...]] = {}
    engine = Engine()
    for hook in ("pre_llm_call", "post_llm_call", "pre_api_request"):
        def callback(*a: Any, _hook: str = hook, **k: Any) -> None:
            raise AssertionError(f"{_hook} dispatched although its one listener offers a lane")

        def bind(plugin: Any, _hook: str = hook) -> Any:
            def lane(fields: tuple[Any, ...]) -> None:
                got[_hook] = fields

            if says:
                setattr(lane, LANE_READS, frozenset(_spec_names(_hook)) - {"conversation_history"})
            return lane

        setattr(callback, RECORD_LANE, bind)
        engine.register_hook(hook, callback)
    history = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "noted"}]
    turn = Host(engine, model="m").session("s1").turn("go", task_id="k1", turn_id="u1",
                                                       conversation_history=history)
    turn.call_llm({"model": "m", "messages": [*history, {"role": "user", "content": "go"}]},
                  lambda request: {"choices": [{"message": {"role": "assistant", "content": "done"}}]})
    turn.complete("done")
    assert set(got) == {"pre_llm_call", "post_llm_call", "pre_api_request"}
    for hook, fields in got.items():
        copied = fields[_spec_names(hook).index("conversation_history")]
        if says:
            assert copied is None, hook
        else:
            assert isinstance(copied, list) and copied and copied is not history, hook
