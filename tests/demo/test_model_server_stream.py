"""Issue #12 item 5: the model server streams chat completions and can be started on its own.

Real HTTP throughout: raw SSE read with urllib, the real ``openai`` client (a dependency of
hermes-agent; skipped when absent) in streaming and non-streaming mode, and the stand-alone
``python -m hermes_pipeline.demo.model_server`` in a subprocess.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.model_script import ScriptError, load_script, parse_script
from hermes_pipeline.demo.model_server import EXHAUSTED_TEXT, ScriptedModelServer, ScriptStep, ToolCallSpec

MESSAGES = [{"role": "user", "content": "hello there"}]
ARGS = {"path": "notes/today.txt", "limit": 30, "nested": {"flag": True}}


def sse_post(url: str, body: dict[str, Any]) -> tuple[int, str, list[Any]]:
    """POST ``body``; return (status, content type, the ``data:`` payloads in order, ``[DONE]`` as a str)."""
    request = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode("utf-8")
        status, ctype = response.status, response.headers.get("Content-Type", "")
    assert text.endswith("\n\n")
    events = []
    for block in text.split("\n\n")[:-1]:
        assert block.startswith("data: "), block
        data = block[len("data: "):]
        events.append(data if data == "[DONE]" else json.loads(data))
    return status, ctype, events


def test_stream_is_openai_chunk_sequence_with_usage_chunk_and_done() -> None:
    """#12.5: role delta first, content deltas, tool-call deltas, finish chunk, usage chunk, [DONE]."""
    step = ScriptStep(content="Let me read that file for you.",
                      tool_calls=[ToolCallSpec("read_file", ARGS), ToolCallSpec("list_dir", {"path": "."}, id="c-2")])
    with ScriptedModelServer([step], model="m-s") as srv:
        status, ctype, events = sse_post(srv.base_url, {"model": "m-s", "messages": MESSAGES, "stream": True,
                                                        "stream_options": {"include_usage": True}})
    assert status == 200 and ctype.startswith("text/event-stream")
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert all(c["object"] == "chat.completion.chunk" and c["id"] == "chatcmpl-000001" and c["model"] == "m-s"
               for c in chunks)
    assert len({c["created"] for c in chunks}) == 1
    body, usage_chunk = chunks[:-1], chunks[-1]
    assert all(c["usage"] is None for c in body)  # include_usage: null on every chunk but the last
    assert usage_chunk["choices"] == []
    usage = usage_chunk["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    deltas = [c["choices"][0]["delta"] for c in body]
    assert deltas[0] == {"role": "assistant", "content": ""}
    assert [c["choices"][0]["finish_reason"] for c in body] == [None] * (len(body) - 1) + ["tool_calls"]
    assert deltas[-1] == {}
    text = "".join(d.get("content", "") for d in deltas)
    assert text == "Let me read that file for you."
    assert sum(1 for d in deltas if d.get("content")) > 1  # really streamed in fragments
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        for part in delta.get("tool_calls", []):
            if "id" in part:  # the opening delta of a call
                assert part["index"] not in calls
                assert part["type"] == "function" and part["function"]["arguments"] == ""
                calls[part["index"]] = {"id": part["id"], "name": part["function"]["name"], "arguments": ""}
            else:
                assert set(part) == {"index", "function"} and set(part["function"]) == {"arguments"}
                calls[part["index"]]["arguments"] += part["function"]["arguments"]
    assert calls[0]["id"] == "call_0001" and calls[0]["name"] == "read_file"
    assert json.loads(calls[0]["arguments"]) == ARGS
    assert calls[1] == {"id": "c-2", "name": "list_dir", "arguments": json.dumps({"path": "."})}


def test_stream_without_include_usage_has_no_usage_and_nonstreaming_is_unchanged() -> None:
    """#12.5: no usage chunk unless asked; ``stream`` absent or false still answers one JSON completion."""
    with ScriptedModelServer([ScriptStep(content="hi"), ScriptStep(content="plain"),
                              ScriptStep(content="also plain")]) as srv:
        _, _, events = sse_post(srv.base_url, {"model": "m", "messages": MESSAGES, "stream": True})
        replies = []
        for extra in ({}, {"stream": False}):
            request = urllib.request.Request(
                srv.base_url + "/chat/completions", method="POST", headers={"Content-Type": "application/json"},
                data=json.dumps({"model": "m", "messages": MESSAGES, **extra}).encode())
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.headers["Content-Type"] == "application/json"
                replies.append(json.loads(response.read()))
    assert events[-1] == "[DONE]"
    assert all("usage" not in c and c["choices"] for c in events[:-1])
    assert events[-2]["choices"][0]["finish_reason"] == "stop"
    assert [r["object"] for r in replies] == ["chat.completion", "chat.completion"]
    assert [r["choices"][0]["message"]["content"] for r in replies] == ["plain", "also plain"]


# --------------------------------------------------------------------------- the real openai client

try:
    import openai
except ImportError:  # the raw-HTTP tests above still run
    openai = None

needs_openai = pytest.mark.skipif(openai is None, reason="the openai client (a hermes-agent dependency) is not "
                                                         "installed: pip install '.[hermes]' or pip install openai")


def _client(srv: ScriptedModelServer, retries: int = 0) -> Any:
    return openai.OpenAI(base_url=srv.base_url, api_key="sk-unused", max_retries=retries, timeout=10)


def _hermes_style_stream(client: Any) -> dict[str, Any]:
    """Consume a stream the way Hermes Agent does (chat_completion_helpers): deltas by index, usage last."""
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True,
                                            stream_options={"include_usage": True})
    content, calls, finish, usage, roles = [], {}, None, None, []
    for chunk in stream:
        if not chunk.choices:
            usage = chunk.usage
            continue
        delta = chunk.choices[0].delta
        if delta.role:
            roles.append(delta.role)
        if delta.content:
            content.append(delta.content)
        for tc in delta.tool_calls or []:
            entry = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] = tc.id or entry["id"]
            if tc.function and tc.function.name:
                entry["name"] = tc.function.name
            if tc.function and tc.function.arguments:
                entry["arguments"] += tc.function.arguments
        finish = chunk.choices[0].finish_reason or finish
    return {"content": "".join(content) or None, "calls": [calls[i] for i in sorted(calls)], "finish": finish,
            "usage": usage, "roles": roles}


