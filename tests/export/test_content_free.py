"""A stream whose every listener declared it never reads content drops the content payloads before the scrubber
(issue #29 items 3 and 5: nothing is built or walked for nobody; spec 05 SM-1 / SM-33, spec 04 FMT-33a).

Shared metrics listens with ``content=False``: alone on a stream (its own scope plugin, or a profile whose only
consumer it is) the ``data`` of tool calls, LLM calls and turns (arguments, results, requests, responses,
messages) never reaches the scrubber. A listener that reads content, added beside it, gets every payload again,
scrubbed as before; once it leaves, the payloads are dropped again.
"""

from __future__ import annotations

from typing import Any

import pytest

from hermes_pipeline.export import redaction
from hermes_pipeline.export.events import MARK, SCOPE, ScopeEvent
from hermes_pipeline.export.scope_hooks import ScopePlugin

RESULT = "result text " * 40
SECRET = "sk-proj-" + "C" * 40


def _turn(plugin: ScopePlugin, n: int) -> None:
    session, turn = f"s{n}", f"u{n}"
    plugin.pre_llm_call(session_id=session, task_id=f"t{n}", turn_id=turn, user_message=f"question {SECRET}",
                        is_first_turn=True, model="m", platform="cli", sender_id=None, agent_version=None)
    plugin.pre_tool_call(tool_name="read_file", args={"path": "a", "key": SECRET}, task_id=f"t{n}",
                         session_id=session, tool_call_id="c1", turn_id=turn, api_request_id="", middleware_trace=[],
                         toolset=None)
    plugin.post_tool_call(tool_name="read_file", args={}, task_id=f"t{n}", session_id=session, tool_call_id="c1",
                          turn_id=turn, api_request_id="", result=RESULT + SECRET, duration_ms=1, status="ok",
                          error_type=None, error_message=None)
    plugin.post_approval_response(surface="cli", turn_id=turn, tool_call_id="c1", session_id=session,
                                  choice="once", decided_by=None)
    plugin.on_session_end(session_id=session, task_id=f"t{n}", turn_id=turn, completed=True, interrupted=False,
                          failed=None, turn_exit_reason=None, reason=None)
    plugin.on_session_finalize(session_id=session, reason="exit")


def _content(events: list[ScopeEvent]) -> list[Any]:
    return [e.data for e in events if e.kind == SCOPE and (e.category in ("tool", "llm") or e.name == "agent.run")]


@pytest.fixture
def scrubbed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the event scrubber scrubs."""
    seen: list[str] = []
    real = redaction.bounded_scrub

    def spy(text: str, cap: int | None) -> tuple[str, bool]:
        seen.append(text)
        return real(text, cap)

    monkeypatch.setattr(redaction, "bounded_scrub", spy)
    return seen


def test_no_listener_reads_content_nothing_is_kept_or_scrubbed(scrubbed: list[str]) -> None:
    """Content-free listeners alone: the payloads are gone before the scrubber; the rest (session data, the
    approval mark's choice, metadata) is published as before."""
    events: list[ScopeEvent] = []
    plugin = ScopePlugin()
    plugin.add_listener(events.append, content=False)
    assert not plugin.tracker.reads_content
    _turn(plugin, 1)
    assert _content(events) and all(data is None for data in _content(events))
    assert not [text for text in scrubbed if RESULT in text or "question" in text]
    (approval,) = [e for e in events if e.kind == MARK and e.name == "hermes.approval.response"]
    assert approval.data is not None and approval.data.get("choice") == "once"
    sessions = [e for e in events if e.name == "hermes.session"]
    assert sessions and sessions[-1].data == {"reason": "exit"}
    assert all(e.metadata.get("hermes.session_id") == "s1" for e in events)


def test_one_listener_reading_content_gets_every_payload_scrubbed(scrubbed: list[str]) -> None:
    """A sink beside a content-free listener: the payloads are kept and scrubbed (FMT-33a) for both; when it
    leaves, they are dropped again."""
    free: list[ScopeEvent] = []
    sink: list[ScopeEvent] = []
    plugin = ScopePlugin()
    plugin.add_listener(free.append, content=False)
    record = sink.append  # one object: removal is by identity
    plugin.add_listener(record)
    assert plugin.tracker.reads_content
    _turn(plugin, 1)
    payloads = _content(sink)
    assert payloads and all(data is not None for data in payloads)
    assert SECRET not in repr(payloads) and RESULT in repr(payloads)
    assert any(RESULT in text for text in scrubbed)
    plugin.remove_listener(record)
    assert not plugin.tracker.reads_content
    free.clear()
    _turn(plugin, 2)
    assert _content(free) and all(data is None for data in _content(free))


def test_no_listener_at_all_is_not_content_free() -> None:
    """The last listener gone, the next one (a sink) is not handed content-free events by default."""
    plugin = ScopePlugin()
    first: list[ScopeEvent] = []
    record = first.append
    plugin.add_listener(record, content=False)
    plugin.remove_listener(record)
    sink: list[ScopeEvent] = []
    plugin.add_listener(sink.append)
    _turn(plugin, 1)
    assert all(data is not None for data in _content(sink))
