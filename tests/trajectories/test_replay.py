"""Replay as a library (spec 06 §8: BOOK-31, BOOK-33) and the provider shapes of 02 MW-8."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.demo.model_server import ScriptStep, ToolCallSpec
from hermes_pipeline.engine.core import Engine
from hermes_pipeline.host import Host
from hermes_pipeline.replay import Recording, Replay, ReplayDivergence, TrajectoryError, provider_response
from hermes_pipeline.replay.diff import comparable_steps
from hermes_pipeline.replay.runner import check_recording, run_replay
from hermes_pipeline.sinks.trajectory_store import attach_store

from ._support import no_network, only_file, record_reference_run, text_response, tool_response

NOTES_SCRIPT = [ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})]),
                ScriptStep(content="They say oats.")]


def record(tmp_path: Path, replies: list[dict[str, Any]], tools: list[tuple[str, str, dict[str, Any]]],
           *, name: str = "rec") -> Path:
    """A host loop with a fake provider: ``replies`` in order, each tool call run by a real function."""
    home = tmp_path / name
    engine = Engine()
    handle = attach_store(engine, home, home / "trajectories", retention_days=0)
    host = Host(engine, model="m1", provider="fake", api_mode="chat_completions")
    run_loop(host, iter(replies), tools)
    handle.close()
    return only_file(home / "trajectories")


def run_loop(host: Host, replies: Any, tools: list[tuple[str, str, dict[str, Any]]],
             effects: list[str] | None = None, system: str = "sys") -> str:
    """A small agent loop: call the model, run its tool calls, until it answers."""
    effects = effects if effects is not None else []
    with host.session() as session, session.turn("question") as turn:
        messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                          {"role": "user", "content": turn.user_content}]
        while True:
            response = turn.call_llm({"model": host.model, "messages": list(messages)}, lambda req: next(replies))
            message = response["choices"][0]["message"]
            if not message.get("tool_calls"):
                return turn.complete(message["content"])
            messages.append({"role": "assistant", "content": None, "tool_calls": message["tool_calls"]})
            for call in message["tool_calls"]:
                args = json.loads(call["function"]["arguments"])
                text = turn.call_tool(call["function"]["name"], args,
                                      lambda **a: effects.append(json.dumps(a)) or f"ran {json.dumps(a)}",
                                      tool_call_id=call["id"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})


def replay_on(recording: Recording, tools: list[tuple[str, str, dict[str, Any]]], *, mode: str = "strict",
              live_from: int | None = None, replies: Any = None, system: str = "sys",
              home: Path | None = None) -> tuple[Replay, list[str], str | None, Path | None]:
    engine = Engine()
    handle = attach_store(engine, home, home / "trajectories", retention_days=0) if home is not None else None
    replay = Replay(recording, mode=mode, live_from=live_from).install(engine)  # type: ignore[arg-type]
    host = Host(engine, model="m1", provider="fake", api_mode="chat_completions")
    effects: list[str] = []
    answer = None
    try:
        answer = run_loop(host, replies if replies is not None else iter(()), tools, effects, system)
    except ReplayDivergence:
        pass
    finally:
        replay.uninstall()
        if handle is not None:
            handle.close()
    return replay, effects, answer, (only_file(home / "trajectories") if home is not None else None)


TWO_TOOLS = [tool_response("c1", "write_file", {"path": "a"}), tool_response("c2", "read_file", {"path": "a"}),
             text_response("done")]


def test_book_33_fully_recorded_replay_has_no_side_effect_and_no_network(tmp_path: Path) -> None:
    """BOOK-33: every LLM call and tool result is served from the recording: the provider is never called,
    the tool functions never run, no socket is opened, and the new run's steps equal the recorded ones."""
    path = record(tmp_path, TWO_TOOLS, [])
    recording = Recording.from_file(path)
    with no_network() as attempts:
        replay, effects, answer, new = replay_on(recording, [], home=tmp_path / "new")
    assert attempts == [] and effects == [] and answer == "done"
    assert [(s.kind, s.source) for s in replay.steps] == [("llm", "recorded"), ("tool", "recorded"),
                                                         ("llm", "recorded"), ("tool", "recorded"),
                                                         ("llm", "recorded")]
    assert replay.divergences == []
    assert new is not None
    assert comparable_steps(json.loads(new.read_text())) == comparable_steps(recording.document)


