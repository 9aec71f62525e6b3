"""The reference agent: a small, real agent loop driving the host instrumentation API.

It talks to any OpenAI-compatible chat-completions endpoint (the demo uses the scripted local
model), runs the model's tool calls with real tools, asks for approval where a tool needs it, and
delegates to a child agent through the ``delegate`` tool.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..host import Host, Session, Turn
from ..host.facts import tool_calls_of
from .openai_client import ChatCompletionsClient
from .tools import Tool

Responder = Callable[[str, str], str]
"""Answers an approval prompt: ``(tool_name, command) -> choice`` (``once``, ``deny``, ...)."""


class ReferenceAgent:
    """An agent loop: model call → tool calls → model call ... → final answer.

    Args:
        host: the host instrumentation API to report through.
        client: the provider client.
        tools: the tools the model may call, by name.
        responder: answers approval prompts for tools that need approval (the "human").
        max_iterations: provider calls per turn before the turn ends with ``max_iterations``.
    """

    def __init__(self, host: Host, client: ChatCompletionsClient, tools: dict[str, Tool], *,
                 system_prompt: str = "You are a careful assistant working in a small workspace.",
                 responder: Responder | None = None, max_iterations: int = 6, max_retries: int = 2,
                 role: str = "assistant", context: dict[str, Any] | None = None) -> None:
        self.host = host
        self.client = client
        self.tools = dict(tools)
        self.system_prompt = system_prompt
        self.responder = responder or (lambda tool, command: "deny")
        self.max_iterations = max_iterations
        self.max_retries = max_retries
        self.role = role
        self.history: list[dict[str, Any]] = []
        self.context = context
        """A context snapshot passed with every turn start (recorded by the trajectory store)."""

    def run_turn(self, session: Session, user_message: str) -> str:
        """Run one user turn to its final answer and return the text shown to the user."""
        with session.turn(user_message, conversation_history=self.history, context=self.context) as turn:
            messages = [{"role": "system", "content": self.system_prompt}, *self.history,
                        {"role": "user", "content": turn.user_content}]
            for _ in range(self.max_iterations):
                response = turn.call_llm(self._request(messages), self._provider, max_retries=self.max_retries)
                message = response["choices"][0]["message"]
                calls = tool_calls_of(response)
                if not calls:
                    answer = turn.complete(message.get("content") or "")
                    self.history += [{"role": "user", "content": user_message},
                                     {"role": "assistant", "content": answer}]
                    return answer
                messages.append({"role": "assistant", "content": message.get("content"),
                                 "tool_calls": message.get("tool_calls")})
                for call in calls:
                    messages.append({"role": "tool", "tool_call_id": call["id"],
                                     "content": self._run_tool(turn, call)})
            turn.end(exit_reason="max_iterations")
            return ""

    # ---------------------------------------------------------------- internals

    def _request(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.host.model, "messages": list(messages), "max_tokens": 512}
        definitions = [t.definition() for t in self.tools.values()]
        if "delegate" not in self.tools and self.role == "assistant":
            definitions.append(DELEGATE_DEFINITION)
        request["tools"] = definitions
        return request

    def _provider(self, request: dict[str, Any]) -> Any:
        return self.client.create(**request)

    def _run_tool(self, turn: Turn, call: dict[str, Any]) -> str:
        name = call["name"]
        if name == "delegate" and self.role == "assistant":
            return turn.call_tool(name, call["arguments"], lambda **a: self._delegate(turn, **a),
                                  tool_call_id=call["id"])
        tool = self.tools.get(name)
        if tool is None:
            return turn.call_tool(name, call["arguments"], _unknown_tool(name), tool_call_id=call["id"],
                                  deny=f"unknown tool {name!r}")
        approve = self._approver(turn) if tool.needs_approval else None
        return turn.call_tool(name, call["arguments"], tool.fn, tool_call_id=call["id"], approve=approve)

    def _approver(self, turn: Turn) -> Callable[[str, dict[str, Any]], bool]:
        def approve(tool_name: str, args: dict[str, Any]) -> bool:
            command = f"{tool_name} {json.dumps(args, ensure_ascii=False)}"
            with turn.approval(command, description=f"{tool_name} changes the workspace",
                               pattern_key="workspace_write", session_key=turn.session.session_id) as approval:
                with turn.human_input("approval", f"Allow {command}?",
                                      session_key=turn.session.session_id) as wait:
                    choice = self.responder(tool_name, command)
                    wait.resolve("submitted")
                return approval.resolve(choice)

        return approve

    def _delegate(self, turn: Turn, goal: str = "", role: str = "reviewer", **_: Any) -> str:
        child = ReferenceAgent(self.host, self.client, self.tools, role=role,
                               system_prompt=f"You are a {role}. Complete the goal and report briefly.",
                               responder=self.responder, max_iterations=self.max_iterations)
        with turn.subagent(role=role, goal=goal) as run:
            summary = child.run_turn(run.session, goal)
            run.finish("completed", summary=summary)
        return summary


DELEGATE_DEFINITION: dict[str, Any] = {
    "type": "function",
    "function": {"name": "delegate", "description": "Ask a helper agent to do a task",
                 "parameters": {"type": "object", "properties": {"goal": {"type": "string"},
                                                                 "role": {"type": "string"}},
                                "required": ["goal"]}},
}


def _unknown_tool(name: str) -> Callable[..., Any]:
    def refuse(**_: Any) -> Any:
        raise LookupError(f"unknown tool {name!r}")

    return refuse
