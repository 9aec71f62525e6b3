"""Every string is scrubbed once, where it enters, by every emitter (issue #29 item 5; spec 04 FMT-33a, spec 01
OBS-51, OBS-58, spec 06 BOOK-12).

Three emitters feed the export path: the host API (``Host`` / ``Turn``), the Hermes bridge (Hermes' hook
payloads through the normaliser) and the reference agent (a real agent loop against the scripted model server).
Each run plants a fresh canary credential in every text a session carries (the user message, the system prompt
and history of every LLM request, the model's answer and tool-call arguments, a tool's arguments and result, the
final answer) and counts, with a spy on the scanner (``engine.scrub.find_spans``), how often each distinct text
is scanned. The contract:

- no output holds the canary, and no observer sees it in a sanitized field (``request`` / ``response``);
- every text holding the canary was scanned, and **no text was scanned twice**: the emitter's entry scrub marks
  its result as scrubbed, so the export's walk, the next LLM request's history and every sink keep it as it is.

An emitter that skips its entry scrub (passes a sanitized field unscrubbed, or scrubs without marking) makes
the export's walk scan the same text a second time (or lets the canary through): the test fails.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.agent import ReferenceAgent
from hermes_pipeline.demo.model_server import ScriptedModelServer, ScriptStep, ToolCallSpec
from hermes_pipeline.demo.openai_client import ChatCompletionsClient
from hermes_pipeline.demo.tools import Workspace
from hermes_pipeline.engine import scrub
from hermes_pipeline.hermes.bridge import Bridge
from hermes_pipeline.hermes.normalise import HermesNormaliser
from hermes_pipeline.host import Host
from hermes_pipeline.testing import capture_export

CONFIG = {"version": 4, "atof": {"enabled": True, "sinks": [{"type": "file", "filename": "events.jsonl"}]},
          "atif": {"enabled": True}}


@pytest.fixture
def canary() -> str:
    """A fresh OpenAI-style key (new texts in every test: nothing is remembered from another test)."""
    value = f"sk-proj-{secrets.token_hex(20)}"
    assert value not in scrub.scrub_text(f"key {value}")
    return value


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How many times each distinct text was scanned for credentials during the test."""
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    real = scrub.find_spans

    def counting(text: str, gated: bool = True) -> list[tuple[int, int, str]]:
        with lock:
            counts[text] += 1
        return real(text, gated)

    monkeypatch.setattr(scrub, "find_spans", counting)
    yield counts


def observed(host: Host, seen: list[Any]) -> None:
    """An observer of the sanitized fields (what a third-party plugin receives)."""
    host.engine.register_hook("pre_api_request", lambda **kw: seen.append(kw.get("request")))
    host.engine.register_hook("post_api_request", lambda **kw: seen.append(kw.get("response")))


def check(files: dict[str, bytes], seen: list[Any], scans: Counter[str], canary: str) -> None:
    assert files and all(canary.encode() not in body for body in files.values()), "the canary reached an output"
    assert seen and canary not in json.dumps(seen, default=str), "an observer saw the canary in a sanitized field"
    carriers = [text for text in scans if canary in text]
    assert carriers, "no text holding the canary was scanned"
    twice = {text[:100]: n for text, n in scans.items() if n > 1}
    assert not twice, f"texts scanned more than once (a second walk, or an emitter without its entry scrub): {twice}"


def host_session(canary: str, seen: list[Any]) -> Callable[[Host], None]:
    def run(host: Host) -> None:
        observed(host, seen)
        system = {"role": "system", "content": f"You are careful. Deploy key: {canary}"}
        user = {"role": "user", "content": f"check the notes (token {canary})"}
        call = {"id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": "notes.txt", "key": canary})}}
        first = {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": f"reading with {canary}", "tool_calls": [call]}}],
            "model": "m", "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
        result = json.dumps({"content": f"line 1\nOPENAI_API_KEY={canary}\nline 3 " + "x" * 3000})
        second = {"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": f"done; the key is {canary}"}}], "model": "m",
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}
        with host.session() as session, session.turn(user["content"]) as turn:
            messages = [system, user]
            turn.call_llm({"model": "m", "messages": list(messages)}, lambda request: first)
            text = turn.call_tool("read_file", {"path": "notes.txt", "key": canary}, lambda **kw: result,
                                  tool_call_id="call_1")
            messages += [first["choices"][0]["message"], {"role": "tool", "tool_call_id": "call_1", "content": text}]
            turn.call_llm({"model": "m", "messages": list(messages)}, lambda request: second)
            turn.complete(second["choices"][0]["message"]["content"])

    return run


def test_host_api_scrubs_each_text_once_where_it_enters(tmp_path: Path, canary: str, scans: Counter[str]) -> None:
    """Host API: the sanitized ``request`` / ``response`` fields are scrubbed at the hook and never scanned again;
    the raw contract fields (user message, tool arguments and result, final answer) once, on the export path."""
    seen: list[Any] = []
    result = capture_export(CONFIG, tmp_path, session=host_session(canary, seen))
    check(result.files, seen, scans, canary)


SID, TASK = "20261203_120000_abcdef", "task-1"
TURN = f"{SID}:{TASK}:0a0b0c"