def test_book_31_strict_stops_at_the_first_divergence_with_a_typed_error(tmp_path: Path) -> None:
    """BOOK-31 item 5: a request whose history differs from the recording diverges at that step; strict
    raises ReplayDivergence (never calling the provider), lenient serves the recording and records it."""
    recording = Recording.from_file(record(tmp_path, TWO_TOOLS, []))
    replay, effects, answer, _ = replay_on(recording, [], system="another system prompt")
    assert answer is None and replay.diverged_at_step == 1 and len(replay.divergences) == 1
    assert "request history differs" in replay.divergences[0].reason and effects == []
    replay, effects, answer, _ = replay_on(recording, [], mode="lenient", system="another system prompt")
    assert answer == "done" and [d.step for d in replay.divergences] == [1, 2, 3] and effects == []


def test_book_31_unknown_tool_call_id_is_a_divergence_and_the_tool_never_runs(tmp_path: Path) -> None:
    """BOOK-31 item 5: tool results are served by ``tool_call_id``; an id the recording lacks is a
    divergence; strict mode stops at the next LLM call."""
    recording = Recording.from_file(record(tmp_path, TWO_TOOLS, []))
    recording.tool_results.pop("c2")
    replay, effects, answer, _ = replay_on(recording, [])
    assert effects == [] and answer is None
    assert replay.diverged_at_step == 2 and "'c2'" in replay.divergences[0].reason


def test_book_31_live_from_calls_the_real_provider_and_tools(tmp_path: Path) -> None:
    """BOOK-31 item 6: from LLM call N on, the provider and the tools are called for real."""
    recording = Recording.from_file(record(tmp_path, TWO_TOOLS, []))
    live = iter([tool_response("x9", "read_file", {"path": "b"}), text_response("live answer")])
    replay, effects, answer, _ = replay_on(recording, [], live_from=2, replies=live)
    assert answer == "live answer" and effects == [json.dumps({"path": "b"})]
    assert [(s.kind, s.step, s.source) for s in replay.steps] == [
        ("llm", 1, "recorded"), ("tool", 1, "recorded"), ("llm", 2, "live"), ("tool", 2, "live"), ("llm", 3, "live")]


def test_book_31_more_calls_than_recorded_always_raise(tmp_path: Path) -> None:
    """BOOK-31: a call past the end of the recording cannot be served (no fallback to the network)."""
    recording = Recording.from_file(record(tmp_path, TWO_TOOLS, []))
    recording.calls.pop()
    replay, _, answer, _ = replay_on(recording, [], mode="lenient")
    assert answer is None and "more LLM calls than the 2 recorded" in replay.divergences[-1].reason


