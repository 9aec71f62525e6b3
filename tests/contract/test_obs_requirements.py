"""Observer-contract rules (spec 01) that no other test file names: returns, gating, sharing, versioning.

Each test names the requirement it proves; the rule is restated in its docstring.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.contract.hooks import OBSERVER_HOOKS, V1_HOOKS
from hermes_pipeline.contract.versions import TELEMETRY_SCHEMA_VERSION
from hermes_pipeline.testing import capture

from tests.sinks.atof._support import collect, memory_plugin
from tests._scripted import run_scripted_session
from hermes_pipeline.testing import chat_response

REQUEST: dict[str, Any] = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}]}
BEHAVIOUR_HOOKS = {"pre_llm_call", "pre_tool_call", "transform_tool_result", "transform_llm_output"}


def make_host(engine: Engine) -> Host:
    return Host(engine, platform="cli", model="test-model", provider="test-provider",
                base_url="http://127.0.0.1:9/v1", api_mode="chat_completions")


def one_turn(engine: Engine) -> dict[str, Any]:
    """A turn with an LLM call, a tool call, an approval and a completion; returns what the host got."""
    host = make_host(engine)
    seen: dict[str, Any] = {}
    with host.session("s1") as session, session.turn("hi") as turn:
        seen["user_content"] = turn.user_content
        seen["response"] = turn.call_llm(dict(REQUEST), lambda req: chat_response("answer"))

        def tool(path: str) -> str:
            seen["tool_args"] = {"path": path}
            with turn.approval("cat " + path, description="reads") as approval:
                seen["approved"] = approval.resolve("once")
            return "contents"

        seen["tool_result"] = turn.call_tool("read_file", {"path": "a.txt"}, tool, tool_call_id="c1")
        seen["final"] = turn.complete("final text")
    return seen


# ------------------------------------------------------------------ §5 returns


JUNK_RETURNS = ["replaced", {"action": "block", "message": "stop"}, {"action": "modify", "args": {"path": "x"}},
                {"context": "injected"}, 42, ["list"]]


def test_obs_1_and_obs_28_returns_of_other_hooks_change_nothing() -> None:
    """OBS-1 / OBS-28: observer callbacks cannot change runtime behaviour; only the four §5 hooks'
    returns have an effect. Callbacks on every other hook return block, modify, context and
    replacement values, and the host's results are exactly those of a run without plugins."""
    baseline = one_turn(Engine())
    engine = Engine()
    for hook in OBSERVER_HOOKS:
        if hook in BEHAVIOUR_HOOKS:
            continue
        for junk in JUNK_RETURNS:
            engine.register_hook(hook, lambda junk=junk, **kw: junk, plugin=f"junk-{hook}")
    with capture(engine) as rec:
        assert one_turn(engine) == baseline
    assert {"pre_approval_request", "post_tool_call", "post_llm_call", "on_session_end"} <= set(rec.names())


def test_obs_28_the_four_behaviour_hooks_do_change_results() -> None:
    """OBS-28: the §5 table is implemented: each of the four hooks, when it returns a valid value,
    changes what the host produces (so the previous test is not passing by accident)."""
    baseline = one_turn(Engine())
    engine = Engine()
    engine.register_hook("pre_llm_call", lambda **kw: "extra context")
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "modify", "args": {"path": "b.txt"}})
    engine.register_hook("transform_tool_result", lambda **kw: "rewritten result")
    engine.register_hook("transform_llm_output", lambda **kw: "rewritten final")
    got = one_turn(engine)
    assert got["user_content"] != baseline["user_content"] and "extra context" in str(got["user_content"])
    assert got["tool_args"] == {"path": "b.txt"}
    assert got["tool_result"] == "rewritten result" and got["final"] == "rewritten final"


