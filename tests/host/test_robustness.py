"""The host loop never breaks on data or on an interrupt raised inside a hook (spec 01 OBS-37, OBS-15).

Two rules are checked here, with hand-picked cases and with generated sessions (hypothesis):

- any value a tool *returns* becomes text for the model (bounded, with a ``<...>`` marker where it
  cannot be rendered faithfully) and ``post_tool_call`` fires for it (OBS-37: exactly once per tool
  call that reached the pre-execution stage);
- a ``BaseException`` (Ctrl-C, ``SystemExit``, cancellation) raised inside any hook of a turn still
  propagates, but the turn is closed first: ``on_session_end`` fires exactly once with
  ``interrupted=True`` (OBS-36 family: every started turn ends once), and the next turn is not
  reported as overlapping a live one.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.testing import Recorder

from hermes_pipeline.testing import chat_response


class _Unprintable:
    def __str__(self) -> str:
        raise ValueError("no str for you")

    def __repr__(self) -> str:
        raise RuntimeError("no repr either")


class _BadStr(str):
    def __str__(self) -> str:
        raise ValueError("str subclass that refuses")


def _deep(n: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(n):
        value = [value]
    return value


def _cyclic() -> list[Any]:
    value: list[Any] = [1]
    value.append(value)
    return value


HOSTILE_VALUES: dict[str, Any] = {
    "huge int": 2 ** 20000,
    "huge int in a list": [1, 2 ** 20000],
    "5000-deep list": _deep(5000),
    "unprintable object": _Unprintable(),
    "unprintable in a dict": {"a": _Unprintable()},
    "non-str keys with unprintable": {(1, 2): _Unprintable()},
    "cycle": _cyclic(),
    "str subclass": _BadStr("text"),
    "lone surrogate": "a\ud800b",
    "bytes": b"\x00\xff",
    "set of huge ints": {2 ** 20000},
}


def _new_host(engine: Engine) -> Host:
    return Host(engine, platform="cli", model="m", provider="p", base_url="http://127.0.0.1:9/v1",
                api_mode="chat_completions")


@pytest.mark.parametrize("name", sorted(HOSTILE_VALUES))
def test_obs_37_any_returned_value_renders_and_post_tool_call_fires(name: str, host: Host, rec: Recorder) -> None:
    """OBS-37: a tool that returns an unrenderable value still gives text and fires ``post_tool_call``."""
    value = HOSTILE_VALUES[name]
    with host.session() as session, session.turn("go") as turn:
        text = turn.call_tool("t", {}, lambda: value, tool_call_id="c1")
        turn.complete("done")
    assert isinstance(text, str)
    assert len(text) <= 2_000_000
    assert [e["tool_call_id"] for e in rec.of("post_tool_call")] == ["c1"]
    assert rec.last("post_tool_call")["result"] == text
    assert rec.last("post_tool_call")["status"] == "ok"


@pytest.mark.parametrize("name", ["huge int", "5000-deep list", "unprintable object", "cycle"])
def test_obs_37_unfaithful_render_carries_a_marker(name: str) -> None:
    """A value that cannot be rendered faithfully says so with a ``<...>`` marker."""
    from hermes_pipeline.host.tools import result_text

    text = result_text(HOSTILE_VALUES[name])
    assert "<" in text and ">" in text
    if name == "huge int":
        assert "int" in text and "20001 bits" in text
    if name == "unprintable object":
        assert "_Unprintable" in text


def test_faithful_values_render_as_before() -> None:
    """JSON-compatible values and objects with a working ``str`` keep their JSON rendering."""
    from hermes_pipeline.host.tools import result_text

    assert result_text({"a": [1, 2.5, None, True]}) == '{"a": [1, 2.5, null, true]}'
    assert result_text("plain") == "plain"
    assert result_text(_BadStr("keep")) == "keep"
    assert result_text(2 ** 100) == str(2 ** 100)
    assert json.loads(result_text(_deep(50))) == _deep(50)


@pytest.mark.parametrize("name", ["huge int", "5000-deep list", "unprintable object"])
def test_obs_37_no_listener_fast_path_renders_too(name: str, engine: Engine) -> None:
    """With nobody listening the tool is called directly; its value still renders."""
    host = _new_host(engine)
    with host.session() as session, session.turn("go") as turn:
        assert isinstance(turn.call_tool("t", {}, lambda: HOSTILE_VALUES[name]), str)


@pytest.mark.parametrize("name", ["huge int", "5000-deep list", "unprintable object"])
def test_obs_37_async_tool_value_renders(name: str, host: Host, rec: Recorder) -> None:
    """OBS-37, async path: ``acall_tool`` renders the value and fires ``post_tool_call``."""

    async def tool() -> Any:
        return HOSTILE_VALUES[name]

    async def main() -> str:
        with host.session() as session, session.turn("go") as turn:
            return await turn.acall_tool("t", {}, tool, tool_call_id="c1")

    assert isinstance(asyncio.run(main()), str)
    assert [e["tool_call_id"] for e in rec.of("post_tool_call")] == ["c1"]


def test_obs_37_subagent_history_with_surrogates(host: Host, rec: Recorder) -> None:
    """The subagent tool history counts the bytes of a result with lone surrogates without failing."""
    with host.session() as session, session.turn("go") as turn:
        with turn.subagent(role="r", goal="g") as run:
            with run.session.turn("sub") as child:
                assert child.call_tool("t", {}, lambda: "a\ud800", tool_call_id="c1") == "a\ud800"
                child.complete("ok")
            run.finish("completed")
        turn.complete("done")
    assert rec.last("post_tool_call")["tool_call_id"] == "c1"


# ---------------------------------------------------------------------------- BaseException in hooks

TURN_HOOKS = ("pre_llm_call", "pre_api_request", "post_api_request", "pre_tool_call", "post_tool_call",
              "transform_tool_result", "transform_llm_output", "post_llm_call")


class _Boom(BaseException):
    """A BaseException that is neither KeyboardInterrupt nor SystemExit nor cancellation."""


def _raiser(exc_type: type[BaseException], armed: list[bool]) -> Any:
    def callback(**kwargs: Any) -> None:
        if armed:
            armed.clear()
            raise exc_type("stop")
    return callback


def _run_turn(session: Any, *, use_with: bool) -> None:
    turn = session.turn("go")
    if use_with:
        with turn:
            _turn_body(turn)
    else:
        _turn_body(turn)
        turn.end()


def _turn_body(turn: Any) -> None:
    turn.call_llm({"model": "m", "messages": []}, lambda r: chat_response())
    turn.call_tool("t", {"x": 1}, lambda x: "r", tool_call_id="c1")
    turn.complete("done")


@pytest.mark.parametrize("use_with", [True, False], ids=["with", "manual"])
@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit, _Boom, asyncio.CancelledError])
@pytest.mark.parametrize("hook", TURN_HOOKS)
def test_base_exception_in_a_hook_ends_the_turn_once(hook: str, exc_type: type[BaseException], use_with: bool,
                                                     engine: Engine, host: Host, rec: Recorder,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    """A BaseException raised by a ``hook`` callback propagates, but ``on_session_end(interrupted)`` fired once.

    The next turn of the session starts cleanly (no "second turn ... is live" warning), and every
    ``pre_tool_call`` has its ``post_tool_call`` (OBS-37).
    """
    engine.register_hook(hook, _raiser(exc_type, [True]))
    session = host.session()
    with pytest.raises(exc_type):
        _run_turn(session, use_with=use_with)
    ends = rec.of("on_session_end")
    assert len(ends) == 1
    assert ends[0]["interrupted"] is True and ends[0]["completed"] is False
    pre = [e["tool_call_id"] for e in rec.of("pre_tool_call")]
    post = [e["tool_call_id"] for e in rec.of("post_tool_call")]
    assert pre == [c for c in post if c in pre]
    if hook in ("pre_tool_call",):
        assert rec.last("post_tool_call")["status"] == "cancelled"
    rec.clear()
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline"):
        with session.turn("again") as turn:
            turn.complete("fine")
    assert "second turn" not in caplog.text


def test_base_exception_in_on_session_end_keeps_the_session_usable(engine: Engine, host: Host, rec: Recorder,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """``on_session_end`` itself raising a BaseException still counts the turn as ended."""
    calls: list[int] = []

    def once(**kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt

    engine.register_hook("on_session_end", once)
    session = host.session()
    with pytest.raises(KeyboardInterrupt):
        with session.turn("go") as turn:
            turn.complete("done")
    assert len(rec.of("on_session_end")) == 1
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline"):
        with session.turn("again") as turn:
            turn.complete("fine")
    assert "second turn" not in caplog.text
    assert len(rec.of("on_session_end")) == 2


# ---------------------------------------------------------------------------- generated sessions

_VALUE_NAMES = sorted(HOSTILE_VALUES) + ["plain", "dict", "raises ValueError", "returns None"]
_EXC_TYPES: tuple[type[BaseException], ...] = (KeyboardInterrupt, SystemExit, _Boom, asyncio.CancelledError)


def _tool_for(name: str) -> Any:
    if name == "plain":
        return lambda: "ok"
    if name == "dict":
        return lambda: {"k": [1, 2]}
    if name == "returns None":
        return lambda: None
    if name == "raises ValueError":
        def raising() -> Any:
            raise ValueError("tool failed")
        return raising
    return lambda: HOSTILE_VALUES[name]


_turn_plan = st.tuples(
    st.lists(st.sampled_from(_VALUE_NAMES), min_size=0, max_size=4),  # tools of the turn
    st.one_of(st.none(), st.tuples(st.sampled_from(TURN_HOOKS + ("on_session_end",)),
                                   st.integers(0, 3), st.sampled_from(_EXC_TYPES))),  # hook, nth call, type
    st.booleans(),  # context manager or manual end()
)


def _generated_body(turn: Any, tools: list[str], n: int) -> None:
    turn.call_llm({"model": "m", "messages": []}, lambda r: chat_response())
    for i, name in enumerate(tools):
        assert isinstance(turn.call_tool("t", {}, _tool_for(name), tool_call_id=f"c{n}-{i}"), str)
    turn.complete("done")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(_turn_plan, min_size=1, max_size=4))
def test_generated_sessions_pair_every_tool_call_and_end_every_turn(turns: list[Any]) -> None:
    """Generated sessions with hostile tool values and BaseExceptions at random hook points (OBS-37).

    Every ``pre_tool_call`` is matched by one ``post_tool_call`` and every started turn
    (``pre_llm_call``) ends exactly once (``on_session_end``), whatever was raised where.
    """
    engine = Engine()
    rec = Recorder()
    engine.add_plugin(rec, name="recorder")
    trap: dict[str, Any] = {"hook": None}

    def maybe_raise(hook: str) -> Any:
        def callback(**kwargs: Any) -> None:
            armed = trap["hook"]
            if armed is not None and armed[0] == hook:
                if armed[1] == 0:
                    trap["hook"] = None
                    raise armed[2]("stop")
                trap["hook"] = (armed[0], armed[1] - 1, armed[2])
        return callback

    for hook in TURN_HOOKS + ("on_session_end",):
        engine.register_hook(hook, maybe_raise(hook))
    host = _new_host(engine)
    session = host.session()
    started = 0
    for tools, raise_at, use_with in turns:
        trap["hook"] = raise_at
        started += 1
        try:
            if use_with:
                with session.turn("go") as turn:
                    _generated_body(turn, tools, started)
            else:
                turn = session.turn("go")
                _generated_body(turn, tools, started)
                turn.end()
        except BaseException as exc:  # noqa: BLE001 - the generated exception types
            assert isinstance(exc, _EXC_TYPES)
    pre = [e["tool_call_id"] for e in rec.of("pre_tool_call")]
    post = [e["tool_call_id"] for e in rec.of("post_tool_call")]
    assert sorted(pre) == sorted(c for c in post if c in pre)
    assert len(post) == len(set(post))
    turn_starts = [e["turn_id"] for e in rec.of("pre_llm_call")]
    turn_ends = [e["turn_id"] for e in rec.of("on_session_end")]
    assert sorted(turn_starts) == sorted(turn_ends)
    assert session.segments.live_turns == 0


@pytest.mark.parametrize("hook", ["pre_tool_call", "post_tool_call", "transform_tool_result"])
def test_base_exception_in_an_async_tool_hook_ends_the_turn_once(hook: str, engine: Engine, host: Host,
                                                                  rec: Recorder) -> None:
    """Async path: a cancellation raised by a tool hook reports the call and closes the turn (OBS-37)."""
    engine.register_hook(hook, _raiser(asyncio.CancelledError, [True]))

    async def tool() -> str:
        return "r"

    async def main() -> None:
        turn = host.session().turn("go")
        await turn.acall_tool("t", {}, tool, tool_call_id="c1")

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert [e["tool_call_id"] for e in rec.of("post_tool_call")] == ["c1"]
    assert [e["interrupted"] for e in rec.of("on_session_end")] == [True]


def test_base_exception_in_an_approval_hook_inside_a_tool_closes_after_post_tool_call(
        engine: Engine, host: Host, rec: Recorder) -> None:
    """A Ctrl-C from a hook fired inside the tool: ``post_tool_call`` (cancelled) first, then the turn end."""
    engine.register_hook("pre_approval_request", _raiser(KeyboardInterrupt, [True]))

    def tool() -> str:
        with host.approval("rm -rf /tmp/x") as approval:
            approval.resolve("once")
        return "r"

    turn = host.session().turn("go")
    with pytest.raises(KeyboardInterrupt):
        turn.call_tool("t", {}, tool, tool_call_id="c1")
    names = [n for n in rec.names() if n in ("post_tool_call", "on_session_end")]
    assert names == ["post_tool_call", "on_session_end"]
    assert rec.last("post_tool_call")["status"] == "cancelled"
    assert rec.last("on_session_end")["interrupted"] is True


def test_base_exception_in_on_session_segment_leaves_no_live_turn(engine: Engine, rec: Recorder,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A Ctrl-C in ``on_session_segment`` (before the turn starts) does not leave a turn counted as live."""
    from hermes_pipeline.host.segments import SegmentPolicy

    host = Host(engine, platform="cli", model="m", segments=SegmentPolicy(max_turns=1))
    engine.register_hook("on_session_segment", _raiser(KeyboardInterrupt, [True]))
    session = host.session()
    with session.turn("one") as turn:
        turn.complete("ok")
    with pytest.raises(KeyboardInterrupt):
        session.turn("two")
    assert session.segments.live_turns == 0
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline"):
        with session.turn("three") as turn:
            turn.complete("ok")
    assert "second turn" not in caplog.text
