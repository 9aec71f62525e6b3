"""The tool path's view of the listeners (``Engine.tool_route``, engine/tool_route.py): kept between calls, never stale.

The host reads the route once per stage instead of the live listener views (OBS-22: who listens decides what
is built; FMT-79: recorders get record lanes). Whatever changes the answer must make the engine forget it: a
plugin added or removed, a callback registered on this engine or on the parent it inherits from (spec 03 §11),
middleware, and hang protection (lanes are offered only without it).
"""

from __future__ import annotations

from typing import Any

from hermes_pipeline import Engine, Host
from hermes_pipeline.contract.hookspecs import hookimpl
from hermes_pipeline.engine.callbacks import RECORD_LANE
from hermes_pipeline.engine.tool_route import ToolRoute


def _route(engine: Engine) -> ToolRoute:
    return ToolRoute(*(engine.tool_route or engine.route_tools()))


def _noop(**payload: Any) -> None:
    return None


class _Pre:
    @hookimpl
    def pre_tool_call(self, tool_name: str) -> None:
        return None


def _recorder(seen: list[tuple[Any, ...]]) -> Any:
    def callback(**payload: Any) -> None:
        raise AssertionError("dispatched although it offers a lane")

    setattr(callback, RECORD_LANE, lambda plugin: seen.append)
    return callback


def test_route_follows_registrations_and_removals() -> None:
    engine = Engine()
    assert _route(engine) == ToolRoute(False, False, None, None, None, None, False, False)
    entry = engine.register_hook("post_tool_call", _noop)
    route = _route(engine)
    assert route.observed and route.post == (entry,) and route.post_lanes is None and route.pre is None
    engine.register_hook("transform_tool_result", _noop)
    engine.register_hook("subagent_stop", _noop)
    assert _route(engine).transform and _route(engine).subagent_stop
    engine.register_middleware("tool_request", lambda **kw: None)
    assert _route(engine).gated
    name = engine.add_plugin(_Pre(), name="p")
    assert _route(engine).pre == engine.hook_listeners["pre_tool_call"] != ()
    engine.remove_plugin(name)
    assert _route(engine).pre is None


def test_route_offers_lanes_only_without_hang_protection() -> None:
    engine = Engine()
    seen: list[tuple[Any, ...]] = []
    engine.register_hook("pre_tool_call", _recorder(seen))
    assert _route(engine).pre_lanes is not None
    engine.hook_callback_timeout = 1.0
    assert _route(engine).pre_lanes is None
    engine.hook_callback_timeout = 0
    assert _route(engine).pre_lanes is not None


def test_a_child_engine_forgets_its_route_when_the_parent_changes() -> None:
    parent = Engine()
    child = parent.child()
    assert not _route(child).observed
    parent.register_hook("post_tool_call", _noop)
    assert _route(child).post == parent.hook_listeners["post_tool_call"]


def test_a_listener_added_while_the_tool_runs_gets_its_post_tool_call() -> None:
    """The route is read again after the tool ran, as the live views were: a listener registered by the tool
    itself sees the call's end."""
    engine = Engine()
    engine.register_hook("pre_tool_call", _noop)
    ends: list[str] = []
    turn = Host(engine, model="m").session("s").turn("go")

    def tool() -> str:
        engine.register_hook("post_tool_call", lambda **payload: ends.append(payload["tool_call_id"]))
        return "ok"

    assert turn.call_tool("t", {}, tool, tool_call_id="c1") == "ok"
    assert ends == ["c1"]