@pytest.mark.parametrize("api_mode", ["chat_completions", "anthropic_messages", "codex_responses"])
def test_mw_8_recorded_response_rebuilt_in_the_provider_shape_of_its_api_mode(api_mode: str) -> None:
    """BOOK-31 item 4 / MW-8: the served response has the shape the recorded ``api_mode`` implies."""
    recorded = {"model": "m", "finish_reason": "tool_calls", "usage": {"input_tokens": 5, "output_tokens": 2},
                "assistant_message": {"role": "assistant", "content": "hi", "tool_calls": [
                    {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]}}
    shaped = provider_response(recorded, api_mode)
    if api_mode == "chat_completions":
        message = shaped["choices"][0]["message"]
        assert message["content"] == "hi" and message["tool_calls"][0]["function"]["name"] == "f"
        assert shaped["usage"]["prompt_tokens"] == 5
    elif api_mode == "anthropic_messages":
        assert [b["type"] for b in shaped["content"]] == ["text", "tool_use"]
        assert shaped["content"][1]["input"] == {"a": 1} and shaped["usage"]["input_tokens"] == 5
    else:
        assert [o["type"] for o in shaped["output"]] == ["message", "function_call"]
        assert shaped["output"][1]["call_id"] == "t1"


def test_book_31_truncated_payload_is_refused_naming_the_step(tmp_path: Path) -> None:
    """BOOK-31 item 4: a step whose recorded response the sanitizer truncated cannot be served (a truncated
    request can: the live one is sanitized the same way before the comparison)."""
    path = record(tmp_path, TWO_TOOLS, [])
    doc = json.loads(path.read_text())
    agent = [s for s in doc["steps"] if s["source"] == "agent"][1]
    agent["extra"]["hermes"]["llm_response"] = {"_truncated": True, "original_type": "dict", "preview": "{"}
    recording = Recording.from_document(doc, path=str(path))
    with pytest.raises(TrajectoryError) as caught:
        check_recording(recording, None)
    assert f"step {agent['step_id']}" in str(caught.value) and str(path) in str(caught.value)
    check_recording(recording, 2)  # served live from there: accepted


def test_book_36_summary_mode_file_refuses_replay(tmp_path: Path) -> None:
    """BOOK-36: a summary-mode redacted file cannot be replayed (a clear error)."""
    doc = json.loads(record(tmp_path, TWO_TOOLS, []).read_text())
    doc["extra"]["hermes"]["redaction"] = {"mode": "summary"}
    with pytest.raises(TrajectoryError, match="summary mode"):
        Recording.from_document(doc)


def test_book_31_reference_agent_replay_of_a_model_server_run_offline(tmp_path: Path) -> None:
    """BOOK-31 / BOOK-33: a run of the reference agent against the model server (stopped after recording)
    replays with the reference agent offline and identically; the new file records what it replayed."""
    path, _ = record_reference_run(tmp_path, NOTES_SCRIPT)
    recording = Recording.from_file(path)
    with no_network() as attempts:
        result = run_replay(recording, output=tmp_path / "out" / "new.json")
    assert attempts == [] and result.error is None and result.answer == "They say oats."
    assert result.diff.verdict == "identical"
    new = json.loads((tmp_path / "out" / "new.json").read_text())
    assert new["extra"]["hermes"]["replay"] == {"of": recording.trajectory_id, "live_from_step": None,
                                                "mode": "strict", "diverged_at_step": None}
    assert new["extra"]["hermes"]["context"]["model"] == recording.model


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=st.lists(st.lists(st.sampled_from(["read_file", "write_file", "search"]), min_size=1, max_size=3),
                     max_size=4), answer=st.text(min_size=1, max_size=40))
def test_book_33_two_recorded_replays_give_identical_step_lists(tmp_path_factory: pytest.TempPathFactory,
                                                                plan: list[list[str]], answer: str) -> None:
    """BOOK-33 (property): for any recorded run, two fully recorded replays produce the same step list
    apart from timestamps and ids, equal to the recording's."""
    tmp = tmp_path_factory.mktemp("prop")
    replies: list[dict[str, Any]] = []
    n = 0
    for calls in plan:
        tool_calls = []
        for name in calls:
            n += 1
            tool_calls.append({"id": f"id{n}", "type": "function",
                               "function": {"name": name, "arguments": json.dumps({"n": n})}})
        replies.append({"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
                                     "finish_reason": "tool_calls"}]})
    replies.append(text_response(answer))
    recording = Recording.from_file(record(tmp, replies, []))
    first = replay_on(recording, [], home=tmp / "a")
    second = replay_on(recording, [], home=tmp / "b")
    assert first[1] == second[1] == []
    a = comparable_steps(json.loads(first[3].read_text()))  # type: ignore[union-attr]
    b = comparable_steps(json.loads(second[3].read_text()))  # type: ignore[union-attr]
    assert a == b == comparable_steps(recording.document)


