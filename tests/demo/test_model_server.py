"""Real-HTTP tests of the scripted model server and the stdlib chat-completions client."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.demo.model_server import EXHAUSTED_TEXT, ScriptedModelServer, ScriptStep, ToolCallSpec
from hermes_pipeline.demo.openai_client import ChatCompletionsClient, ProviderHTTPError

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}]


def chat(client: ChatCompletionsClient, **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("model", "hermes-demo-1")
    kwargs.setdefault("messages", MESSAGES)
    return client.create(**kwargs)


def raw_post(url: str, data: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())


def test_text_reply_has_openai_shape_and_deterministic_usage() -> None:
    with ScriptedModelServer([ScriptStep(content="Hello, world!")], model="m-1") as srv:
        assert srv.base_url == f"http://127.0.0.1:{srv.port}/v1"
        reply = chat(ChatCompletionsClient(srv.base_url))
    assert reply["object"] == "chat.completion"
    assert reply["id"] == "chatcmpl-000001"
    assert isinstance(reply["created"], int)
    assert reply["model"] == "m-1"
    choice = reply["choices"][0]
    assert choice["index"] == 0
    assert choice["message"] == {"role": "assistant", "content": "Hello, world!"}
    assert choice["finish_reason"] == "stop"
    compact = json.dumps(MESSAGES, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert reply["usage"] == {"prompt_tokens": len(compact) // 4, "completion_tokens": len("Hello, world!") // 4,
                              "total_tokens": len(compact) // 4 + len("Hello, world!") // 4}


def test_tool_call_reply_round_trips_arguments_and_numbers_ids() -> None:
    args = {"path": "/tmp/x.txt", "limit": 3, "nested": {"flag": True, "items": [1, "two"]}}
    script = [
        ScriptStep(tool_calls=[ToolCallSpec("read_file", args), ToolCallSpec("list_dir", {"path": "."})]),
        ScriptStep(content="thinking", tool_calls=[ToolCallSpec("grep", {"q": "x"}),
                                                   ToolCallSpec("raw", '{"broken', id="custom-id")]),
    ]
    with ScriptedModelServer(script) as srv:
        client = ChatCompletionsClient(srv.base_url)
        first, second = chat(client), chat(client)
    msg = first["choices"][0]["message"]
    assert first["choices"][0]["finish_reason"] == "tool_calls"
    assert msg["content"] is None
    assert [c["id"] for c in msg["tool_calls"]] == ["call_0001", "call_0002"]
    assert all(c["type"] == "function" for c in msg["tool_calls"])
    assert msg["tool_calls"][0]["function"]["name"] == "read_file"
    assert isinstance(msg["tool_calls"][0]["function"]["arguments"], str)
    assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == args
    msg2 = second["choices"][0]["message"]
    assert msg2["content"] == "thinking"
    assert [c["id"] for c in msg2["tool_calls"]] == ["call_0003", "custom-id"]
    assert msg2["tool_calls"][1]["function"]["arguments"] == '{"broken'
    assert second["usage"]["completion_tokens"] > 0


@pytest.mark.parametrize(
    ("status", "reason", "retryable"),
    [(429, "rate_limit", True), (503, "overloaded", True), (529, "overloaded", True),
     (500, "server_error", True), (502, "server_error", True), (408, "timeout", True),
     (409, "conflict", True), (400, "format_error", False), (401, "auth", False), (403, "auth", False),
     (404, "model_not_found", False), (413, "payload_too_large", False), (418, "client_error", False)],
)
def test_error_step_raises_classified_provider_error(status: int, reason: str, retryable: bool) -> None:
    step = ScriptStep.error(status, f"scripted {status}", code="some_code", retry_after=7)
    with ScriptedModelServer([step, ScriptStep(content="recovered")]) as srv:
        client = ChatCompletionsClient(srv.base_url)
        with pytest.raises(ProviderHTTPError) as info:
            chat(client)
        after = chat(client)
    err = info.value
    assert (err.status_code, err.reason, err.retryable) == (status, reason, retryable)
    assert err.retry_after == 7.0
    assert err.body["error"]["message"] == f"scripted {status}"
    assert err.body["error"]["code"] == "some_code"
    assert isinstance(err.body["error"]["type"], str)
    assert f"HTTP {status}" in str(err) and f"scripted {status}" in str(err)
    assert after["choices"][0]["message"]["content"] == "recovered"


def test_error_without_retry_after_has_none() -> None:
    with ScriptedModelServer([ScriptStep.error(503, "busy")]) as srv:
        with pytest.raises(ProviderHTTPError) as info:
            chat(ChatCompletionsClient(srv.base_url))
    assert info.value.retry_after is None
    assert info.value.body["error"]["type"] == "overloaded_error"


def test_error_message_never_contains_api_key_or_headers() -> None:
    key = "sk-very-secret-0123456789"
    with ScriptedModelServer([ScriptStep.error(401, f"Incorrect API key provided: {key}")]) as srv:
        with pytest.raises(ProviderHTTPError) as info:
            chat(ChatCompletionsClient(srv.base_url, api_key=key))
        assert srv.request_headers[0]["authorization"] == f"Bearer {key}"
    text = str(info.value) + repr(info.value) + json.dumps(info.value.body)
    assert key not in text
    assert "Bearer" not in text and "Authorization" not in text
    assert info.value.reason == "auth"


@pytest.mark.parametrize(
    "payload",
    [{"messages": []}, {"model": 3, "messages": []}, {"model": "m"}, {"model": "m", "messages": "hi"}],
)
def test_invalid_body_is_400_format_error_and_consumes_no_step(payload: dict[str, Any]) -> None:
    with ScriptedModelServer([ScriptStep(content="first")]) as srv:
        client = ChatCompletionsClient(srv.base_url)
        with pytest.raises(ProviderHTTPError) as info:
            client.create(**payload)
        assert (info.value.status_code, info.value.reason, info.value.retryable) == (400, "format_error", False)
        assert info.value.body["error"]["type"] == "invalid_request_error"
        assert srv.requests == []
        assert chat(client)["choices"][0]["message"]["content"] == "first"


@pytest.mark.parametrize("data", [b"{not json", b"[1, 2]", b"", b"\xff\xfe"])
def test_malformed_json_is_400_with_openai_error(data: bytes) -> None:
    with ScriptedModelServer([ScriptStep(content="x")]) as srv:
        status, body = raw_post(srv.base_url + "/chat/completions", data)
        assert srv.remaining == 1
    assert status == 400
    assert set(body["error"]) == {"message", "type", "code"}


def test_unknown_routes_are_404_and_models_lists_the_model() -> None:
    with ScriptedModelServer([], model="demo-x") as srv:
        models = ChatCompletionsClient(srv.base_url).list_models()
        with pytest.raises(ProviderHTTPError) as info:
            chat(ChatCompletionsClient(srv.base_url + "/nope"))
        status, body = raw_post(f"http://127.0.0.1:{srv.port}/v2/chat/completions", b"{}")
    assert [m["id"] for m in models["data"]] == ["demo-x"]
    assert (info.value.status_code, info.value.reason, info.value.retryable) == (404, "model_not_found", False)
    assert status == 404 and "error" in body


def test_script_exhaustion_replies_with_final_text() -> None:
    with ScriptedModelServer([ScriptStep(content="only")]) as srv:
        client = ChatCompletionsClient(srv.base_url)
        replies = [chat(client) for _ in range(3)]
        assert srv.remaining == 0
    assert [r["choices"][0]["message"]["content"] for r in replies] == ["only", EXHAUSTED_TEXT, EXHAUSTED_TEXT]
    assert all(r["choices"][0]["finish_reason"] == "stop" for r in replies)
    assert all("tool_calls" not in r["choices"][0]["message"] for r in replies)


def test_callable_step_sees_the_request_and_extend_appends() -> None:
    def echo(body: dict[str, Any]) -> ScriptStep:
        return ScriptStep(content=f"tool said: {body['messages'][-1]['content']}")

    messages = [*MESSAGES, {"role": "tool", "tool_call_id": "call_0001", "content": "42 files"}]
    with ScriptedModelServer([echo]) as srv:
        client = ChatCompletionsClient(srv.base_url)
        first = chat(client, messages=messages)
        srv.extend([ScriptStep(content="appended")])
        second = chat(client)
    assert first["choices"][0]["message"]["content"] == "tool said: 42 files"
    assert second["choices"][0]["message"]["content"] == "appended"


def test_failing_callable_step_is_served_as_500_and_recorded() -> None:
    def boom(body: dict[str, Any]) -> ScriptStep:
        raise RuntimeError("kaput")

    with ScriptedModelServer([boom, ScriptStep(content="ok")]) as srv:
        client = ChatCompletionsClient(srv.base_url)
        with pytest.raises(ProviderHTTPError) as info:
            chat(client)
        assert chat(client)["choices"][0]["message"]["content"] == "ok"
        assert [str(e) for e in srv.errors] == ["kaput"]
    assert (info.value.status_code, info.value.reason, info.value.retryable) == (500, "server_error", True)


def test_requests_are_recorded_with_extra_body_merged() -> None:
    with ScriptedModelServer([ScriptStep(content="a"), ScriptStep(content="b")]) as srv:
        client = ChatCompletionsClient(srv.base_url)
        chat(client, temperature=0.2, timeout=5, http_client=object(),
             extra_body={"reasoning": {"effort": "low"}, "temperature": 0.9})
        chat(client, messages=[{"role": "user", "content": "second"}], tools=[{"type": "function"}])
        recorded, headers = srv.requests, srv.request_headers
    assert recorded[0] == {"model": "hermes-demo-1", "messages": MESSAGES, "temperature": 0.9,
                           "reasoning": {"effort": "low"}}
    assert recorded[1] == {"model": "hermes-demo-1", "messages": [{"role": "user", "content": "second"}],
                           "tools": [{"type": "function"}]}
    assert all("authorization" not in h for h in headers)


def test_extra_body_must_be_a_mapping() -> None:
    with pytest.raises(TypeError):
        ChatCompletionsClient("http://127.0.0.1:9/v1").create(model="m", messages=[], extra_body=["x"])


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "10.0.0.1", "example.com", "", "::"])
def test_non_loopback_hosts_are_refused(host: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        ScriptedModelServer([], host=host)


def test_localhost_is_accepted_and_bound_to_ipv4_loopback() -> None:
    with ScriptedModelServer([ScriptStep(content="hi")], host="localhost") as srv:
        assert srv.base_url.startswith("http://127.0.0.1:")
        assert chat(ChatCompletionsClient(srv.base_url))["choices"][0]["message"]["content"] == "hi"


def test_concurrent_requests_consume_distinct_steps() -> None:
    n = 16
    script = [ScriptStep(content=f"step-{i}") for i in range(n)]
    barrier = threading.Barrier(n)
    results: list[str] = []
    failures: list[BaseException] = []
    lock = threading.Lock()
    with ScriptedModelServer(script) as srv:
        client = ChatCompletionsClient(srv.base_url, timeout=10)

        def worker() -> None:
            try:
                barrier.wait(timeout=10)
                content = chat(client)["choices"][0]["message"]["content"]
            except BaseException as exc:  # noqa: BLE001 - surfaced below
                with lock:
                    failures.append(exc)
                return
            with lock:
                results.append(content)

        threads = [threading.Thread(target=worker) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert failures == []
        assert sorted(results) == sorted(f"step-{i}" for i in range(n))
        assert len(srv.requests) == n and srv.remaining == 0
        assert chat(client)["choices"][0]["message"]["content"] == EXHAUSTED_TEXT


def test_server_stops_on_context_exit_and_refuses_connections() -> None:
    with ScriptedModelServer([ScriptStep(content="x")]) as srv:
        client = ChatCompletionsClient(srv.base_url, timeout=5)
        chat(client)
        thread = srv._thread
        assert thread.is_alive()
    assert not thread.is_alive()
    with pytest.raises(ProviderHTTPError) as info:
        chat(client)
    assert (info.value.status_code, info.value.reason, info.value.retryable) == (None, "connection_error", True)
    srv.close()  # idempotent


def test_client_timeout_is_classified_retryable() -> None:
    release = threading.Event()

    def stall(body: dict[str, Any]) -> ScriptStep:
        release.wait(timeout=30)
        return ScriptStep(content="late")

    with ScriptedModelServer([stall]) as srv:
        try:
            with pytest.raises(ProviderHTTPError) as info:
                chat(ChatCompletionsClient(srv.base_url, timeout=0.2))
        finally:
            release.set()
    assert (info.value.status_code, info.value.reason, info.value.retryable) == (None, "timeout", True)


def test_async_create_runs_the_same_request() -> None:
    with ScriptedModelServer([ScriptStep(content="async hi")]) as srv:
        reply = asyncio.run(ChatCompletionsClient(srv.base_url).acreate(model="m", messages=MESSAGES))
    assert reply["choices"][0]["message"]["content"] == "async hi"


def test_invalid_error_status_is_rejected() -> None:
    with pytest.raises(ValueError):
        ScriptStep.error(200)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents=st.lists(st.text(max_size=40), max_size=5))
def test_replies_replay_script_in_order(contents: list[str]) -> None:
    with ScriptedModelServer([ScriptStep(content=c) for c in contents]) as srv:
        client = ChatCompletionsClient(srv.base_url)
        replies = [chat(client) for _ in range(len(contents) + 1)]
    got = [r["choices"][0]["message"]["content"] for r in replies]
    assert got == [*contents, EXHAUSTED_TEXT]
    assert [r["id"] for r in replies] == [f"chatcmpl-{i:06d}" for i in range(1, len(contents) + 2)]
    for reply in replies:
        usage = reply["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