@needs_openai
def test_openai_client_streams_text_tool_calls_and_usage() -> None:
    """#12.5: the real client (as Hermes uses it) gets content, complete tool calls and the usage chunk."""
    script = [ScriptStep(tool_calls=[ToolCallSpec("read_file", ARGS), ToolCallSpec("write_file", {"path": "o"})]),
              ScriptStep(content="The notes say: buy milk.", prompt_tokens=52, completion_tokens=16)]
    with ScriptedModelServer(script) as srv:
        client = _client(srv)
        first, second = _hermes_style_stream(client), _hermes_style_stream(client)
        assert [r.get("stream") for r in srv.requests] == [True, True]
    assert first["roles"] == ["assistant"] and first["finish"] == "tool_calls" and first["content"] is None
    assert [(c["id"], c["name"]) for c in first["calls"]] == [("call_0001", "read_file"), ("call_0002", "write_file")]
    assert json.loads(first["calls"][0]["arguments"]) == ARGS
    assert first["usage"].total_tokens == first["usage"].prompt_tokens + first["usage"].completion_tokens
    assert second["content"] == "The notes say: buy milk." and second["finish"] == "stop" and second["calls"] == []
    usage = second["usage"]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (52, 16, 68)


@needs_openai
def test_openai_client_retries_a_scripted_503_in_both_modes() -> None:
    """#12.5: a 503 step is an HTTP error the client retries; streaming and non-streaming alike."""
    busy = ScriptStep.error(503, "overloaded, try again", retry_after=0)
    script = [busy, ScriptStep(content="streamed after retry"), busy, ScriptStep(content="plain after retry")]
    with ScriptedModelServer(script) as srv:
        client = _client(srv, retries=1)
        streamed = _hermes_style_stream(client)
        plain = client.chat.completions.create(model="m", messages=MESSAGES)
        assert len(srv.requests) == 4
    assert streamed["content"] == "streamed after retry" and streamed["usage"] is not None
    assert plain.choices[0].message.content == "plain after retry"
    assert plain.usage is not None and plain.usage.total_tokens > 0
    with ScriptedModelServer([busy]) as srv:
        with pytest.raises(openai.APIStatusError) as info:
            _client(srv).chat.completions.create(model="m", messages=MESSAGES, stream=True)
    assert info.value.status_code == 503
    assert "overloaded, try again" in str(info.value)


@needs_openai
def test_openai_client_non_streaming_tool_calls_unchanged() -> None:
    """#12.5: without ``stream`` the client parses one ``chat.completion`` with tool calls and usage."""
    with ScriptedModelServer([ScriptStep(tool_calls=[ToolCallSpec("read_file", ARGS, id="call_x")])]) as srv:
        reply = _client(srv).chat.completions.create(model="m", messages=MESSAGES)
    call = reply.choices[0].message.tool_calls[0]
    assert (reply.object, reply.choices[0].finish_reason) == ("chat.completion", "tool_calls")
    assert (call.id, call.type, call.function.name) == ("call_x", "function", "read_file")
    assert json.loads(call.function.arguments) == ARGS
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


# --------------------------------------------------------------------------- the script file


