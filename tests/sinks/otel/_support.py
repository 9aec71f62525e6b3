"""Helpers for the OpenTelemetry / Langfuse sink tests: a receiver that records paths, plugin builders,
a scripted session through the host API, exporter doubles and span lookups."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from hermes_pipeline import Engine, Host
from hermes_pipeline.demo import otlp_receiver
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, ReceivedSpan
from hermes_pipeline.sinks.otel import OtelPlugin, build_otel_plugin
from hermes_pipeline.sinks.otel.exporter import default_exporter

from tests._scripted import run_scripted_session as scripted_session
from hermes_pipeline.testing import chat_response

SPAN_KIND_INTERNAL = 1
SPAN_KIND_CLIENT = 3
STATUS_UNSET = 0
STATUS_ERROR = 2

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                           "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
TOOLSETS = {"read_file": "file", "terminal": "terminal", "mcp_search": "mcp-search", "delegate_task": "delegation"}


class BodyReceiver(OTLPReceiver):
    """:class:`OTLPReceiver` that also keeps every request body (decompressed) with its path (``bodies``); spans
    are decoded from the trace requests only (a metrics request beside them is kept as bytes)."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[tuple[str, bytes]] = []
        receiver = self

        class Handler(otlp_receiver._Handler):
            def do_POST(self) -> None:  # noqa: N802 - stdlib naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding", "").lower() == "gzip":
                    body = gzip.decompress(body)
                with receiver._lock:
                    receiver.bodies.append((self.path, body))
                    if self.path.endswith("/v1/traces"):
                        receiver.spans.extend(otlp_receiver.decode_traces(body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server.RequestHandlerClass = Handler

    def reset(self) -> None:
        """Forget every body and span received so far."""
        with self._lock:
            self.bodies.clear()
            self.spans.clear()


class PathReceiver(OTLPReceiver):
    """:class:`OTLPReceiver` that also records each request's path (``paths``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.paths: list[str] = []
        receiver = self

        class Handler(otlp_receiver._Handler):
            def do_POST(self) -> None:  # noqa: N802 - stdlib naming
                with receiver._lock:
                    receiver.paths.append(self.path)
                super().do_POST()

        self._server.RequestHandlerClass = Handler

    def __enter__(self) -> PathReceiver:
        return self


def otel_plugin(engine: Engine, endpoint: str, *, projection: str = "gen_ai", name: str = "otel",
                endpoint_keys: dict[str, Any] | None = None, top: dict[str, Any] | None = None,
                **kwargs: Any) -> OtelPlugin:
    """An OTel plugin exporting to ``endpoint`` (short batch delay), registered on ``engine``."""
    entry = {"type": projection, "endpoint": endpoint, "scheduled_delay_millis": 50, **(endpoint_keys or {})}
    kwargs.setdefault("toolsets", TOOLSETS)
    plugin = build_otel_plugin({"enabled": True, "endpoints": [entry], **(top or {})}, **kwargs)
    engine.add_plugin(plugin, name=name)
    return plugin


def finish(plugin: OtelPlugin, receiver: OTLPReceiver) -> list[ReceivedSpan]:
    """Flush and shut down the plugin (both must succeed), then return what the receiver decoded."""
    assert plugin.flush(15.0)
    assert plugin.shutdown(15.0)
    return list(receiver.spans)


def run_scripted_session(engine: Engine, session_id: str = "sess-main") -> dict[str, Any]:
    """:func:`~tests._scripted.run_scripted_session` with a request that lists tools and sampling options."""
    return scripted_session(engine, session_id, request_extra={"tools": TOOLS, "temperature": 0.2, "max_tokens": 256})


QUESTION = "What do my notes say?"
ANSWER = "Your notes say: Buy milk."
FOLLOW_UP = "Thanks! Anything else?"
LAST_ANSWER = "No, that is all."
MISSING = "no such file: missing.txt"


def run_two_turn_session(engine: Engine, session_id: str = "sess-2t", *, base_url: str = "https://api.example/v1",
                         usage: tuple[int, int] = (42, 7)) -> dict[str, Any]:
    """Issue 18's session: turn 1 asks a question, the model (tokens ``usage``) calls two tools in one answer, one
    succeeds and one fails (``FileNotFoundError``), the next call sees both results and answers; turn 2 is a
    plain follow-up. Returns the tool results the model was given and the turn ids."""
    host = Host(engine, platform="cli", model="gpt-4o-mini", provider="openai", base_url=base_url,
                api_mode="chat_completions")
    calls = [{"id": "call_ok", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"notes.txt"}'}},
             {"id": "call_bad", "type": "function",
              "function": {"name": "read_file", "arguments": '{"path":"missing.txt"}'}}]

    def answer(text: str | None, tool_calls: list[dict[str, Any]] | None = None) -> Any:
        response = chat_response(text, tool_calls, model="gpt-4o-mini-2024-07-18")
        response["id"] = f"chatcmpl-{len(text or '')}-{len(tool_calls or [])}"
        response["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                             "total_tokens": usage[0] + usage[1]}
        return lambda request: response

    def read_file(path: str) -> str:
        if path != "notes.txt":
            raise FileNotFoundError(MISSING)
        return "Buy milk."

    out: dict[str, Any] = {"turn_ids": []}
    system = {"role": "system", "content": "You are Hermes."}
    with host.session(session_id) as session:
        with session.turn(QUESTION) as turn:
            out["turn_ids"].append(turn.turn_id)
            history: list[dict[str, Any]] = [system, {"role": "user", "content": QUESTION}]
            turn.call_llm({"model": "gpt-4o-mini", "messages": list(history), "tools": TOOLS},
                          answer(None, calls))
            results = [turn.call_tool("read_file", {"path": p}, read_file, tool_call_id=c)
                       for p, c in (("notes.txt", "call_ok"), ("missing.txt", "call_bad"))]
            out["results"] = results
            history += [{"role": "assistant", "content": None, "tool_calls": calls},
                        {"role": "tool", "tool_call_id": "call_ok", "content": results[0]},
                        {"role": "tool", "tool_call_id": "call_bad", "content": results[1]}]
            turn.call_llm({"model": "gpt-4o-mini", "messages": list(history), "tools": TOOLS}, answer(ANSWER))
            turn.complete(ANSWER)
            history.append({"role": "assistant", "content": ANSWER})
        with session.turn(FOLLOW_UP, conversation_history=list(history)) as turn:
            out["turn_ids"].append(turn.turn_id)
            history.append({"role": "user", "content": FOLLOW_UP})
            turn.call_llm({"model": "gpt-4o-mini", "messages": list(history), "tools": TOOLS}, answer(LAST_ANSWER))
            turn.complete(LAST_ANSWER)
    return out


def by_name(spans: Sequence[ReceivedSpan], name: str) -> list[ReceivedSpan]:
    return [s for s in spans if s.name == name]


def tool_span(spans: Sequence[ReceivedSpan], call_id: str) -> ReceivedSpan:
    [span] = [s for s in spans if s.attributes.get("gen_ai.tool.call.id") == call_id
              or s.attributes.get("hermes_pipeline.tool_call_id") == call_id]
    return span


class GatedExporter(SpanExporter):
    """A SpanExporter double whose ``export`` waits for ``gate`` (a stuck collector); records batches."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.gate = gate
        self.entered = threading.Event()
        self.batches: list[list[Any]] = []
        self.threads: set[str] = set()
        self.shut = False

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        self.threads.add(threading.current_thread().name)
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(30)
        self.batches.append(list(spans))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.shut = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


__all__ = ["ANSWER", "FOLLOW_UP", "LAST_ANSWER", "MISSING", "QUESTION", "GatedExporter", "PathReceiver", "by_name",
           "default_exporter", "finish", "otel_plugin", "run_scripted_session", "run_two_turn_session", "tool_span"]
