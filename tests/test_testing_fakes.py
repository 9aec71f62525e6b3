"""The public fakes of ``hermes_pipeline.testing`` for a host's seams (issue 29 item 7: the project tests itself
through the public helpers): ``chat_response``, ``scripted_provider`` and ``closed_port``."""

from __future__ import annotations

import socket
import threading

import pytest

import hermes_pipeline.testing as testing
from hermes_pipeline import Engine, Host
from hermes_pipeline.testing import Recorder, chat_response, closed_port, scripted_provider


class Busy(Exception):
    status_code = 503


def test_the_fakes_are_public() -> None:
    assert {"chat_response", "scripted_provider", "closed_port"} <= set(testing.__all__)


def test_chat_response_is_text_or_tool_calls() -> None:
    text = chat_response("hello", model="m")
    assert text["choices"][0]["message"] == {"role": "assistant", "content": "hello"}
    assert text["choices"][0]["finish_reason"] == "stop" and text["model"] == "m"
    call = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    tools = chat_response(None, [call])
    assert tools["choices"][0]["message"]["tool_calls"] == [call]
    assert tools["choices"][0]["finish_reason"] == "tool_calls"


def test_scripted_provider_raises_then_answers_through_the_host() -> None:
    """MW-8-style retry through the real host: the scripted error is retried, the scripted answer returned; the
    observers see one failed attempt and one answered."""
    engine = Engine()
    recorder = Recorder()
    engine.add_plugin(recorder, name="recorder")
    host = Host(engine, platform="cli", model="m", provider="p", base_url="http://127.0.0.1:9/v1")
    with host.session() as session, session.turn("hi") as turn:
        response = turn.call_llm({"model": "m", "messages": []}, scripted_provider(Busy("busy"), chat_response("ok")),
                                 max_retries=1)
        turn.complete("ok")
    assert response["choices"][0]["message"]["content"] == "ok"
    assert len(recorder.of("api_request_error")) == 1 and len(recorder.of("post_api_request")) == 1


def test_scripted_provider_says_when_it_runs_out() -> None:
    provider = scripted_provider(chat_response("one"))
    assert provider({})["choices"][0]["message"]["content"] == "one"
    with pytest.raises(LookupError, match="1 scripted outcome"):
        provider({})


def test_scripted_provider_hands_each_outcome_to_exactly_one_caller() -> None:
    outcomes = [chat_response(str(k)) for k in range(200)]
    provider = scripted_provider(*outcomes)
    got: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            answer = provider({})["choices"][0]["message"]["content"]
            with lock:
                got.append(answer)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got, key=int) == [str(k) for k in range(200)]


def test_closed_port_refuses_connections() -> None:
    with closed_port() as port:
        assert 0 < port < 65536
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