_not_a_directive = st.one_of(
    st.none(), st.integers(), st.text(max_size=10), st.lists(st.integers(), max_size=3),
    st.fixed_dictionaries({"action": st.text(max_size=8).filter(lambda a: a not in ("block", "modify"))}),
    st.fixed_dictionaries({"action": st.just("block"), "message": st.one_of(st.just(""), st.none(), st.integers())}),
    st.fixed_dictionaries({"action": st.just("modify"),
                           "args": st.one_of(st.just({}), st.none(), st.text(max_size=5), st.lists(st.integers()))}),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(returned=_not_a_directive)
def test_obs_29_other_pre_tool_call_returns_are_ignored_and_logged_at_debug(
        returned: Any, caplog: pytest.LogCaptureFixture) -> None:
    """OBS-29: any pre_tool_call return other than a valid block or modify (other actions, non-dicts,
    a block without a non-empty message, a modify without a non-empty dict) is ignored: the tool runs
    with its original arguments. A non-None ignored return is logged at DEBUG."""
    engine = Engine()
    engine.register_hook("pre_tool_call", lambda **kw: returned)
    host = make_host(engine)
    calls: list[dict[str, Any]] = []
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="hermes_pipeline"):
        with host.session() as session, session.turn("x") as turn:
            result = turn.call_tool("t", {"path": "a"}, lambda path: calls.append({"path": path}) or "ran")
    assert result == "ran" and calls == [{"path": "a"}]
    ignored = [r for r in caplog.records if "ignored pre_tool_call return" in r.getMessage()]
    if returned is not None:
        assert ignored and all(r.levelno == logging.DEBUG for r in ignored)


# ------------------------------------------------------------------ consumers (§4, §6, §12)


