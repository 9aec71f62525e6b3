"""The table of sanitized values the host made, known by identity (spec 01 OBS-53; issue #29 item 5)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import hermes_pipeline.export.redaction as redaction
from hermes_pipeline import Engine, Host
from hermes_pipeline.engine import sanitized_fields
from hermes_pipeline.export import ScopeEvent, ScopePlugin
from hermes_pipeline.engine.sanitized_fields import BUDGET_CHARS, ENTRY_CHARS, MAX_ENTRIES, bound, is_marked, mark


def test_a_full_table_lets_only_its_oldest_value_go() -> None:
    """OBS-53: past :data:`MAX_ENTRIES` the oldest recorded values leave, one by one, and the newest stay known (the
    publication thread meets them turns after the agent's thread marked them); the table stays bounded, and a
    value that left is no longer known (the walk then scrubs it: time, never privacy)."""
    values = [mark({"n": i}, 0) for i in range(MAX_ENTRIES + 40)]
    assert all(is_marked(value, None) for value in values[-MAX_ENTRIES:])
    assert not any(is_marked(value, None) for value in values[:40])
    assert len(sanitized_fields._marked) <= MAX_ENTRIES


def test_the_table_keeps_about_its_budget_of_text() -> None:
    """OBS-53: each value is charged the text the host counted in it (at most :func:`bound`, and :func:`bound` when
    not counted); past :data:`BUDGET_CHARS` in all the oldest leave, so the table never keeps much more text alive
    than its budget, however large the values, and small values are kept by the thousand."""
    big = [mark({"n": i}, 10 * bound()) for i in range(2 * BUDGET_CHARS // bound())]
    fits = BUDGET_CHARS // (bound() + ENTRY_CHARS)
    assert all(is_marked(value, None) for value in big[-fits:])
    assert not any(is_marked(value, None) for value in big[:-fits - 1])
    assert sanitized_fields._charged[0] <= BUDGET_CHARS
    uncounted = [mark({"n": i}) for i in range(fits + 5)]
    assert not is_marked(uncounted[0], None) and is_marked(uncounted[-1], None)
    small = [mark({"n": i}, 1_000) for i in range(MAX_ENTRIES)]
    assert all(is_marked(value, None) for value in small)
    assert sanitized_fields._charged[0] == sum(entry[2] for entry in sanitized_fields._marked.values())


def test_only_the_very_object_is_known() -> None:
    """An equal dict made elsewhere is not the recorded one."""
    value = mark({"model": "m"}, 0)
    assert is_marked(value, None)
    assert not is_marked({"model": "m"}, None)


@pytest.mark.parametrize(("calls", "history_chars"), [(100, 10), (300, 40_000)])
def test_an_unthrottled_hosts_queued_llm_calls_are_all_known(monkeypatch: pytest.MonkeyPatch, calls: int,
                                                             history_chars: int) -> None:
    """OBS-53, issue #29: an agent that runs far ahead of the publication thread (here the hooks of 100 LLM calls,
    200 marked values, are queued while the thread is held on the session's first event) still has each call's
    request and response known when the thread meets them, so neither is walked again. Also with requests of real
    size: 300 calls of 40,000 characters each are 12 million characters queued (more than a table of 8 million
    reached: those met after they had left were walked whole, and on real sessions the publication thread fell
    further behind)."""
    met: list[bool] = []
    real = sanitized_fields.is_marked

    def spy(value: object, cap: int | None) -> bool:
        found = real(value, cap)
        if type(value) is dict and ("assistant_message" in value or "body" in value):
            met.append(found)
        return found

    monkeypatch.setattr(redaction, "is_marked", spy)
    gate = threading.Event()
    seen: list[ScopeEvent] = []

    def held(event: ScopeEvent) -> None:
        seen.append(event)
        if len(seen) == 1:
            gate.wait(30)

    engine = Engine()
    plugin = ScopePlugin((held,), deferred=True)
    engine.add_plugin(plugin, name="scopes")
    tools = [{"id": f"call_{k}", "type": "function",
              "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}} for k in range(10)]
    response = {"choices": [{"message": {"role": "assistant", "content": "", "tool_calls": tools}}]}
    session = Host(engine, model="m").session()
    try:
        history = [{"role": "user", "content": "go " * (history_chars // 3)}]
        for _ in range(calls):
            with session.turn("go") as turn:
                turn.call_llm({"model": "m", "messages": history}, lambda request: response)
                turn.complete("done")
    finally:
        gate.set()
    assert plugin.flush(30.0)
    engine.remove_plugin("scopes")
    assert len(met) >= 2 * calls - 10 and all(met)  # (a first request or response may be told clean by its keys)


def test_a_response_is_charged_the_text_of_its_content_and_tool_calls() -> None:
    """OBS-53: the host charges a response the characters of its content and of its tool calls' arguments (and a
    little for each call's id and name), so a response carrying a large ``write_file`` is not kept as if it were
    small; a response of another shape is charged the most a sanitized value may hold."""
    responses: list[dict[str, Any]] = []
    engine = Engine()
    engine.register_hook("post_api_request", lambda **payload: responses.append(payload["response"]))
    turn = Host(engine, model="m").session().turn("go")
    calls = [{"id": "c1", "type": "function", "function": {"name": "write_file", "arguments": "x" * 30_000}},
             {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}}]
    turn.call_llm({"model": "m", "messages": []}, lambda request: {"choices": [{"message": {
        "role": "assistant", "content": "four", "tool_calls": calls}}]})
    turn.call_llm({"model": "m", "messages": []}, lambda request: {"choices": [{"message": {
        "role": "assistant", "content": "four", "tool_calls": [{"type": "function", "function": "odd"}]}}]})
    first, second = (sanitized_fields._marked[id(response)][2] for response in responses)
    assert first >= ENTRY_CHARS + 4 + 30_000 + len('{"path": "a"}')
    assert first <= ENTRY_CHARS + 4 + 30_000 + len('{"path": "a"}') + 2 * 200
    assert second == ENTRY_CHARS + bound()


def test_a_value_met_lets_go_of_those_marked_before_it() -> None:
    """OBS-53: the publication thread meets the values in the order they were marked; once it meets one, those
    marked before it leave the table (they will not be asked for again), so the table keeps alive only what is
    still queued, and its charges follow."""
    older, met, newer = mark({"n": 1}, 10), mark({"n": 2}, 20), mark({"n": 3}, 30)
    assert is_marked(met, None)
    assert not is_marked(older, None)
    assert is_marked(met, None) and is_marked(newer, None)
    assert list(sanitized_fields._marked) == [id(newer)]
    assert sanitized_fields._charged[0] == 30 + ENTRY_CHARS
