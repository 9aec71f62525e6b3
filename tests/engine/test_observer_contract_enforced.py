"""The read-only observer contract is enforced, not only documented (OBS-19, OBS-20, MW-29).

- an observer cannot change a tool's input: it receives a read-only copy of ``args``;
- an async observer never blocks the host's event loop, and one that never completes is cancelled;
- a hook that calls ``call_tool`` again is refused with a typed error (the tool runs once);
- a ``next_call`` kept past its middleware's return raises instead of running the tool again.
"""

from __future__ import annotations

import asyncio
import copy
import pickle
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline import (
    Engine,
    Host,
    NextCallAfterReturnError,
    ReadOnlyPayloadError,
    ReentrantToolCallError,
)
from hermes_pipeline.engine.readonly import ReadOnlyDict, ReadOnlyList, read_only


def _turn(engine: Engine) -> Any:
    return Host(engine, model="m", provider="p").session("s").turn("hi")


def _recorder() -> tuple[list[dict[str, Any]], Any]:
    seen: list[dict[str, Any]] = []

    def tool(**kwargs: Any) -> str:
        seen.append(copy.deepcopy(kwargs))
        return "ok"

    return seen, tool


def _editor(**kw: Any) -> None:
    """A pre_tool_call observer that tries every way of editing the arguments in place."""
    args = kw["args"]
    for attempt in (lambda: args.__setitem__("path", "/etc/shadow"), lambda: args.update(path="/etc/shadow"),
                    lambda: args.pop("path"), lambda: args.clear(), lambda: args.setdefault("x", 1),
                    lambda: args["items"].append("/etc/shadow"), lambda: args["items"].__setitem__(0, "x"),
                    lambda: args["opts"].__setitem__("mode", "w")):
        with pytest.raises(ReadOnlyPayloadError):
            attempt()


ARGS = {"path": "notes.txt", "items": ["a"], "opts": {"mode": "r"}}


@pytest.mark.parametrize("path", ["observed", "middleware", "gate", "async"])
def test_obs_19_observer_cannot_change_tool_input(path: str) -> None:
    """OBS-19: a pre_tool_call / post_tool_call observer editing args in place changes nothing the tool sees,
    on every tool path (hooks only, with middleware, with a host gate, async)."""
    engine = Engine()
    engine.register_hook("pre_tool_call", _editor)
    engine.register_hook("post_tool_call", _editor)
    if path == "middleware":
        engine.register_middleware("tool_execution", lambda **kw: kw["next_call"]())
    seen, tool = _recorder()
    turn = _turn(engine)
    args = copy.deepcopy(ARGS)
    if path == "async":
        asyncio.run(turn.acall_tool("read_file", args, tool))
    else:
        turn.call_tool("read_file", args, tool, guardrail=(lambda n, a: None) if path == "gate" else None)
    assert seen == [ARGS]
    assert args == ARGS
    assert engine.failure_stats().by_hook == {}  # every attempt was refused inside the observer, caught there


def test_obs_19_modify_directive_still_changes_input_and_observers_see_effective_args() -> None:
    """OBS-19: the documented way to change a tool's input (a modify directive) still works; post_tool_call
    observers see the effective arguments, read-only."""
    engine = Engine()
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "modify", "args": {"path": "b.txt"}})
    post: list[Any] = []
    engine.register_hook("post_tool_call", lambda **kw: post.append(kw["args"]))
    seen, tool = _recorder()
    _turn(engine).call_tool("read_file", {"path": "a.txt"}, tool)
    assert seen == [{"path": "b.txt"}]
    assert post == [{"path": "b.txt"}] and isinstance(post[0], ReadOnlyDict)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