def _shape(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a reader sees of an ATOF stream, without IDs: kind, name, phase, parent position."""
    index = {e["uuid"]: i for i, e in enumerate(events) if e.get("scope_category") == "start"}
    return [(e["kind"], e["name"], e.get("scope_category"), index.get(e.get("parent_uuid") or ""))
            for e in events]


def test_obs_24_consumers_treat_api_request_id_as_opaque(monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-24: consumers use explicit fields and never parse ``api_request_id``; its reference format
    ``<turn_id>:api:<n>`` may change. The same scripted session exported to ATOF with opaque request
    IDs (no turn id, no ``:api:``) gives the same scopes, names and nesting."""
    import hermes_pipeline.engine.ids as ids

    def run() -> list[dict[str, Any]]:
        engine = Engine()
        plugin, (dest,) = memory_plugin(engine)
        run_scripted_session(engine)
        return collect(plugin, dest)

    reference = run()
    counter = iter(range(1000))
    monkeypatch.setattr(ids, "api_request_id", lambda turn_id, n: f"opaque-{next(counter):04d}")
    opaque = run()
    assert any("opaque-" in json.dumps(e) for e in opaque)
    assert not any(":api:" in json.dumps(e) for e in opaque)
    assert _shape(opaque) == _shape(reference)


def _dispatch_all(engine: Engine, events: list[tuple[str, dict[str, Any]]]) -> None:
    for hook, payload in events:
        engine.dispatch(hook, payload)


def _session_events(ids: Any, extra: dict[str, Any], status: str) -> list[tuple[str, dict[str, Any]]]:
    """Raw hook payloads for one session with one tool call and one subagent; IDs are ``ids``."""
    base = {"session_id": "s1", "platform": "cli", "model": "m", **extra}
    turn = {**base, "task_id": ids, "turn_id": "t1"}
    tool = {**turn, "tool_name": "read_file", "args": {"path": "a"}, "tool_call_id": ids, "api_request_id": ids}
    return [
        ("on_session_start", base),
        ("pre_llm_call", {**turn, "user_message": "hi", "conversation_history": [], "is_first_turn": True,
                          "sender_id": ids}),
        ("pre_tool_call", tool),
        ("post_tool_call", {**tool, "result": "x", "duration_ms": 1, "status": status, "error_type": None,
                            "error_message": None, "middleware_trace": []}),
        ("subagent_start", {**extra, "parent_session_id": "s1", "parent_turn_id": "t1", "parent_subagent_id": ids,
                            "child_session_id": "c1", "child_subagent_id": "sa1", "child_role": "r",
                            "child_goal": "g"}),
        ("subagent_stop", {**extra, "parent_session_id": "s1", "parent_turn_id": "t1", "child_session_id": "c1",
                           "child_subagent_id": "sa1", "child_role": "r", "child_status": status,
                           "child_outcome": None, "child_summary": None, "duration_ms": 3,
                           "tool_call_history": [], "tool_call_history_dropped": 0}),
        ("post_llm_call", {**turn, "user_message": "hi", "assistant_response": "ok", "conversation_history": []}),
        ("on_session_end", {**turn, "completed": True, "interrupted": False, "failed": False,
                            "turn_exit_reason": status, "reason": status, "api_request_id": ids}),
        ("on_session_finalize", {**base, "reason": status}),
    ]


@pytest.mark.parametrize("missing_id", ["", None], ids=["empty", "none"])
def test_obs_25_consumers_accept_empty_and_none_ids(missing_id: Any) -> None:
    """OBS-25: consumers accept both ``""`` and ``None`` for an ID the host does not know. The ATOF
    consumer takes such a session without a single callback failure and writes schema-valid events
    for the tool call and the subagent."""
    engine = Engine()
    plugin, (dest,) = memory_plugin(engine)
    _dispatch_all(engine, _session_events(missing_id, {}, "ok"))
    events = collect(plugin, dest)
    assert engine.failure_stats().by_plugin == {}
    names = {e["name"] for e in events}
    assert "read_file" in names and events


def test_obs_80_consumers_ignore_unknown_fields_and_accept_unknown_enum_values() -> None:
    """OBS-80: consumers ignore unknown fields and accept unknown values in open enumerations
    (``status``, ``reason``, ``child_status``, ...). The ATOF consumer takes a session whose payloads
    carry a new field and a new status value without a failure, and still writes the tool call."""
    engine = Engine()
    plugin, (dest,) = memory_plugin(engine)
    _dispatch_all(engine, _session_events("id-1", {"field_from_the_future": {"x": 1}}, "quarantined"))
    events = collect(plugin, dest)
    assert engine.failure_stats().by_plugin == {}
    assert [e["name"] for e in events if e.get("scope_category") == "end"].count("read_file") == 1
    assert "field_from_the_future" not in json.dumps(events)


@pytest.mark.parametrize("approval_first", [True, False], ids=["approval-outside", "human-input-outside"])
def test_obs_35_consumers_accept_either_order_of_approval_and_human_input(approval_first: bool) -> None:
    """OBS-35: consumers do not assume a fixed order between the approval pair and the human-input
    pair of one prompt. The ATOF consumer records both pairs, nested either way, without failures."""
    engine = Engine()
    plugin, (dest,) = memory_plugin(engine)
    host = make_host(engine)
    with host.session("s1") as session, session.turn("x") as turn:
        if approval_first:
            with turn.approval("rm -rf tmp", session_key="k") as approval:
                with turn.human_input("approval", "Allow?", session_key="k") as wait:
                    wait.resolve("submitted")
                approval.resolve("once")
        else:
            with turn.human_input("approval", "Allow?", session_key="k") as wait:
                with turn.approval("rm -rf tmp", session_key="k") as approval:
                    approval.resolve("once")
                wait.resolve("submitted")
    text = json.dumps(collect(plugin, dest))
    assert engine.failure_stats().by_plugin == {}
    assert "rm -rf tmp" in text or "approval" in text
    assert text.count('"scope_category": "start"') == text.count('"scope_category": "end"')


# ------------------------------------------------------------------ §7.7 approvals


def test_obs_42_approval_hooks_are_observe_only() -> None:
    """OBS-42: plugins cannot pre-answer or veto an approval through the approval hooks; their
    returns are ignored and the host's own answer decides."""
    engine = Engine()
    for hook in ("pre_approval_request", "post_approval_response"):
        for junk in ("deny", {"choice": "deny"}, {"action": "block", "message": "no"}, False):
            engine.register_hook(hook, lambda junk=junk, **kw: junk)
    with capture(engine) as rec:
        host = make_host(engine)
        with host.session() as session, session.turn("x") as turn:
            with turn.approval("ls") as approval:
                assert approval.choice is None  # nothing pre-answered it
                assert approval.resolve("once") is True
            with turn.approval("rm") as refused:
                assert refused.resolve("deny") is False
    assert [e["choice"] for e in rec.of("post_approval_response")] == ["once", "deny"]


# ------------------------------------------------------------------ §8 payload sharing, §9 gating


def test_obs_52_legacy_lists_are_shallow_copies() -> None:
    """OBS-52: ``conversation_history`` is a shallow copy of the host's list: later mutation of the
    host's list is not seen by a consumer that kept the payload list, and the messages themselves are
    the same objects (no deep copy)."""
    engine = Engine()
    history = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "earlier"}]
    with capture(engine) as rec:
        host = make_host(engine)
        with host.session() as session, session.turn("now", conversation_history=history) as turn:
            turn.call_llm({"model": "m", "messages": history}, lambda req: chat_response())
            history.append({"role": "assistant", "content": "later"})
            turn.complete("done")
    for hook in ("pre_llm_call", "pre_api_request"):
        kept = rec.last(hook)["conversation_history"]
        assert kept is not history and len(kept) == 2
        assert all(a is b for a, b in zip(kept, history))


