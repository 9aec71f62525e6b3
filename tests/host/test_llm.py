"""The provider-attempt path of the host API: order, correlation IDs, retries, sanitized fields."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from hermes_pipeline import Engine, Host, LLMExecutionBlocked
from hermes_pipeline.host import ErrorInfo
from hermes_pipeline.testing import Recorder

from hermes_pipeline.testing import chat_response


class Flaky(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code} from upstream, Authorization: Bearer sk-live-abcdef123456")
        self.status_code = status_code


REQUEST = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 64,
           "tools": [{"type": "function", "function": {"name": "read_file"}}], "timeout": 30,
           "extra_headers": {"Authorization": "Bearer sk-should-never-appear"}}


def test_obs_26_retries_share_api_request_id_and_each_attempt_terminates_once(host: Host, rec: Recorder) -> None:
    """OBS-26 / MW-41: each attempt has pre_api_request and exactly one terminal event; IDs shared."""
    outcomes: list[Any] = [Flaky(503), Flaky(429), chat_response()]

    def provider(request: dict[str, Any]) -> Any:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    with host.session() as session, session.turn("hello") as turn:
        turn.call_llm(dict(REQUEST), provider, max_retries=3)
        turn.call_llm(dict(REQUEST), lambda r: chat_response())
    api = [e for e in rec.events if e.hook in ("pre_api_request", "post_api_request", "api_request_error")]
    assert [e.hook for e in api] == ["pre_api_request", "api_request_error", "pre_api_request", "api_request_error",
                                     "pre_api_request", "post_api_request", "pre_api_request", "post_api_request"]
    first_ids = {e["api_request_id"] for e in api[:6]}
    assert len(first_ids) == 1 and api[6]["api_request_id"] not in first_ids
    assert [e["api_call_count"] for e in api] == [1] * 6 + [2] * 2
    assert [e["retry_count"] for e in api if e.hook == "pre_api_request"] == [0, 1, 2, 0]
    errors = rec.of("api_request_error")
    assert [(e["status_code"], e["reason"], e["retryable"]) for e in errors] == [
        (503, "overloaded", True), (429, "rate_limit", True)]
    assert all(e["max_retries"] == 3 for e in errors)
    assert {e["turn_id"] for e in api} == {turn.turn_id} and {e["task_id"] for e in api} == {turn.task_id}


def test_final_error_is_raised_and_reported_not_retryable(host: Host, rec: Recorder) -> None:
    """A non-retryable failure (or exhausted retries) is re-raised after api_request_error(retryable=False)."""

    def provider(request: dict[str, Any]) -> Any:
        raise Flaky(503)

    with host.session() as session, pytest.raises(Flaky), session.turn("hello") as turn:
        turn.call_llm(dict(REQUEST), provider, max_retries=1)
    assert [e["retryable"] for e in rec.of("api_request_error")] == [True, False]
    end = rec.last("on_session_end")
    assert end["failed"] is True and end["completed"] is False and end["turn_exit_reason"] == "error"


def test_obs_61_sanitized_request_and_response_fields(host: Host, rec: Recorder) -> None:
    """OBS-61 / §8.3: request = {"method","body"} without timeout/http_client; response shape; no secrets."""
    with host.session() as session, session.turn("hello") as turn:
        turn.call_llm(dict(REQUEST), lambda r: chat_response(tool_calls=[
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a\"}"}}]))
    pre = rec.last("pre_api_request")
    assert pre["request"]["method"] == "POST"
    assert "timeout" not in pre["request"]["body"] and pre["request"]["body"]["model"] == "test-model"
    assert "sk-should-never-appear" not in json.dumps(pre["request"])
    assert (pre["message_count"], pre["tool_count"], pre["max_tokens"]) == (1, 1, 64)
    assert pre["request_messages"] == REQUEST["messages"] and pre["request_messages"] is not REQUEST["messages"]
    assert pre["middleware_trace"] == [] and pre["user_message"] == "hello"
    post = rec.last("post_api_request")
    response = post["response"]
    assert set(response) >= {"model", "finish_reason", "assistant_message", "usage"}
    assert response["assistant_message"]["tool_calls"][0]["function"]["name"] == "read_file"
    json.dumps(response)  # OBS-51: JSON-compatible only
    assert post["usage"]["prompt_tokens"] == 10 and post["usage"]["total_tokens"] == 15
    assert post["assistant_tool_call_count"] == 1 and post["finish_reason"] == "tool_calls"
    assert post["api_duration"] >= 0 and post["ended_at"] >= post["started_at"]
    assert post["assistant_message"]["role"] == "assistant"  # legacy raw object
    assert "middleware_trace" not in post.payload  # MW-40


def test_obs_62_error_field_scrubbed(host: Host, rec: Recorder) -> None:
    """OBS-62: error.type unchanged; error.message value-scrubbed (no bearer token)."""

    def provider(request: dict[str, Any]) -> Any:
        raise Flaky(400)

    with host.session() as session, session.turn("x") as turn, pytest.raises(Flaky):
        turn.call_llm(dict(REQUEST), provider)
    error = rec.last("api_request_error")
    assert error["error"]["type"] == "Flaky"
    assert "sk-live-abcdef123456" not in error["error"]["message"] and "Bearer" in error["error"]["message"]
    assert error["reason"] == "format_error" and "middleware_trace" not in error.payload


def test_mw_41_effective_request_flows_through_every_step(engine: Engine, host: Host, rec: Recorder) -> None:
    """MW-41 / MW-40: llm_request rewrite reaches pre_api_request, llm_execution and the provider."""
    seen: dict[str, Any] = {}

    def rewrite(**kw: Any) -> dict[str, Any]:
        return {"request": {**kw["request"], "model": "routed-model"}, "source": "router", "reason": "cheaper"}

    def wrap(**kw: Any) -> Any:
        seen["execution"] = (kw["request"]["model"], kw["original_request"]["model"], kw["middleware_trace"],
                             kw["api_call_count"], kw["base_url"])
        return kw["next_call"]()

    engine.register_middleware("llm_request", rewrite)
    engine.register_middleware("llm_execution", wrap)
    with host.session() as session, session.turn("x") as turn:
        turn.call_llm(dict(REQUEST), lambda r: seen.setdefault("provider", r["model"]) and chat_response())
    assert seen["provider"] == "routed-model"
    assert seen["execution"] == ("routed-model", "test-model", [{"source": "router", "reason": "cheaper"}], 1,
                                 "http://127.0.0.1:9/v1")
    pre = rec.last("pre_api_request")
    assert pre["request"]["body"]["model"] == "routed-model"
    assert pre["middleware_trace"] == [{"source": "router", "reason": "cheaper"}]


def test_mw_35_blocked_llm_call_propagates_and_attempt_is_closed(engine: Engine, host: Host, rec: Recorder) -> None:
    """MW-35: LLMExecutionBlocked reaches the host call site; the attempt still ends in api_request_error."""

    def guard(**kw: Any) -> Any:
        raise LLMExecutionBlocked("over budget")

    engine.register_middleware("llm_execution", guard)
    with host.session() as session, session.turn("x") as turn, pytest.raises(LLMExecutionBlocked):
        turn.call_llm(dict(REQUEST), lambda r: chat_response(), max_retries=3)
    errors = rec.of("api_request_error")
    assert len(errors) == 1 and errors[0]["retryable"] is False and errors[0]["reason"] == "provider_policy_blocked"


def test_custom_classifier_and_retry_delay(host: Host, rec: Recorder) -> None:
    """Hosts can classify errors and pace retries; the delay callback gets the retry number."""
    delays: list[int] = []
    failures = [ValueError("bad gateway"), ValueError("bad gateway")]

    def provider(request: dict[str, Any]) -> Any:
        if failures:
            raise failures.pop()
        return chat_response()

    with host.session() as session, session.turn("x") as turn:
        turn.call_llm(dict(REQUEST), provider, max_retries=5,
                      classify=lambda exc: ErrorInfo("server_error", True, 502),
                      retry_delay=lambda n: delays.append(n) or 0.0)
    assert delays == [1, 2]
    assert [e["status_code"] for e in rec.of("api_request_error")] == [502, 502]


def test_obs_66_no_listener_builds_no_payload(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-66 / OBS-70: without listeners the sanitizer and fact extraction never run."""
    import hermes_pipeline.host.llm as llm

    def forbidden(*a: Any, **k: Any) -> Any:
        raise AssertionError("payload built without a listener")

    for name in ("build_request_field", "build_error_field", "sanitize", "request_facts", "response_facts",
                 "normalize_usage"):
        monkeypatch.setattr(llm, name, forbidden)
    failures = [Flaky(503)]

    def provider(request: dict[str, Any]) -> Any:
        if failures:
            raise failures.pop()
        return chat_response()

    with host.session() as session, session.turn("x") as turn:
        assert turn.call_llm(dict(REQUEST), provider, max_retries=1)["choices"]