def _mutate_everything(value: Any) -> int:
    """Try to change every container reachable from ``value``; count the refusals."""
    refused = 0
    if isinstance(value, dict):
        for op in (lambda: value.__setitem__("k", 1), lambda: value.clear(), lambda: value.update(k=2),
                   lambda: value.popitem(), lambda: value.__delitem__(next(iter(value), "k"))):
            try:
                op()
            except ReadOnlyPayloadError:
                refused += 1
        children = list(value.values())
    elif isinstance(value, list):
        for op in (lambda: value.append(1), lambda: value.clear(), lambda: value.extend([1]),
                   lambda: value.insert(0, 1), lambda: value.sort(), lambda: value.reverse()):
            try:
                op()
            except ReadOnlyPayloadError:
                refused += 1
        children = list(value)
    else:
        return 0
    return refused + sum(_mutate_everything(child) for child in children)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=5))
def test_obs_19_read_only_copy_is_equal_detached_and_refuses_every_change(args: dict[str, Any]) -> None:
    """OBS-19: for any JSON-shaped arguments the observers' copy equals them, survives pickling and deep
    copy as plain containers, and refuses every in-place change; the host's value never changes."""
    before = copy.deepcopy(args)
    view = read_only(args)
    assert view == args
    assert pickle.loads(pickle.dumps(view)) == args
    assert type(pickle.loads(pickle.dumps(view))) is dict and type(copy.deepcopy(view)) is dict
    _mutate_everything(view)
    assert args == before and view == before
    assert read_only(view) is view


def test_obs_19_read_only_never_raises_on_odd_values() -> None:
    """OBS-19: a cycle or an object that refuses to be copied still gives observers a detached value."""
    cyclic: dict[str, Any] = {"a": []}
    cyclic["a"].append(cyclic)

    class NoCopy:
        def __deepcopy__(self, memo: Any) -> Any:
            raise TypeError("no")

    for value in (cyclic, {"x": NoCopy()}, [NoCopy()]):
        view = read_only(value)
        assert view is not value
    assert isinstance(read_only([1, [2]]), ReadOnlyList)


# ---------------------------------------------------------------- async observers


def test_obs_20_async_observer_does_not_block_the_hosts_event_loop() -> None:
    """OBS-20: an async post_tool_call observer that needs another coroutine of the host to progress first
    completes: the host's loop kept running while the observer ran (before: the loop froze until it ended)."""
    engine = Engine()
    released = threading.Event()
    observed: list[bool] = []
    done = threading.Event()

    async def slow_observer(**kw: Any) -> None:
        loop = asyncio.get_running_loop()
        observed.append(await loop.run_in_executor(None, released.wait, 10))
        done.set()

    engine.register_hook("post_tool_call", slow_observer)
    order: list[str] = []
    turn = _turn(engine)

    async def agent() -> None:
        await turn.acall_tool("read_file", {"path": "a"}, lambda path: "x")
        order.append("tool call returned")

    async def other() -> None:
        await asyncio.sleep(0)
        order.append("other coroutine ran")
        released.set()

    async def main() -> None:
        await asyncio.gather(agent(), other())

    asyncio.run(main())
    assert done.wait(10)
    assert observed == [True]
    assert set(order) == {"tool call returned", "other coroutine ran"}


def test_obs_20_never_completing_async_observer_is_cancelled_by_default_deadline() -> None:
    """OBS-20: the async deadline is on by default; a pre_tool_call callback that never completes is
    cancelled, counted as a timeout and (pre_tool_call is fail-closed) blocks the call instead of hanging."""
    assert Engine().async_callback_timeout > 0
    engine = Engine(async_callback_timeout=0.2)
    cancelled = threading.Event()

    async def never(**kw: Any) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    engine.register_hook("pre_tool_call", never, plugin="stuck")
    seen, tool = _recorder()
    text = _turn(engine).call_tool("read_file", {"path": "a"}, tool)
    assert seen == [] and "timed out" in text
    assert cancelled.wait(10)
    assert engine.failure_stats().timeouts == {"stuck": 1}


def test_obs_20_async_observer_under_running_loop_is_cancelled_too() -> None:
    """OBS-20: from a running loop nothing waits, and a never-completing callback is still cancelled."""
    engine = Engine(async_callback_timeout=0.2)
    cancelled = threading.Event()

    async def never(**kw: Any) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    engine.register_hook("post_tool_call", never)

    async def main() -> str:
        return await _turn(engine).acall_tool("read_file", {"path": "a"}, lambda path: "x")

    assert asyncio.run(main()) == "x"
    assert cancelled.wait(10)