def test_script_file_json_and_yaml_give_the_same_steps(tmp_path: Path) -> None:
    """#12.5: the documented script format (text shorthand, tool calls, error statuses, model)."""
    doc = {"model": "m-file", "steps": [
        "hello",
        {"content": "reading", "tool_calls": [{"name": "read_file", "arguments": {"path": "a"}, "id": "c1"},
                                              {"name": "raw", "arguments": "{\"broken"}]},
        {"error_status": 503, "error_message": "overloaded", "retry_after": 0},
        {"content": "done", "finish_reason": "length", "prompt_tokens": 3, "completion_tokens": 2},
    ]}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    (tmp_path / "s.yaml").write_text(
        "model: m-file\nsteps:\n  - hello\n  - content: reading\n    tool_calls:\n"
        "      - {name: read_file, arguments: {path: a}, id: c1}\n      - {name: raw, arguments: '{\"broken'}\n"
        "  - {error_status: 503, error_message: overloaded, retry_after: 0}\n"
        "  - {content: done, finish_reason: length, prompt_tokens: 3, completion_tokens: 2}\n")
    from_json, from_yaml = load_script(tmp_path / "s.json"), load_script(tmp_path / "s.yaml")
    assert from_json == from_yaml
    steps, model = from_json
    assert model == "m-file"
    assert steps[0] == ScriptStep(content="hello")
    assert steps[1].tool_calls == [ToolCallSpec("read_file", {"path": "a"}, "c1"), ToolCallSpec("raw", "{\"broken")]
    assert steps[2].is_error and steps[2].error_status == 503 and steps[2].retry_after == 0
    assert (steps[3].finish_reason, steps[3].prompt_tokens, steps[3].completion_tokens) == ("length", 3, 2)
    assert parse_script([]) == ([], None)


@pytest.mark.parametrize(("doc", "message"), [
    ([{"contnet": "typo"}], "step 0: unknown keys ['contnet']"),
    (["ok", {"error_status": 200}], "step 1: error_status must be an HTTP error status"),
    ([{"tool_calls": [{"arguments": {}}]}], "step 0, tool call 0: 'name'"),
    ([{"tool_calls": "read_file"}], "step 0: 'tool_calls' must be a list"),
    ([{"prompt_tokens": "3"}], "step 0: 'prompt_tokens' must be an integer"),
    ({"steps": [], "extra": 1}, "unknown top-level keys ['extra']"),
    ("just text", "a script is a list of steps"),
])
def test_bad_script_is_refused_naming_the_step(doc: Any, message: str) -> None:
    with pytest.raises(ScriptError) as info:
        parse_script(doc, "s.json")
    assert message in str(info.value)


# --------------------------------------------------------------------------- stand-alone start

_ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "hermes_pipeline.demo.model_server", *args], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_ENV)


def _first_line(proc: subprocess.Popen[str], timeout: float = 30.0) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            proc.kill()
            pytest.fail("the model server printed nothing")
    return proc.stdout.readline()


@needs_openai
def test_stand_alone_server_prints_its_port_serves_and_stops_on_sigterm(tmp_path: Path) -> None:
    """#12.5: ``python -m hermes_pipeline.demo.model_server --script FILE --port 0`` on 127.0.0.1."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "read_file", "arguments": {"path": "n.txt"}}]},
                                  "Your notes say hi."]))
    record = tmp_path / "requests.json"
    proc = _start(tmp_path, "--script", str(script), "--port", "0", "--model", "stand-alone-1",
                  "--record", str(record))
    try:
        line = _first_line(proc)
        assert line.startswith("listening on http://127.0.0.1:"), line
        port = int(line.split("(port ", 1)[1].split(",", 1)[0])
        assert line.split()[2] == f"http://127.0.0.1:{port}/v1"
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0, timeout=10)
        streamed = _hermes_style_stream(client)
        plain = client.chat.completions.create(model="x", messages=MESSAGES)
        after = client.chat.completions.create(model="x", messages=MESSAGES)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert streamed["calls"][0]["name"] == "read_file" and streamed["finish"] == "tool_calls"
    assert plain.model == "stand-alone-1" and plain.choices[0].message.content == "Your notes say hi."
    assert after.choices[0].message.content == EXHAUSTED_TEXT
    assert "stopped after 3 requests" in out
    recorded = json.loads(record.read_text())
    assert [r.get("stream") for r in recorded] == [True, None, None]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["requests.json", "script.json"]


def test_stand_alone_server_stops_on_sigint(tmp_path: Path) -> None:
    """#12.5: Ctrl-C (SIGINT) is a clean shutdown too, without a traceback."""
    script = tmp_path / "s.json"
    script.write_text("[]")
    proc = _start(tmp_path, "--script", str(script))
    try:
        assert _first_line(proc).startswith("listening on http://127.0.0.1:")
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "Traceback" not in err
    assert "stopped after 0 requests" in out


def test_stand_alone_help_and_bad_script(tmp_path: Path) -> None:
    """#12.5: ``--help`` documents the script format; a bad script exits 2 naming the step."""
    helped = subprocess.run([sys.executable, "-m", "hermes_pipeline.demo.model_server", "--help"],
                            capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert helped.returncode == 0
    for needle in ("--script", "--port", "--host", "error_status", "tool_calls", "SIGTERM", "include_usage"):
        assert needle in helped.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(["fine", {"eror_status": 503}]))
    failed = subprocess.run([sys.executable, "-m", "hermes_pipeline.demo.model_server", "--script", str(bad)],
                            capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert failed.returncode == 2
    assert "step 1: unknown keys ['eror_status']" in failed.stderr and "Traceback" not in failed.stderr
    good = tmp_path / "good.json"
    good.write_text("[]")
    remote = subprocess.run([sys.executable, "-m", "hermes_pipeline.demo.model_server", "--script", str(good),
                             "--host", "0.0.0.0"], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert remote.returncode == 2 and "loopback" in remote.stderr
