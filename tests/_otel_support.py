"""Helpers for the OpenTelemetry / Langfuse sink tests: a receiver that records paths, plugin builders,
a scripted session through the host API, exporter doubles and span lookups."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from hermes_pipeline import Engine, Host
from hermes_pipeline.demo import otlp_receiver
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, ReceivedSpan
from hermes_pipeline.sinks.otel import OtelPlugin, build_otel_plugin
from hermes_pipeline.sinks.otel_export import default_exporter

from .conftest import chat_response

SPAN_KIND_INTERNAL = 1
SPAN_KIND_CLIENT = 3
STATUS_UNSET = 0
STATUS_ERROR = 2

TOOL_CALL = {"id": "call_ok", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"notes.txt"}'}}
SYSTEM = {"role": "system", "content": "You are Hermes."}
USER = {"role": "user", "content": "Summarise notes.txt"}
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                           "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
TOOLSETS = {"read_file": "file", "terminal": "terminal", "mcp_search": "mcp-search", "delegate_task": "delegation"}


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


def sequence(*outcomes: Any) -> Any:
    queue = list(outcomes)

    def provider(request: dict[str, Any]) -> Any:
        outcome = queue.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return provider


class Overloaded(Exception):
    status_code = 503


def run_scripted_session(engine: Engine, session_id: str = "sess-main") -> dict[str, Any]:
    """One turn with a retried LLM request, tools ok / error / blocked (deny and hook) / cancelled, an approval
    inside a tool, a human-input wait, a subagent inside a delegation tool and a final LLM call."""
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "block", "message": "policy"}
                         if kw["tool_name"] == "secret" else None)
    host = Host(engine, platform="cli", model="test-model", provider="openai",
                base_url="https://api.example/v1", api_mode="chat_completions")
    ids: dict[str, Any] = {}
    with host.session(session_id) as session:
        with session.turn("Summarise notes.txt", sender_id="user-7") as turn:
            ids["turn_id"] = turn.turn_id
            history = [SYSTEM, USER]
            turn.call_llm({"model": "test-model", "messages": history, "tools": TOOLS, "temperature": 0.2,
                           "max_tokens": 256},
                          sequence(Overloaded("busy"), chat_response(None, [TOOL_CALL], model="test-model-2025")),
                          max_retries=2)
            turn.call_tool("read_file", {"path": "notes.txt"}, lambda path: "Buy milk.", tool_call_id="call_ok")

            def missing(path: str) -> str:
                raise FileNotFoundError(path)

            turn.call_tool("read_file", {"path": "gone.txt"}, missing, tool_call_id="call_err")
            turn.call_tool("rm", {"path": "/"}, lambda path: "x", tool_call_id="call_deny", deny="not allowed")
            turn.call_tool("secret", {}, lambda: "x", tool_call_id="call_block")

            def terminal(cmd: str) -> str:
                with turn.approval(cmd, description="lists files", pattern_key="ls") as approval:
                    approval.resolve("once")
                return "a.txt"

            turn.call_tool("terminal", {"cmd": "ls"}, terminal, tool_call_id="call_appr")
            turn.call_tool("mcp_search", {"q": "milk"}, lambda q: "hit", tool_call_id="call_mcp")
            with turn.human_input("clarify", "Which file?") as wait:
                wait.resolve("provided")

            def delegate(goal: str) -> str:
                with turn.subagent(role="researcher", goal=goal, child_session_id=f"{session_id}-child") as run:
                    with run.session.turn(goal) as child_turn:
                        child_turn.call_llm({"model": "test-model", "messages": [{"role": "user", "content": goal}]},
                                            lambda r: chat_response("found it"))
                        child_turn.complete("found it")
                    run.finish("completed", summary="found it")
                return "done"

            turn.call_tool("delegate_task", {"goal": "find the notes"}, delegate, tool_call_id="call_sub")

            def interrupted() -> str:
                raise KeyboardInterrupt

            with pytest.raises(KeyboardInterrupt):
                turn.call_tool("slow", {}, interrupted, tool_call_id="call_cancel")
            follow_up = [*history, {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
                         {"role": "tool", "tool_call_id": "call_ok", "content": "Buy milk."}]
            turn.call_llm({"model": "test-model", "messages": follow_up}, lambda r: chat_response("All done"))
            turn.complete("All done")
    return ids


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


__all__ = ["GatedExporter", "PathReceiver", "by_name", "default_exporter", "finish", "otel_plugin",
           "run_scripted_session", "tool_span"]