# ---------------------------------------------------------------- re-entrancy


@pytest.mark.parametrize("hook", ["pre_tool_call", "post_tool_call", "transform_tool_result"])
@pytest.mark.parametrize("guarded", [False, True])
def test_obs_hook_calling_call_tool_is_refused(hook: str, guarded: bool) -> None:
    """OBS-15/OBS-19: a hook that calls call_tool again gets ReentrantToolCallError (counted, logged); the tool
    runs once, with or without hang protection."""
    engine = Engine(hook_callback_timeout=5 if guarded else 0)
    turn = _turn(engine)
    runs: list[str] = []
    errors: list[BaseException] = []

    def again(**kw: Any) -> None:
        try:
            turn.call_tool("read_file", {"path": "again"}, lambda path: runs.append(path) or "x")
        except ReentrantToolCallError as exc:
            errors.append(exc)
            raise

    engine.register_hook(hook, again, plugin="loop")
    turn.call_tool("read_file", {"path": "first"}, lambda path: runs.append(path) or "x")
    assert runs == ["first"]
    assert len(errors) == 1 and hook in str(errors[0])
    assert engine.failure_stats().by_plugin == {"loop": 1}


def test_obs_async_hook_calling_acall_tool_is_refused() -> None:
    """OBS-20: an async observer (run on the engine's loop, in the caller's context) cannot run tools either."""
    engine = Engine()
    turn = _turn(engine)
    runs: list[str] = []
    errors: list[BaseException] = []

    async def again(**kw: Any) -> None:
        try:
            await turn.acall_tool("read_file", {"path": "again"}, lambda path: runs.append(path) or "x")
        except ReentrantToolCallError as exc:
            errors.append(exc)

    engine.register_hook("pre_tool_call", again)
    turn.call_tool("read_file", {"path": "first"}, lambda path: runs.append(path) or "x")
    assert runs == ["first"] and len(errors) == 1


def test_tool_calling_call_tool_is_still_allowed() -> None:
    """A tool (not a hook) may run nested tool calls, as a delegating tool does."""
    engine = Engine()
    engine.register_hook("post_tool_call", lambda **kw: None)
    turn = _turn(engine)
    inner = lambda: turn.call_tool("inner", {}, lambda: "inner ran")  # noqa: E731
    assert turn.call_tool("outer", {}, inner) == "inner ran"


# ---------------------------------------------------------------- next_call


def test_mw_29_next_call_used_after_its_chain_returned_raises() -> None:
    """MW-29: a tool_execution middleware that keeps next_call cannot run the tool after the chain returned."""
    engine = Engine()
    kept: list[Any] = []

    def keeper(**kw: Any) -> Any:
        kept.append(kw["next_call"])
        return kw["next_call"]()

    engine.register_middleware("tool_execution", keeper)
    runs: list[str] = []
    _turn(engine).call_tool("read_file", {"path": "a"}, lambda path: runs.append(path) or "x")
    with pytest.raises(NextCallAfterReturnError):
        kept[0]()
    with pytest.raises(NextCallAfterReturnError):
        kept[0]({"path": "/etc/shadow"})
    assert runs == ["a"]


def test_mw_29_next_call_never_called_inside_and_kept_raises() -> None:
    """MW-29: a middleware that short-circuits and keeps next_call for later cannot run the tool either."""
    engine = Engine()
    kept: list[Any] = []

    def short_circuit(**kw: Any) -> Any:
        kept.append(kw["next_call"])
        return "cached"

    engine.register_middleware("tool_execution", short_circuit)
    runs: list[str] = []
    assert _turn(engine).call_tool("read_file", {"path": "a"}, lambda path: runs.append(path) or "x") == "cached"
    with pytest.raises(NextCallAfterReturnError):
        kept[0]()
    assert runs == []
