"""The scripted session shared by the exporter tests, and its small parts: a retryable provider error and the
conversation's messages (the provider answering from a list is the public ``scripted_provider``)."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.testing import chat_response, scripted_provider

TOOL_CALL = {"id": "call_ok", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"notes.txt"}'}}
SYSTEM = {"role": "system", "content": "You are Hermes."}
USER = {"role": "user", "content": "Summarise notes.txt"}


class Overloaded(Exception):
    """A provider error with an HTTP status the host retries."""

    status_code = 503


def run_scripted_session(engine: Engine, session_id: str = "sess-main", *,
                         base_url: str = "https://api.example/v1", request_extra: dict[str, Any] | None = None,
                         mcp_tool: bool = True, child_session_id: str | None = None) -> dict[str, Any]:
    """One turn with a retried LLM request, tools ok / error / blocked (deny and hook) / cancelled, an approval
    inside a tool, an MCP tool (``mcp_tool``), a human-input wait, a subagent inside a delegation tool and a
    final LLM call. ``request_extra`` is merged into the first request; the subagent's session is
    ``child_session_id`` (default ``<session_id>-child``). Returns the turn IDs."""
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "block", "message": "policy"}
                         if kw["tool_name"] == "secret" else None)
    host = Host(engine, platform="cli", model="test-model", provider="openai", base_url=base_url,
                api_mode="chat_completions")
    ids: dict[str, Any] = {}
    with host.session(session_id) as session:
        with session.turn("Summarise notes.txt", sender_id="user-7") as turn:
            ids["turn_id"] = turn.turn_id
            history = [SYSTEM, USER]
            turn.call_llm({"model": "test-model", "messages": history, **(request_extra or {})},
                          scripted_provider(Overloaded("busy"), chat_response(None, [TOOL_CALL], model="test-model-2025")),
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
            if mcp_tool:
                turn.call_tool("mcp_search", {"q": "milk"}, lambda q: "hit", tool_call_id="call_mcp")
            with turn.human_input("clarify", "Which file?") as wait:
                wait.resolve("provided")

            def delegate(goal: str) -> str:
                child = child_session_id or f"{session_id}-child"
                with turn.subagent(role="researcher", goal=goal, child_session_id=child) as run:
                    with run.session.turn(goal) as child_turn:
                        ids["child_turn_id"] = child_turn.turn_id
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