class NoCopyList(list):  # type: ignore[type-arg]
    """A history list that fails the test when anything iterates (copies) it."""

    def __iter__(self) -> Any:
        raise AssertionError("conversation history copied without a listener")


def test_obs_67_other_hooks_build_nothing_costly_without_a_listener(monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-67: the host gates every other hook like the OBS-66 ones: with a listener on an unrelated
    hook only, a turn with an LLM call, a tool call, an approval, a human-input wait, a subagent and a
    completion makes no list copy of the history, scrubs no prompt and builds no tool history."""
    import hermes_pipeline.host.interaction as interaction
    import hermes_pipeline.host.tools as tools

    def forbidden(*a: Any, **k: Any) -> Any:
        raise AssertionError("payload part built without a listener")

    monkeypatch.setattr(interaction, "scrub_prompt", forbidden)
    monkeypatch.setattr(tools, "history_entry", forbidden)
    monkeypatch.setattr(tools, "derive_status", forbidden)
    engine = Engine()
    engine.register_hook("on_session_reset", lambda **kw: None)
    host = make_host(engine)
    history = NoCopyList()
    with host.session() as session, session.turn("x", conversation_history=history) as turn:
        turn.call_llm(dict(REQUEST), lambda req: chat_response())
        with turn.subagent(role="r", goal="g") as run:
            with run.session.turn("g") as child:
                assert child.call_tool("t", {"a": 1}, lambda a: "ok") == "ok"
            run.finish("completed")
        with turn.approval("ls") as approval:
            approval.resolve("once")
        with turn.human_input("clarify", "secret prompt sk-abcdefghijklmnopqrstuvwx") as wait:
            wait.resolve("provided")
        assert turn.complete("done") == "done"


def test_obs_68_sanitized_request_built_once_and_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-68: a sanitized payload is built once per event and shared by every consumer: three
    pre_api_request listeners cause one ``request`` build and all see the same object."""
    import hermes_pipeline.host.llm as llm

    builds: list[Any] = []
    real = llm.build_request_field

    def counting(request: Any) -> Any:
        builds.append(request)
        return real(request)

    monkeypatch.setattr(llm, "build_request_field", counting)
    engine = Engine()
    seen: list[Any] = []
    for _ in range(3):
        engine.register_hook("pre_api_request", lambda **kw: seen.append(kw["request"]))
    host = make_host(engine)
    with host.session() as session, session.turn("x") as turn:
        turn.call_llm(dict(REQUEST), lambda req: chat_response())
    assert len(builds) == 1 and len(seen) == 3
    assert seen[0] is seen[1] is seen[2]


# ------------------------------------------------------------------ §10 hang protection


@pytest.mark.parametrize("hook", V1_HOOKS)
def test_obs_74_every_v1_hook_is_bounded(hook: str) -> None:
    """OBS-74: with hang protection on, every §7 hook is bounded: a hung callback is abandoned (class
    B: the other callbacks' results are returned) except ``pre_tool_call``, which is class C (a
    timed-out callback counts as a block)."""
    engine = Engine(hook_callback_timeout=0.05)
    release = threading.Event()
    engine.register_hook(hook, lambda **kw: release.wait(10), plugin="hanger")
    engine.register_hook(hook, lambda **kw: "fast")
    try:
        results = engine.dispatch(hook, {})
    finally:
        release.set()
    expected = "C" if hook == "pre_tool_call" else "B"
    assert OBSERVER_HOOKS[hook].hang_class == expected
    if expected == "B":
        assert results == ["fast"]
    else:
        assert results[0]["action"] == "block" and "fast" in results
    assert engine.failure_stats().timeouts["hanger"] == 1


# ------------------------------------------------------------------ §12 versioning

# The fields of every hermes.observer.v1 hook as first published. Under v1 they may only gain
# fields (OBS-78); removing or renaming one needs a new version string (OBS-79).
V1_FIELDS: dict[str, tuple[str, ...]] = {
    "on_session_start": ("session_id", "model", "platform"),
    "on_session_end": ("session_id", "task_id", "turn_id", "completed", "interrupted", "model", "platform",
                       "failed", "turn_exit_reason", "reason", "api_request_id"),
    "on_session_finalize": ("session_id", "platform", "reason"),
    "on_session_reset": ("session_id", "platform", "reason", "old_session_id", "new_session_id"),
    "pre_llm_call": ("session_id", "task_id", "turn_id", "user_message", "conversation_history", "is_first_turn",
                     "model", "platform", "sender_id"),
    "post_llm_call": ("session_id", "task_id", "turn_id", "user_message", "assistant_response",
                      "conversation_history", "model", "platform"),
    "transform_llm_output": ("response_text", "session_id", "model", "platform", "turn_id"),
    "pre_api_request": ("session_id", "task_id", "turn_id", "api_request_id", "platform", "model", "provider",
                        "base_url", "api_mode", "api_call_count", "user_message", "conversation_history",
                        "request_messages", "message_count", "tool_count", "approx_input_tokens",
                        "request_char_count", "max_tokens", "started_at", "middleware_trace", "request",
                        "retry_count", "system_prompt"),
    "post_api_request": ("session_id", "task_id", "turn_id", "api_request_id", "platform", "model", "provider",
                         "base_url", "api_mode", "api_call_count", "api_duration", "started_at", "ended_at",
                         "finish_reason", "message_count", "response_model", "usage", "assistant_content_chars",
                         "assistant_tool_call_count", "response", "assistant_message", "retry_count"),
    "api_request_error": ("session_id", "task_id", "turn_id", "api_request_id", "platform", "model", "provider",
                          "base_url", "api_mode", "api_call_count", "api_duration", "started_at", "ended_at",
                          "status_code", "retry_count", "max_retries", "retryable", "reason", "error", "request",
                          "first_chunk_at", "first_delta_at", "credential_id", "account_name"),
    "pre_tool_call": ("tool_name", "args", "task_id", "session_id", "tool_call_id", "turn_id", "api_request_id",
                      "middleware_trace"),
    "post_tool_call": ("tool_name", "args", "task_id", "session_id", "tool_call_id", "turn_id", "api_request_id",
                       "result", "duration_ms", "status", "error_type", "error_message", "middleware_trace"),
    "transform_tool_result": ("tool_name", "args", "task_id", "session_id", "tool_call_id", "turn_id",
                              "api_request_id", "result", "duration_ms", "status", "error_type", "error_message"),
    "pre_approval_request": ("command", "description", "pattern_key", "pattern_keys", "session_key", "surface",
                             "turn_id", "tool_call_id", "session_id"),
    "post_approval_response": ("command", "description", "pattern_key", "pattern_keys", "session_key", "surface",
                               "turn_id", "tool_call_id", "session_id", "choice"),
    "on_human_input_request": ("kind", "request_id", "session_id", "session_key", "platform", "prompt"),
    "on_human_input_resolved": ("kind", "request_id", "session_id", "session_key", "platform", "prompt",
                                "outcome"),
    "subagent_start": ("parent_session_id", "parent_turn_id", "parent_subagent_id", "child_session_id",
                       "child_subagent_id", "child_role", "child_goal"),
    "subagent_stop": ("parent_session_id", "parent_turn_id", "child_session_id", "child_subagent_id",
                      "child_role", "child_status", "child_outcome", "child_summary", "duration_ms",
                      "tool_call_history", "tool_call_history_dropped"),
}


def test_obs_78_and_obs_79_v1_only_grows_additively() -> None:
    """OBS-78 / OBS-79: while the version string is ``hermes.observer.v1`` every v1 hook still exists
    and still has every v1 field (new fields and hooks may be added); a removal or rename must come
    with a new version string, so this fails if one happens under v1."""
    if TELEMETRY_SCHEMA_VERSION != "hermes.observer.v1":
        pytest.skip(f"the contract moved to {TELEMETRY_SCHEMA_VERSION}; the v1 snapshot no longer binds")
    assert set(V1_FIELDS) == set(V1_HOOKS) and set(V1_HOOKS) <= set(OBSERVER_HOOKS)
    for hook, fields in V1_FIELDS.items():
        assert set(fields) <= set(OBSERVER_HOOKS[hook].fields), hook


def test_obs_78_every_payload_carries_the_v1_version() -> None:
    """OBS-78: the payload version of every hook of a full session is ``hermes.observer.v1``."""
    engine = Engine()
    with capture(engine) as rec:
        run_scripted_session(engine)
    assert len(set(rec.names())) >= 15
    assert {e["telemetry_schema_version"] for e in rec.events} == {"hermes.observer.v1"}


def test_obs_53_export_consumers_do_not_resanitize_or_deep_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-53: consumers of already-sanitized payloads do not deep-copy or sanitize them again. A
    session observed by an in-memory recorder and by the ATOF consumer makes exactly as many
    sanitizer and ``deepcopy`` calls as the same session observed by the recorder alone."""
    import copy

    import hermes_pipeline.engine.sanitize as sanitize_mod

    calls: list[str] = []
    for name in ("sanitize", "jsonable"):
        real = getattr(sanitize_mod, name)
        monkeypatch.setattr(sanitize_mod, name,
                            lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    real_deepcopy = copy.deepcopy
    monkeypatch.setattr(copy, "deepcopy", lambda *a, **k: calls.append("deepcopy") or real_deepcopy(*a, **k))

    def run(with_atof: bool) -> list[str]:
        calls.clear()
        engine = Engine()
        with capture(engine):
            if with_atof:
                plugin, (dest,) = memory_plugin(engine)
            run_scripted_session(engine)
            if with_atof:
                assert len(collect(plugin, dest)) > 20
        return sorted(calls)

    assert run(with_atof=True) == run(with_atof=False)


def test_obs_46_smart_approvals_fire_no_human_input_hooks() -> None:
    """OBS-46: the human-input hooks do not fire for "smart" approvals decided by an auxiliary LLM
    without a human wait: an approval the host resolves as ``smart_approve`` / ``smart_deny`` emits
    the approval pair only; a real wait for the human emits the human-input pair."""
    engine = Engine()
    with capture(engine) as rec:
        host = make_host(engine)
        with host.session() as session, session.turn("x") as turn:
            for choice in ("smart_approve", "smart_deny"):
                with turn.approval("rm -rf build") as approval:
                    approval.resolve(choice)
            assert not rec.of("on_human_input_request") and not rec.of("on_human_input_resolved")
            with turn.approval("rm -rf dist") as approval, turn.human_input("approval", "Allow?") as wait:
                wait.resolve("submitted")
                approval.resolve("once")
    assert [e["choice"] for e in rec.of("post_approval_response")] == ["smart_approve", "smart_deny", "once"]
    assert len(rec.of("on_human_input_request")) == len(rec.of("on_human_input_resolved")) == 1
