"""Issue #27 item 9: the trajectory store writes each agent step's request history as what it adds to the
previous step's (``atif.llm_history = "delta"``, ``extra.hermes.messages_offset``); readers rebuild every request
exactly (generated step sequences: histories that grow, restart, change api_mode, steps without a request), and a
delta that cannot be applied is a typed error naming the step."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.export.history_delta import OFFSET_KEY, HistoryError, delta_steps, whole_steps

message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool"]),
                                 "content": st.text(max_size=8)})


@st.composite
def step_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    history: list[Any] = []
    for step_id in range(1, draw(st.integers(0, 8)) + 1):
        kind = draw(st.sampled_from(["grow", "grow", "same", "restart", "no_request", "user", "responses"]))
        if kind == "user":
            steps.append({"step_id": step_id, "source": "user", "message": "hi"})
            continue
        if kind == "no_request":
            steps.append({"step_id": step_id, "source": "agent", "extra": {"hermes": {"synthetic": True}}})
            continue
        if kind == "restart":
            history = draw(st.lists(message, max_size=3))
        elif kind == "grow":
            history = history + draw(st.lists(message, min_size=1, max_size=3))
        mode, key = ("codex_responses", "input") if kind == "responses" else ("chat_completions", "messages")
        steps.append({"step_id": step_id, "source": "agent", "extra": {"hermes": {
            "api_mode": mode, "llm_request": {"method": "POST", "body": {"model": "m", key: list(history)}}}}})
    return steps


@given(step_lists())
def test_deltas_rebuild_to_exactly_the_recorded_requests(steps: list[dict[str, Any]]) -> None:
    written = delta_steps(steps)
    assert whole_steps(written) == steps
    for before, after in zip(steps, written, strict=True):
        hermes = after.get("extra", {}).get("hermes", {})
        if OFFSET_KEY in hermes:  # only ever a shorter history, never a longer one
            key = "input" if hermes["api_mode"] == "codex_responses" else "messages"
            assert len(hermes["llm_request"]["body"][key]) < len(before["extra"]["hermes"]["llm_request"]["body"][key])


def test_a_growing_conversation_is_written_once() -> None:
    """Twelve requests of one loop: each history entry appears once in what is written."""
    history: list[Any] = []
    steps = []
    for n in range(12):
        history = history + [{"role": "user", "content": f"m{n}"}]
        steps.append({"source": "agent", "extra": {"hermes": {"llm_request": {"body": {"messages": list(history)}}}}})
    written = delta_steps(steps)
    assert sum(len(s["extra"]["hermes"]["llm_request"]["body"]["messages"]) for s in written) == 12


def test_an_offset_that_does_not_fit_names_the_step() -> None:
    steps = delta_steps([{"step_id": 1, "source": "agent", "extra": {"hermes": {"llm_request": {"body": {
        "messages": [{"role": "user", "content": "a"}]}}}}},
        {"step_id": 2, "source": "agent", "extra": {"hermes": {"llm_request": {"body": {"messages": [
            {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}}}}}])
    assert steps[1]["extra"]["hermes"][OFFSET_KEY] == 1
    bad = [steps[0], {**steps[1], "extra": {"hermes": {**steps[1]["extra"]["hermes"], OFFSET_KEY: 5}}}]
    with pytest.raises(HistoryError) as caught:
        whole_steps(bad)
    assert caught.value.index == 1 and "messages_offset 5" in str(caught.value)
    removed = [{"step_id": 1, "source": "agent", "extra": {"hermes": {"llm_request": "<redacted>"}}}, steps[1]]
    with pytest.raises(HistoryError) as caught:
        whole_steps(removed)
    assert "step 1 has no recorded llm_request" in str(caught.value)
