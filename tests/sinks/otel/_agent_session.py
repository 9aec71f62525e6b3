"""The session the real-backend checks send (MLflow; issue 30 item 6): two turns of one Hermes session with a
retried provider request (the first attempt fails with a 503), two tool calls from one answer (one succeeds, one
fails), a skill loaded in the turn, a delegated subagent, and a plain follow-up turn."""

from __future__ import annotations

from typing import Any

from hermes_pipeline import Engine, Host

from hermes_pipeline.testing import chat_response

QUESTION = "What do my notes say?"
ANSWER = "Your notes say: Buy milk."
FOLLOW_UP = "Thanks! Anything else?"
LAST_ANSWER = "No, that is all."
MISSING = "no such file: missing.txt"
SKILL = "note-reading"
CHILD_GOAL = "Check the notes for dates"
CHILD_SUMMARY = "No dates found."
USAGE = (42, 7)
TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "Read a file from the workspace",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
CALLS = [{"id": "call_ok", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"notes.txt"}'}},
         {"id": "call_bad", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"missing.txt"}'}}]


class Overloaded(Exception):
    """The provider's transient failure (HTTP 503), retried by the host."""

    status_code = 503


def _answer(text: str | None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    response = chat_response(text, tool_calls, model="gpt-4o-mini-2024-07-18")
    response["id"] = f"chatcmpl-{len(text or '')}-{len(tool_calls or [])}"
    response["usage"] = {"prompt_tokens": USAGE[0], "completion_tokens": USAGE[1], "total_tokens": sum(USAGE)}
    return response


def _read_file(path: str) -> str:
    if path != "notes.txt":
        raise FileNotFoundError(MISSING)
    return "Buy milk."


def run_agent_session(engine: Engine, session_id: str) -> None:
    """Run the session (see the module docstring) through the host API on ``engine``."""
    host = Host(engine, platform="cli", model="gpt-4o-mini", provider="openai", base_url="https://api.example/v1",
                api_mode="chat_completions")
    system = {"role": "system", "content": "You are Hermes."}
    with host.session(session_id) as session:
        with session.turn(QUESTION) as turn:
            history: list[dict[str, Any]] = [system, {"role": "user", "content": QUESTION}]
            outcomes: list[Any] = [Overloaded("upstream overloaded"), _answer(None, CALLS)]

            def provider(request: dict[str, Any]) -> Any:
                outcome = outcomes.pop(0)
                if isinstance(outcome, BaseException):
                    raise outcome
                return outcome

            turn.call_llm({"model": "gpt-4o-mini", "messages": list(history), "tools": TOOLS}, provider,
                          max_retries=2)
            host.skill_lifecycle("loaded", SKILL, provenance="local", use_count=1, reused=False)
            results = [turn.call_tool("read_file", {"path": p}, _read_file, tool_call_id=c)
                       for p, c in (("notes.txt", "call_ok"), ("missing.txt", "call_bad"))]

            def delegate(goal: str) -> str:
                with turn.subagent(role="reviewer", goal=goal, child_session_id=f"{session_id}-child") as run:
                    with run.session.turn(goal) as child_turn:
                        child_turn.call_llm({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": goal}]},
                                            lambda request: _answer(CHILD_SUMMARY))
                        child_turn.complete(CHILD_SUMMARY)
                    run.finish("completed", summary=CHILD_SUMMARY)
                return CHILD_SUMMARY

            turn.call_tool("delegate_task", {"goal": CHILD_GOAL}, delegate, tool_call_id="call_sub")
            history += [{"role": "assistant", "content": None, "tool_calls": CALLS},
                        {"role": "tool", "tool_call_id": "call_ok", "content": results[0]},
                        {"role": "tool", "tool_call_id": "call_bad", "content": results[1]}]
            turn.call_llm({"model": "gpt-4o-mini", "messages": list(history), "tools": TOOLS},
                          lambda request: _answer(ANSWER))
            turn.complete(ANSWER)
            history.append({"role": "assistant", "content": ANSWER})
        with session.turn(FOLLOW_UP, conversation_history=list(history)) as turn:
            history.append({"role": "user", "content": FOLLOW_UP})
            turn.call_llm({"model": "gpt-4o-mini", "messages": list(history), "tools": TOOLS},
                          lambda request: _answer(LAST_ANSWER))
            turn.complete(LAST_ANSWER)