def test_book_31_a_scrubbed_credential_in_the_request_still_matches(tmp_path: Path) -> None:
    """BOOK-31 item 5: the recording holds the request as the exporters saw it (credentials scrubbed); the
    live request is compared in the same form, so a credential in the history is not a divergence."""
    secret = "my key is sk-proj-AbCdEf0123456789AbCdEf0123"
    home = tmp_path / "rec"
    engine = Engine()
    handle = attach_store(engine, home, home / "trajectories", retention_days=0)
    run_loop(Host(engine, model="m1", api_mode="chat_completions"), iter(TWO_TOOLS), [], system=secret)
    handle.close()
    path = only_file(home / "trajectories")
    assert "AbCdEf0123456789" not in path.read_text()
    replay, effects, answer, _ = replay_on(Recording.from_file(path), [], system=secret)
    assert replay.divergences == [] and answer == "done" and effects == []


def test_book_33_replay_warns_when_skills_or_memory_changed(tmp_path: Path) -> None:
    """BOOK-33: the replay warns when the profile's current skill or memory hashes differ from the
    recorded context snapshot."""
    path, _ = record_reference_run(tmp_path, NOTES_SCRIPT)
    home = tmp_path / "recorded-home"
    recording = Recording.from_file(path)
    assert run_replay(recording, home=home).warnings == []
    (home / "skills" / "tidy").mkdir(parents=True)
    (home / "skills" / "tidy" / "SKILL.md").write_text("# new skill\n")
    warnings = run_replay(recording, home=home).warnings
    assert len(warnings) == 1 and "skills differ" in warnings[0] and "tidy" in warnings[0]


def custom_agent(run: Any) -> str:
    """An agent factory for ``--agent``: one LLM call through the host, whose engine carries the replay."""
    with run.host.session() as session, session.turn(run.recording.user_message) as turn:
        messages = [{"role": "system", "content": run.recording.system_prompt},
                    {"role": "user", "content": turn.user_content}]
        response = turn.call_llm({"model": run.settings["model"], "messages": messages},
                                 lambda req: pytest.fail("the provider must not be called"))
        return turn.complete(f"custom: {response['choices'][0]['message'].get('tool_calls')[0]['id']}")


def test_book_31_any_agent_factory_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-31: ``--agent MODULE:FACTORY`` runs another agent loop under the same replay."""
    from hermes_pipeline.cli.main import main

    path, _ = record_reference_run(tmp_path, NOTES_SCRIPT)
    code = main(["replay", str(path), "--agent", f"{__name__}:custom_agent", "--output", str(tmp_path / "c.json")])
    out = capsys.readouterr().out
    assert code == 1 and out.splitlines()[-1] == "diverged at step 2"  # it runs no tool: no observation
    assert json.loads((tmp_path / "c.json").read_text())["extra"]["hermes"]["final_output"] == "custom: call_0001"
    assert main(["replay", str(path), "--agent", "no_such_agent"]) == 2


def test_book_31_canonical_history_ignores_how_an_agent_spells_messages() -> None:
    """BOOK-31 item 5: the canonical request history keeps roles, texts, tool calls (id, name, parsed
    arguments) and the ids they answer, so another agent's spelling of the same conversation (content
    parts, ``None`` for no text, extra keys, argument JSON spacing) hashes the same; a changed text does not."""
    from hermes_pipeline.replay.codec import request_hash

    hermes_style = {"body": {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": "", "reasoning": "thinking...", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "ok"}]}}
    reference_style = {"body": {"messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}}
    assert request_hash(hermes_style, "chat_completions") == request_hash(reference_style, "chat_completions")
    reference_style["body"]["messages"][2]["content"] = "not ok"
    assert request_hash(hermes_style, "chat_completions") != request_hash(reference_style, "chat_completions")
