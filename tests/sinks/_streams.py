"""Varied scope event streams for the writers' byte-equality tests, and their JSON form for fixtures.

:func:`build_stream` makes the events of a session as the tracker hands them to the sinks (starts before
ends, each end carrying its start), with what varies in real runs chosen by ``choose``: tool calls with and
without ids, arguments that are not JSON objects, names and texts that need escaping, parallel tools,
statuses, exit codes, errors, annotations, toolsets, approvals inside tools, a subagent delegated by a tool,
failed provider attempts, equal and out-of-order timestamps. ``choose`` is a hypothesis draw in the property
tests and a seeded ``random.Random`` choice for the checked-in fixtures (``tests/data/writer_golden``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hermes_pipeline.export.events import END, MARK, SCOPE, START, ScopeEvent

Choose = Callable[[Sequence[Any]], Any]

SCHEMA = {"hermes.telemetry_schema_version": "hermes.observer.v1"}
NAMES = ("read_file", "terminal", 'wë"ird\\name ✓')
ARGUMENTS = ('{"path": "notes.txt"}', "not json", "", "[1, 2]", '{"n": 1e5, "s": "a\\u00e9\\n"}', '{"deep": {"x": [1, {"y": null}]}}')
RESULTS: tuple[Any, ...] = ("contents", 'line "one"\nline two ✓', {"rows": [1, 2], "ok": True}, None, "")
TEXTS: tuple[Any, ...] = ("What do my notes say?", 'naïve "quoted" \\ text ✓\n', "")


class _Builder:
    def __init__(self, choose: Choose, base_us: int, session_id: str) -> None:
        self.choose = choose
        self.now = base_us
        self.count = 0
        self.events: list[ScopeEvent] = []
        self.session_id = session_id
        self.session = 0
        self.root = 0

    def tick(self) -> int:
        self.now += self.choose((0, 1, 13, 1_000, 1_000_001, -2))  # 0: equal timestamps; -2: out of order
        return self.now

    def uuid(self) -> int:
        self.count += 1
        return ((self.now // 1000) << 80) | (0x7 << 76) | (0b10 << 62) | (self.count * 7919)

    def meta(self, **extra: Any) -> dict[str, Any]:
        return {**SCHEMA, "hermes.session_id": self.session_id, **extra}

    def start(self, name: str, category: str, parent: int | None, *, data: Any = None, meta: dict[str, Any] | None = None,
              profile: dict[str, Any] | None = None, attributes: tuple[str, ...] = ()) -> ScopeEvent:
        ts = self.tick()
        uuid = self.uuid()
        if parent is None:
            self.session = self.root = uuid
        event = ScopeEvent(SCOPE, START, uuid, parent, ts, name, category, attributes, profile, data,
                           meta if meta is not None else self.meta(), self.session, self.root)
        self.events.append(event)
        return event

    def end(self, start: ScopeEvent, *, data: Any = None, meta: dict[str, Any] | None = None,
            profile: dict[str, Any] | None = None) -> ScopeEvent:
        event = ScopeEvent(SCOPE, END, start.uuid, start.parent_uuid, self.tick(), start.name, start.category,
                           start.attributes, profile if profile is not None else start.profile, data,
                           meta if meta is not None else self.meta(), self.session, self.root, start)
        self.events.append(event)
        return event

    def mark(self, name: str, parent: int, data: dict[str, Any]) -> None:
        ts = self.tick()
        self.events.append(ScopeEvent(MARK, None, self.uuid(), parent, ts, name, None, (), None, data, self.meta(),
                                      self.session, self.root))


def build_stream(choose: Choose, *, base_us: int = 1_788_257_700_000_000, session_id: str = "sess-1") -> list[ScopeEvent]:
    """The events of one session with ``choose``-varied turns, LLM calls and tool calls (see the module docstring)."""
    b = _Builder(choose, base_us, session_id)
    session = b.start("hermes.session", "agent", None, data={"model": "bench-model", "platform": "cli"},
                      meta=b.meta(**{"hermes.platform": "cli", "hermes.span_kind": "session"}))
    for t in range(choose((1, 2, 3))):
        turn_meta = {"hermes.task_id": f"task_{t}", "hermes.turn_id": f"turn_{t}"}
        turn = b.start("agent.run", "function", session.uuid, data={"user_message": choose(TEXTS), "is_first_turn": t == 0},
                       meta=b.meta(**turn_meta, **{"hermes.span_kind": "agent.run"}))
        _turn(b, choose, turn, turn_meta, t)
        b.end(turn, data={"final_response": choose(("done", None, 'all "set" ✓'))},
              meta=b.meta(**turn_meta, **{"otel.status_code": choose(("OK", "ERROR"))}))
    b.end(session, data={"end_reason": "completed"}, meta=b.meta(**{"hermes.close_reason": "completed"}))
    return b.events


def _turn(b: _Builder, choose: Choose, turn: ScopeEvent, turn_meta: dict[str, Any], t: int) -> None:
    request_id = f"turn_{t}:api:1"
    llm_meta = b.meta(**turn_meta, **{"hermes.api_request_id": request_id, "hermes.api_mode": "chat_completions",
                                      "hermes.span_kind": "llm.call"})
    request = {"method": "POST", "body": {"model": "bench-model", "messages": [{"role": "user", "content": choose(TEXTS)}]}}
    if choose((False, True)):  # a failed attempt of the same request first
        failed = b.start("llm.call", "llm", turn.uuid, data={"request": request}, meta=llm_meta,
                         profile={"model_name": "bench-model"})
        b.end(failed, data={"error": {"type": "RateLimitError", "status_code": 429, "retry_count": 0,
                                      "message": "slow down"}},
              meta=b.meta(**{"otel.status_code": "ERROR", "error.type": "RateLimitError"}))
    llm = b.start("llm.call", "llm", turn.uuid, data={"request": request}, meta=llm_meta, profile={"model_name": "bench-model"})
    calls = []
    for k in range(choose((0, 1, 2, 3))):
        cid = choose((f"call_{t}_{k}", f"call_{t}_{k}", None))
        calls.append((cid, choose(NAMES), choose(ARGUMENTS)))
    message: dict[str, Any] = {"role": "assistant", "content": choose(("", "Let me look.", None))}
    if calls:
        message["tool_calls"] = [{**({"id": cid} if cid else {}), "type": "function",
                                  "function": {"name": name, "arguments": args}} for cid, name, args in calls]
    b.end(llm, data={"response": {"model": "bench-model", "finish_reason": "tool_calls" if calls else "stop",
                                  "assistant_message": message},
                     "usage": {"input_tokens": choose((12, 0)), "output_tokens": 8}},
          meta=b.meta(**{"hermes.api_request_id": request_id, "otel.status_code": "OK"}))
    tools = list(calls) + ([(choose(("call_unknown", None)), choose(NAMES), "{}")] if choose((False, True)) else [])
    for cid, name, _ in tools:
        _tool(b, choose, turn, turn_meta, request_id, cid, name)


def _tool(b: _Builder, choose: Choose, turn: ScopeEvent, turn_meta: dict[str, Any], request_id: str, cid: str | None,
          name: str) -> None:
    profile: dict[str, Any] = {"tool_call_id": cid} if cid else {}
    start_meta = b.meta(**turn_meta, **{"hermes.api_request_id": request_id, "hermes.span_kind": "tool.execute"})
    if choose((False, True)):
        start_meta["hermes.toolset"] = choose(("file", "terminal"))
    tool = b.start(name, "tool", turn.uuid, data={"arguments": {"path": "notes.txt"}}, meta=start_meta,
                   profile=profile or None, attributes=choose(((), ("parallel",))))
    if choose((False, False, True)):
        b.mark("hermes.approval.request", tool.uuid, {"command": "rm -rf junk"})
        b.mark("hermes.approval.response", tool.uuid, {"choice": "once", "outcome": "approved", "decided_by": "user"})
    if choose((False, False, True)):  # a subagent delegated by this tool
        child = b.start("hermes.session", "agent", tool.uuid, data={"model": "child-model", "child_role": "worker"},
                        meta=b.meta(**{"hermes.span_kind": "session"}))
        run = b.start("agent.run", "function", child.uuid, data={"user_message": "sub task"},
                      meta=b.meta(**{"hermes.turn_id": "sub_turn"}))
        b.end(run, data={"final_response": "sub done"}, meta=b.meta(**{"otel.status_code": "OK"}))
        b.end(child, data={"child_status": "completed"}, meta=b.meta())
    end_meta = b.meta(**{"otel.status_code": choose(("OK", "OK", "ERROR"))})
    status = choose(("ok", "error", None))
    if status is not None:
        end_meta["hermes.tool.status"] = status
    exit_code = choose((None, None, 0, 2, True))
    if exit_code is not None:
        end_meta["process.exit.code"] = exit_code
    if choose((True, False)):
        end_meta["hermes.duration_ms"] = choose((0, 12))
    if end_meta["otel.status_code"] == "ERROR":
        end_meta["error.type"] = choose(("ToolError", "cancelled", ""))
    end_profile = dict(profile)
    if choose((False, True)):
        end_profile["tool_result_annotation"] = {"truncated": choose((True, False))}
    b.end(tool, data={"result": choose(RESULTS)}, meta=end_meta, profile=end_profile or None)


# ---------------------------------------------------------------------- the JSON form of a stream (fixtures)

_FIELDS = ("kind", "phase", "uuid", "parent_uuid", "timestamp_us", "name", "category", "profile", "data", "metadata",
           "session_uuid", "root_uuid")


def stream_json(events: list[ScopeEvent]) -> list[dict[str, Any]]:
    """``events`` as JSON-able objects; an end's start is the index of that start event."""
    index = {id(event): n for n, event in enumerate(events)}
    return [{**{f: getattr(e, f) for f in _FIELDS}, "attributes": list(e.attributes),
             "start": index[id(e.start)] if e.start is not None else None} for e in events]


def stream_from_json(items: list[dict[str, Any]]) -> list[ScopeEvent]:
    """The events of :func:`stream_json`'s output."""
    events: list[ScopeEvent] = []
    for item in items:
        start = events[item["start"]] if item["start"] is not None else None
        events.append(ScopeEvent(item["kind"], item["phase"], item["uuid"], item["parent_uuid"], item["timestamp_us"],
                                 item["name"], item["category"], tuple(item["attributes"]), item["profile"],
                                 item["data"], item["metadata"], item["session_uuid"], item["root_uuid"], start))
    return events
