"""FMT-24 rows 3-4: a gateway message's dispatch becomes a ``trigger.process`` scope.

Driven the way Hermes' gateway drives it: ``pre_gateway_dispatch`` with Hermes' ``MessageEvent`` and
session store, forwarded by the bridge (which adds the message fields and fires
``post_gateway_dispatch`` with the decision), then the turn's ``pre_llm_call``.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hermes_pipeline import Engine
from hermes_pipeline.hermes.bridge import Bridge

from tests.sinks.atof._support import collect, memory_plugin, scopes


class Store:
    """Hermes' SessionStore, as far as the bridge reads it."""

    def __init__(self, sessions: dict[str, str]) -> None:
        self._entries = {key: SimpleNamespace(session_id=sid) for key, sid in sessions.items()}

    def _generate_session_key(self, source: Any) -> str:
        return f"agent:main:{source.platform.value}:dm:{source.chat_id}"


def message(chat_id: str, text: str = "hi") -> SimpleNamespace:
    return SimpleNamespace(text=text, message_type=SimpleNamespace(value="text"),
                           source=SimpleNamespace(platform=SimpleNamespace(value="telegram"), chat_id=chat_id))


def turn(bridge: Bridge, session_id: str, turn_id: str) -> None:
    bridge.dispatch("pre_llm_call", {"session_id": session_id, "task_id": "t", "turn_id": turn_id,
                                     "user_message": "hi", "conversation_history": [], "is_first_turn": False,
                                     "model": "m", "platform": "telegram", "sender_id": "u1"})
    bridge.dispatch("on_session_end", {"session_id": session_id, "task_id": "t", "turn_id": turn_id,
                                       "completed": True, "interrupted": False, "model": "m", "platform": "telegram"})


def test_fmt_24_rows_3_4_allowed_message_ends_at_the_turn_and_skipped_one_at_once() -> None:
    """FMT-24 rows 3-4, BOOK-10: start {platform, event_type}; end {action}: skip at once, allow at the next
    pre_llm_call of that session, under the session scope when the session is open, a root when it is not;
    turns without a gateway dispatch get no trigger scope."""
    engine = Engine()
    plugin, (dest,) = memory_plugin(engine)
    engine.register_hook("pre_gateway_dispatch", lambda event, **kw: {"action": "skip", "reason": "spam"}
                         if event.text == "spam" else None)
    bridge = Bridge(engine)
    store = Store({"agent:main:telegram:dm:42": "sess-42"})
    bridge.dispatch("on_session_start", {"session_id": "sess-42", "model": "m", "platform": "telegram"})
    gateway = object()
    assert bridge.dispatch("pre_gateway_dispatch", {"event": message("42", "spam"), "gateway": gateway,
                                                    "session_store": store}) == {"action": "skip", "reason": "spam"}
    assert bridge.dispatch("pre_gateway_dispatch", {"event": message("42"), "gateway": gateway,
                                                    "session_store": store}) is None
    turn(bridge, "sess-42", "turn-1")
    # a first message from a chat without a session yet: its own root, ended by the next telegram turn
    bridge.dispatch("pre_gateway_dispatch", {"event": message("7"), "gateway": gateway, "session_store": store})
    bridge.dispatch("on_session_start", {"session_id": "sess-7", "model": "m", "platform": "telegram"})
    turn(bridge, "sess-7", "turn-7")
    events = collect(plugin, dest)
    triggers = [s for s in scopes(events).values() if s["start"]["name"] == "trigger.process"]
    assert len(triggers) == 3 and all(t.get("end") for t in triggers)
    skipped, allowed, new_chat = sorted(triggers, key=lambda t: t["start"]["timestamp"])
    session = next(s for s in scopes(events).values() if s["start"]["name"] == "hermes.session"
                   and s["start"]["metadata"]["hermes.session_id"] == "sess-42")
    assert skipped["start"]["data"] == {"platform": "telegram", "event_type": "text"}
    assert skipped["start"]["category"] == "function" and skipped["start"]["category_profile"] is None
    assert skipped["end"]["data"] == {"action": "skip"} and allowed["end"]["data"] == {"action": "allow"}
    assert skipped["start"]["parent_uuid"] == allowed["start"]["parent_uuid"] == session["start"]["uuid"]
    run = next(s for s in scopes(events).values() if s["start"]["name"] == "agent.run"
               and s["start"]["metadata"]["hermes.turn_id"] == "turn-1")
    assert skipped["end"]["timestamp"] <= allowed["end"]["timestamp"] <= run["start"]["timestamp"]
    assert new_chat["start"]["parent_uuid"] is None and new_chat["end"]["data"] == {"action": "allow"}


def test_open_trigger_is_closed_at_shutdown() -> None:
    engine = Engine()
    plugin, (dest,) = memory_plugin(engine)
    engine.register_hook("pre_gateway_dispatch", lambda **kw: None)
    bridge = Bridge(engine)
    bridge.dispatch("pre_gateway_dispatch", {"event": message("9"), "gateway": None, "session_store": Store({})})
    events = collect(plugin, dest)
    (trigger,) = [s for s in scopes(events).values() if s["start"]["name"] == "trigger.process"]
    assert trigger["end"]["metadata"]["hermes.close_reason"] == "shutdown"
