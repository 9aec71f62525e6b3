"""Render recorded observer events as a readable tree: sessions, turns, provider attempts, tool
calls, approvals, human input and subagents, with durations, statuses and middleware rewrites."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..testing import Event


@dataclass
class Node:
    """One line of the tree and its children."""

    label: str
    children: list[Node] = field(default_factory=list)

    def add(self, label: str) -> Node:
        child = Node(label)
        self.children.append(child)
        return child


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _short(text: Any, limit: int = 60) -> str:
    text = " ".join(str(text or "").split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _trace(trace: Any, kind: str) -> str:
    if not trace:
        return ""
    parts = [f"{e.get('source', 'plugin')}" + (f": {e['reason']}" if e.get("reason") else "") for e in trace]
    return f"  [rewritten by {kind}: {'; '.join(parts)}]"


class TreeBuilder:
    """Folds events, in dispatch order, into a :class:`Node` tree."""

    def __init__(self) -> None:
        self.root = Node("")
        self.sessions: dict[str, Node] = {}
        self.turns: dict[str, tuple[Node, float]] = {}
        self.requests: dict[str, Node] = {}
        self.attempts: dict[tuple[str, int], tuple[Node, float]] = {}
        self.tools: dict[tuple[str, str], Node] = {}
        self.pending_subagents: dict[str, Node] = {}
        self.last_tool: dict[str, Node] = {}

    def session(self, session_id: str, parent: Node | None = None, label: str | None = None) -> Node:
        node = self.sessions.get(session_id)
        if node is None:
            holder = self.pending_subagents.pop(session_id, None) or parent or self.root
            node = holder.add(label or f"session {session_id[:12]}")
            self.sessions[session_id] = node
        return node

    def feed(self, event: Event) -> None:
        handler = getattr(self, "on_" + event.hook.removeprefix("on_"), None)
        if handler is not None:
            handler(event.payload, event.at)

    # ---------------------------------------------------------------- handlers

    def on_session_start(self, p: dict[str, Any], at: float) -> None:
        node = self.session(p["session_id"])
        node.label += f"  model={p.get('model')} platform={p.get('platform')}"

    def on_pre_llm_call(self, p: dict[str, Any], at: float) -> None:
        parent = self.session(p["session_id"])
        n = sum(1 for c in parent.children if c.label.startswith("turn"))
        self.turns[p["turn_id"]] = (parent.add(f"turn {n + 1} {_short(p.get('user_message'))}"), at)

    def on_pre_api_request(self, p: dict[str, Any], at: float) -> None:
        turn, _ = self.turns.get(p["turn_id"], (self.session(p["session_id"]), at))
        request = self.requests.get(p["api_request_id"])
        if request is None:
            request = self.requests[p["api_request_id"]] = turn.add(f"llm call #{p.get('api_call_count')}")
        attempt = request.add(f"attempt {p.get('retry_count', 0) + 1}  {p.get('message_count')} messages, "
                              f"{p.get('tool_count')} tools{_trace(p.get('middleware_trace'), 'llm_request')}")
        self.attempts[(p["api_request_id"], p.get("retry_count", 0))] = (attempt, at)

    def on_post_api_request(self, p: dict[str, Any], at: float) -> None:
        node = self.attempts.get((p["api_request_id"], p.get("retry_count", 0)))
        if node is not None:
            usage = p.get("usage") or {}
            node[0].label += (f"  ok  finish={p.get('finish_reason')}  tokens in {usage.get('prompt_tokens', 0)}"
                              f" / out {usage.get('output_tokens', 0)}  {_ms(p.get('api_duration', 0.0))}")

    def on_api_request_error(self, p: dict[str, Any], at: float) -> None:
        node = self.attempts.get((p["api_request_id"], p.get("retry_count", 0)))
        if node is not None:
            node[0].label += (f"  ERROR {p.get('status_code') or ''} {p.get('reason') or p['error'].get('type')}"
                              f"{' (will retry)' if p.get('retryable') else ''}  {_ms(p.get('api_duration', 0.0))}")

    def on_pre_tool_call(self, p: dict[str, Any], at: float) -> None:
        self._tool(p)

    def _tool(self, p: dict[str, Any]) -> Node:
        key = (p["turn_id"], p["tool_call_id"])
        node = self.tools.get(key)
        if node is None:
            turn, _ = self.turns.get(p["turn_id"], (self.session(p["session_id"]), 0.0))
            names = ", ".join(sorted(p.get("args") or {}))
            node = self.tools[key] = turn.add(f"tool {p['tool_name']}({names})"
                                              f"{_trace(p.get('middleware_trace'), 'tool_request')}")
            self.last_tool[p["session_id"]] = node
        return node

    def on_post_tool_call(self, p: dict[str, Any], at: float) -> None:
        node = self._tool(p)
        status = p.get("status")
        if status == "ok":
            node.label += f"  ok  {p.get('duration_ms')} ms"
        else:
            node.label += f"  {str(status).upper()} ({p.get('error_type')}): {_short(p.get('error_message'))}"

    def on_pre_approval_request(self, p: dict[str, Any], at: float) -> None:
        holder = self.tools.get((p.get("turn_id", ""), p.get("tool_call_id", ""))) or self.root
        self.last_tool[p.get("session_id") or ""] = holder.add(f"approval {_short(p.get('command'), 40)}")

    def on_post_approval_response(self, p: dict[str, Any], at: float) -> None:
        node = self.last_tool.get(p.get("session_id") or "")
        if node is not None and node.label.startswith("approval"):
            node.label += f"  -> {p.get('choice')}"

    def on_human_input_request(self, p: dict[str, Any], at: float) -> None:
        holder = self.last_tool.get(p.get("session_id") or "") or self.root
        holder.add(f"human input ({p.get('kind')}) {_short(p.get('prompt'), 40)}")

    def on_human_input_resolved(self, p: dict[str, Any], at: float) -> None:
        holder = self.last_tool.get(p.get("session_id") or "") or self.root
        if holder.children and holder.children[-1].label.startswith("human input"):
            holder.children[-1].label += f"  -> {p.get('outcome')}"

    def on_subagent_start(self, p: dict[str, Any], at: float) -> None:
        turn, _ = self.turns.get(p["parent_turn_id"], (self.root, 0.0))
        holder = self.last_tool.get(p["parent_session_id"]) or turn
        self.pending_subagents[p["child_session_id"]] = holder.add(
            f"subagent {p.get('child_role')!s} {_short(p.get('child_goal'), 40)}")

    def on_subagent_stop(self, p: dict[str, Any], at: float) -> None:
        node = self.sessions.get(p["child_session_id"])
        if node is not None:
            node.label += f"  -> {p.get('child_status')} in {p.get('duration_ms')} ms, " \
                          f"{len(p.get('tool_call_history') or [])} tool calls"

    def on_post_llm_call(self, p: dict[str, Any], at: float) -> None:
        turn, _ = self.turns.get(p["turn_id"], (self.root, 0.0))
        turn.add(f"answer {_short(p.get('assistant_response'), 70)}")

    def on_session_end(self, p: dict[str, Any], at: float) -> None:
        turn = self.turns.get(p["turn_id"])
        if turn is not None:
            state = "completed" if p.get("completed") else "INTERRUPTED" if p.get("interrupted") else \
                f"ended ({p.get('turn_exit_reason')})"
            turn[0].label += f"  {state}  {_ms(at - turn[1])}"


def render(events: Iterable[Event]) -> str:
    """The tree of ``events`` as text, one node per line."""
    builder = TreeBuilder()
    for event in events:
        builder.feed(event)
    lines: list[str] = []

    def walk(node: Node, prefix: str) -> None:
        for i, child in enumerate(node.children):
            last = i == len(node.children) - 1
            lines.append(f"{prefix}{'└─ ' if last else '├─ '}{child.label}")
            walk(child, prefix + ("   " if last else "│  "))

    for top in builder.root.children:
        lines.append(top.label)
        walk(top, "")
    return "\n".join(lines)