def bridge_session(canary: str, seen: list[Any]) -> Callable[[Host], None]:
    """Hermes' hook payloads (field sets of Hermes 0.19's call sites) through the bridge's normaliser."""

    def ids(n: int, **extra: Any) -> dict[str, Any]:
        return {"task_id": TASK, "turn_id": TURN, "api_request_id": f"{TURN}:api:{n}", "session_id": SID,
                "platform": "cli", "model": "hermes-demo-1", "provider": "custom",
                "base_url": "http://127.0.0.1:1/v1", "api_mode": "chat_completions", "api_call_count": n, **extra}

    def run(host: Host) -> None:
        observed(host, seen)
        bridge = Bridge(host.engine, HermesNormaliser(clock=lambda: 1_796_150_832.0))
        user = f"deploy with {canary} please"
        history = [{"role": "system", "content": f"You are Hermes. Key: {canary}"}, {"role": "user", "content": user}]
        call = {"id": "call_1", "type": "function",
                "function": {"name": "terminal", "arguments": json.dumps({"command": f"deploy --key {canary}"})}}
        result = json.dumps({"output": f"using OPENAI_API_KEY={canary}\n" + "ok\n" * 500, "exit_code": 0,
                             "error": None})
        bridge.forward("on_session_start", {"session_id": SID, "model": "hermes-demo-1", "platform": "cli"})
        bridge.forward("pre_llm_call", {"session_id": SID, "task_id": TASK, "turn_id": TURN, "user_message": user,
                                        "conversation_history": [], "is_first_turn": True, "model": "hermes-demo-1",
                                        "platform": "cli", "sender_id": ""})
        for n, (messages, reply) in enumerate([
                (history, {"role": "assistant", "content": f"running it with {canary}", "tool_calls": [call]}),
                (history + [{"role": "assistant", "content": "", "tool_calls": [call]},
                            {"role": "tool", "tool_call_id": "call_1", "content": result}],
                 {"role": "assistant", "content": f"deployed; key {canary}"})], 1):
            body = {"model": "hermes-demo-1", "messages": messages}
            bridge.forward("pre_api_request", ids(n, request_messages=messages, started_at=1_796_150_832.0,
                                                  middleware_trace=[], request={"method": "POST", "body": body}))
            bridge.forward("post_api_request", ids(n, api_duration=0.1, started_at=1_796_150_832.0,
                                                   ended_at=1_796_150_832.1, finish_reason="stop",
                                                   response_model="hermes-demo-1",
                                                   response={"model": "hermes-demo-1", "finish_reason": "stop",
                                                             "assistant_message": reply},
                                                   usage={"input_tokens": 10}, assistant_message=reply))
            if n == 1:
                tool = {"tool_name": "terminal", "args": {"command": f"deploy --key {canary}"}, "task_id": TASK,
                        "session_id": SID, "tool_call_id": "call_1", "turn_id": TURN,
                        "api_request_id": f"{TURN}:api:1", "middleware_trace": []}
                bridge.forward("pre_tool_call", tool)
                bridge.forward("post_tool_call", {**tool, "result": result, "duration_ms": 5, "status": "ok"})
        bridge.forward("on_session_end", {"session_id": SID, "task_id": TASK, "turn_id": TURN, "completed": True,
                                          "interrupted": False, "model": "hermes-demo-1", "platform": "cli",
                                          "assistant_response": f"deployed; key {canary}"})
        bridge.forward("on_session_finalize", {"session_id": SID, "platform": "cli", "reason": "shutdown"})
        bridge.close()

    return run


def test_hermes_bridge_scrubs_each_text_once_where_it_enters(tmp_path: Path, canary: str,
                                                            scans: Counter[str]) -> None:
    """Hermes bridge: Hermes' full request (rebuilt from ``request_messages``) and its ``response`` are scrubbed
    where they enter the engine; the export path never scans them again."""
    seen: list[Any] = []
    result = capture_export(CONFIG, tmp_path, session=bridge_session(canary, seen))
    check(result.files, seen, scans, canary)


def test_reference_agent_scrubs_each_text_once_where_it_enters(tmp_path: Path, canary: str,
                                                              scans: Counter[str]) -> None:
    """Reference agent: a real loop against the scripted model server on 127.0.0.1, reading a workspace file
    that holds the canary."""
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "notes.txt").write_text(f"notes\nOPENAI_API_KEY={canary}\n" + "line\n" * 400, encoding="utf-8")
    steps = [ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"}, "call_1")]),
             ScriptStep(content=f"The notes hold the key {canary}.")]
    seen: list[Any] = []
    with ScriptedModelServer(steps) as server:
        def run(host: Host) -> None:
            observed(host, seen)
            tools = {name: tool for name, tool in Workspace(root).tools().items() if name == "read_file"}
            agent = ReferenceAgent(host, ChatCompletionsClient(server.base_url), tools,
                                   system_prompt=f"You are careful. Never print {canary}.")
            with host.session() as session:
                agent.run_turn(session, f"What do my notes say? ({canary})")

        result = capture_export(CONFIG, tmp_path / "out", session=run)
    check(result.files, seen, scans, canary)