def test_obs_23_payload_build_error_is_swallowed(host: Host, rec: Recorder) -> None:
    """OBS-23: an error while building a payload never affects the agent loop."""

    class Weird:
        @property
        def choices(self) -> Any:
            raise RuntimeError("provider object explodes on access")

    with host.session() as session, session.turn("x") as turn:
        response = turn.call_llm(dict(REQUEST), lambda r: Weird())
    assert isinstance(response, Weird)
    assert rec.of("post_api_request") == [] and len(rec.of("pre_api_request")) == 1


def test_async_provider_with_and_without_execution_middleware(engine: Engine, host: Host, rec: Recorder) -> None:
    """Async twin: acall_llm awaits async providers; the sync middleware chain runs on a worker thread."""

    async def provider(request: dict[str, Any]) -> Any:
        await asyncio.sleep(0)
        return chat_response(content=request["model"])

    async def run() -> list[str]:
        with host.session() as session, session.turn("x") as turn:
            first = await turn.acall_llm(dict(REQUEST), provider)
            engine.register_middleware("llm_execution", lambda **kw: kw["next_call"]({**kw["request"], "model": "mw"}))
            second = await turn.acall_llm(dict(REQUEST), provider)
        return [first["choices"][0]["message"]["content"], second["choices"][0]["message"]["content"]]

    assert asyncio.run(run()) == ["test-model", "mw"]
    assert len(rec.of("post_api_request")) == 2
