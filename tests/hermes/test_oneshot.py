"""One-shot mode (``hermes -z``): the bridge closes the profile on the conversation's last hook (FMT-85, FMT-7).

Hermes runs ``-z`` inside ``hermes_cli.oneshot.run_oneshot`` and leaves with ``os._exit`` right after
the conversation returns, so ``atexit`` never runs. The conversation's ``on_session_end`` is called
here from a frame of a module named ``hermes_cli.oneshot`` (what the bridge recognises); the real
CLI run is ``test_oneshot_mode_outputs_are_complete`` in tests/hermes/test_bridge_e2e.py.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.hermes.bridge import Bridge
from hermes_pipeline.hermes.facts import ONESHOT_MODULE, in_oneshot_run
from hermes_pipeline.testing import capture

SID = "20261201_223000_0a0b0c"
TURN = f"{SID}:task:1"


def turn(sid: str, platform: str) -> list[tuple[str, dict[str, Any]]]:
    return [("pre_llm_call", {"session_id": sid, "task_id": "task", "turn_id": f"{sid}:t", "user_message": "hi",
                              "conversation_history": [], "is_first_turn": True, "model": "m", "platform": platform,
                              "sender_id": None}),
            ("on_session_end", {"session_id": sid, "task_id": "task", "turn_id": f"{sid}:t", "completed": True,
                                "interrupted": False, "model": "m", "platform": platform})]


@pytest.fixture
def oneshot(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], None]], None]:
    """Run a callable the way Hermes' run_oneshot runs the conversation: under a hermes_cli.oneshot frame."""
    monkeypatch.setitem(sys.modules, ONESHOT_MODULE, types.ModuleType(ONESHOT_MODULE))
    namespace: dict[str, Any] = {"__name__": ONESHOT_MODULE}
    exec("def run_oneshot(conversation):\n    conversation()\n", namespace)
    return namespace["run_oneshot"]  # type: ignore[no-any-return]


def bridge_with_exit() -> tuple[Engine, Bridge, list[int]]:
    engine = Engine()
    bridge = Bridge(engine)
    calls: list[int] = []
    bridge.on_exit = lambda: calls.append(1)
    return engine, bridge, calls


def test_oneshot_frame_is_recognised_only_on_its_stack(oneshot: Callable[[Callable[[], None]], None]) -> None:
    seen: list[bool] = []
    oneshot(lambda: seen.append(in_oneshot_run()))
    assert seen == [True] and in_oneshot_run() is False


def test_conversation_end_in_oneshot_mode_finalizes_the_session_and_closes_the_profile(
        oneshot: Callable[[Callable[[], None]], None]) -> None:
    """What ``hermes chat -q`` gets from Hermes (on_session_finalize, then the profile closed at exit) happens
    before Hermes' os._exit: once, on the top-level conversation's end."""
    engine, bridge, calls = bridge_with_exit()
    with capture(engine) as rec:
        def conversation() -> None:
            for hook, payload in turn(SID, "cli"):
                bridge.forward(hook, dict(payload))
            bridge.forward("on_session_end", dict(turn(SID, "cli")[1][1]))  # a second end: nothing more

        oneshot(conversation)
    assert rec.names() == ["pre_llm_call", "on_session_end", "on_session_finalize", "on_session_end"]
    (final,) = rec.of("on_session_finalize")
    assert final["session_id"] == SID and final["reason"] == "shutdown"
    assert calls == [1]


def test_child_turn_end_inside_oneshot_mode_closes_nothing(oneshot: Callable[[Callable[[], None]], None]) -> None:
    """In -z Hermes runs delegations synchronously, inside the conversation: a child's turn end is not the last hook."""
    engine, bridge, calls = bridge_with_exit()
    with capture(engine) as rec:
        def conversation() -> None:
            for hook, payload in turn("child-1", "subagent"):
                bridge.forward(hook, dict(payload))

        oneshot(conversation)
    assert calls == [] and rec.of("on_session_finalize") == []


def test_turn_end_outside_oneshot_mode_closes_nothing() -> None:
    """Interactive and -q modes: a turn end is only a turn end (no per-turn flush, FMT-87); atexit closes."""
    engine, bridge, calls = bridge_with_exit()
    with capture(engine) as rec:
        for hook, payload in turn(SID, "cli"):
            bridge.forward(hook, dict(payload))
    assert calls == [] and rec.of("on_session_finalize") == []
