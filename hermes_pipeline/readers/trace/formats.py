"""ATOF JSON Lines and ATIF trajectory files → :class:`~hermes_pipeline.readers.trace.model.TraceNode` trees.

- ATOF (spec 04 §2): starts and ends are paired by ``uuid`` and nested by ``parent_uuid``; timestamps
  are normalised to microseconds before ordering (FMT-14, FMT-15); a start without an end is shown as
  ``open``. Durations come from ``hermes.duration_ms`` when the hook reported one, else from the
  timestamps.
- ATIF (spec 04 §3): user steps open turns; agent steps are LLM calls with their token metrics and
  failed attempts; tool calls are matched to their observation results (status, ``duration_ms``);
  ``subagent_trajectory_ref`` results are resolved to the embedded trajectories. ATIF has no LLM
  start times, so an LLM step's duration is approximated (``~``) from the previous step's time and the
  tool time in between.

:func:`load_trace` detects the format from the content; problems raise
:class:`~hermes_pipeline.readers.trace.model.TraceFileError` with a one-line message.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...export.ids import parse_timestamp_us
from ..files import MAX_FILE_BYTES, InputFileError, parse_json, read_limited
from ..shapes import check_atif, check_atof_event
from .model import WORK_KINDS, Trace, TraceFileError, TraceNode, as_int, get, mapping, short


def load_trace(path: Path, *, limit: int = MAX_FILE_BYTES) -> Trace:
    """Read ``path`` (a regular file of at most ``limit`` bytes) and build its tree; :class:`TraceFileError`
    with a one-line reason naming the file (and the line and field, where there is one) otherwise."""
    try:
        data = read_limited(path, limit)
    except InputFileError as exc:
        raise TraceFileError(str(exc)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceFileError(f"{path}: not UTF-8 text; expected ATOF JSON Lines or an ATIF trajectory") from None
    if not text.strip():
        raise TraceFileError(f"{path}: is empty; expected ATOF JSON Lines or an ATIF trajectory")
    neither = f"{path}: neither ATOF events (JSON Lines) nor an ATIF trajectory (JSON)"
    try:
        whole = parse_json(text, path)
    except InputFileError as exc:
        if exc.field is not None:  # JSON, but nested too deep: say so, not "neither format"
            raise TraceFileError(str(exc)) from None
        whole = None
    if isinstance(whole, dict) and str(whole.get("schema_version", "")).startswith("ATIF"):
        try:
            check_atif(whole, path)
            return _atif_trace(path, whole)
        except InputFileError as exc:
            raise TraceFileError(f"{path}: malformed ATIF trajectory: field {exc.field}: {exc.reason}") from None
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
            raise TraceFileError(f"{path}: malformed ATIF trajectory ({type(exc).__name__})") from None
    events = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            event = parse_json(line, path, line=number)
        except InputFileError as exc:
            if exc.field is not None:
                raise TraceFileError(str(exc)) from None
            raise TraceFileError(f"{neither}: line {number} is not JSON") from None
        if not isinstance(event, dict) or event.get("kind") not in ("scope", "mark") or "uuid" not in event:
            raise TraceFileError(f"{neither}: line {number} is not an ATOF event")
        try:
            check_atof_event(event, path)
        except InputFileError as exc:
            raise TraceFileError(f"{path}: line {number}: field {exc.field}: {exc.reason}") from None
        major = str(event.get("atof_version", "0")).split(".", 1)[0]
        if major != "0":  # FMT-22: any 0.Y is ATOF 0; an unknown major fails fast
            raise TraceFileError(f"{path}: line {number}: ATOF version {event.get('atof_version')!r} is not "
                                 "supported (this reader knows ATOF 0.x)")
        try:
            event["_ts"] = parse_timestamp_us(event.get("timestamp"))  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            raise TraceFileError(f"{path}: line {number}: invalid ATOF timestamp") from None
        events.append(event)
    return _atof_trace(path, events)


# ------------------------------------------------------------------------------------------ ATOF


def _status(end: Mapping[str, Any] | None) -> str | None:
    if end is None:
        return "open"
    end_meta = end.get("metadata") or {}
    tool_status = end_meta.get("hermes.tool.status")
    if tool_status:
        return str(tool_status)
    if end_meta.get("otel.status_code") == "ERROR":
        return "cancelled" if end_meta.get("error.type") == "cancelled" else "error"
    if end_meta.get("otel.status_code") == "OK":
        return "ok"
    return None


def _atof_node(start: Mapping[str, Any] | None, end: Mapping[str, Any] | None) -> TraceNode:
    first = start or end or {}
    end_meta = get(end, "metadata") or {}
    meta = {**(get(start, "metadata") or {}), **end_meta}
    data = get(start, "data") or {}
    end_data = get(end, "data") or {}
    name, category = first.get("name", "?"), first.get("category")
    status = _status(end)
    details = []
    if name == "hermes.session" or category == "agent":
        kind = "session"
        label = f"session {meta.get('hermes.session_id', '?')}"
        if meta.get("hermes.scope_role") == "subagent":
            kind = "subagent"
            label = f"subagent {meta.get('hermes.session_id', '?')} role={data.get('child_role', '?')}"
            child_status = end_data.get("child_status")
            if child_status:
                status = "ok" if child_status == "completed" else str(child_status)
        if meta.get("hermes.session.segment"):
            details.append(f"segment {meta['hermes.session.segment']} ({meta.get('hermes.session.segment_reason')})")
        for key in ("model", "platform"):
            if data.get(key):
                details.append(f"{key}={data[key]}")
        if end is not None and status != "ok" and end_data.get("reason"):
            details.append(f"reason={end_data['reason']}")
    elif name == "agent.run":
        kind, label = "turn", f"turn {short(data.get('user_message'))}"
        if status == "error" and end_data.get("interrupted"):
            status = "cancelled"
    elif category == "llm":
        kind = "llm"
        model = get(get(end, "category_profile"), "model_name") or \
            get(get(start, "category_profile"), "model_name") or "?"
        label = f"llm {model}" + (f" [{meta['hermes.api_request_id']}]" if meta.get("hermes.api_request_id") else "")
        if end_data.get("finish_reason"):
            details.append(f"finish={end_data['finish_reason']}")
        error = end_data.get("error") if isinstance(end_data.get("error"), Mapping) else None
        if error is not None or end_meta.get("error.type"):
            details.append(" ".join(str(x) for x in (end_meta.get("error.type"), get(error, "status_code")) if x))
    elif category == "tool":
        kind = "tool"
        call_id = (first.get("category_profile") or {}).get("tool_call_id")
        label = f"tool {name}" + (f" [{call_id}]" if call_id else "")
        if end_meta.get("hermes.tool.error_type"):
            details.append(str(end_meta["hermes.tool.error_type"]))
    else:
        kind, label = "scope", str(name)
    if end_meta.get("hermes.close_reason") in ("shutdown", "orphan"):
        details.append(f"closed at {end_meta['hermes.close_reason']}")
    node = TraceNode(kind, label, status=status, detail="  ".join(details))
    usage = end_data.get("usage") if isinstance(end_data.get("usage"), Mapping) else None
    if usage is not None:
        node.tokens_in, node.tokens_out = as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens"))
    reported = end_meta.get("hermes.duration_ms")
    if isinstance(reported, int | float) and not isinstance(reported, bool) and kind in WORK_KINDS:
        node.duration_ms = float(reported)
    elif start is not None and end is not None:
        node.duration_ms = (end["_ts"] - start["_ts"]) / 1000
    return node


def _mark_node(event: Mapping[str, Any]) -> TraceNode:
    data = mapping(event.get("data"))
    name = str(event.get("name", "?")).removeprefix("hermes.")
    bits = [f"{k}={data[k]}" for k in ("surface", "choice", "outcome", "kind", "rotated") if data.get(k) is not None]
    if data.get("command"):
        bits.append(short(data["command"], 32))
    status = "blocked" if data.get("outcome") in ("denied", "deny") else None
    return TraceNode("mark", f"· {name}", status=status, detail="  ".join(bits))


def _atof_trace(path: Path, events: list[dict[str, Any]]) -> Trace:
    pairs: dict[str, dict[str, Any]] = {}
    marks: list[dict[str, Any]] = []
    for event in events:
        if event["kind"] == "mark":
            marks.append(event)
        else:
            pairs.setdefault(event["uuid"], {})[str(event.get("scope_category"))] = event
    nodes: dict[str, tuple[int, str | None, TraceNode]] = {}
    for uuid, pair in pairs.items():
        first = pair.get("start") or pair.get("end")
        assert first is not None
        nodes[uuid] = (first["_ts"], first.get("parent_uuid"), _atof_node(pair.get("start"), pair.get("end")))
    for mark in marks:
        nodes[mark["uuid"]] = (mark["_ts"], mark.get("parent_uuid"), _mark_node(mark))
    roots: list[tuple[int, TraceNode]] = []
    children: dict[str, list[tuple[int, TraceNode]]] = {}
    for ts, parent, node in nodes.values():
        if parent is not None and parent in pairs:
            children.setdefault(parent, []).append((ts, node))
        else:
            roots.append((ts, node))
    for uuid, kids in children.items():
        kids.sort(key=lambda item: item[0])
        nodes[uuid][2].children = [node for _, node in kids]
    roots.sort(key=lambda item: item[0])
    summary = f"ATOF {path}: {len(events)} events, {len(pairs)} scopes, {len(roots)} root(s)"
    return Trace("ATOF", path, summary, [node for _, node in roots])


# ---------------------------------------------------------------------------------------------- ATIF


def _ts(step: Mapping[str, Any]) -> int | None:
    try:
        return parse_timestamp_us(step["timestamp"]) if "timestamp" in step else None
    except (TypeError, ValueError):
        return None


def _atif_node(doc: Mapping[str, Any], label: str = "trajectory") -> TraceNode:
    agent = doc.get("agent") or {}
    hermes = get(doc.get("extra"), "hermes") or {}
    details = [f"agent={agent.get('name', '?')}", f"model={agent.get('model_name', '?')}"]
    if hermes.get("session_id"):
        details.append(f"session={hermes['session_id']}")
    subagent = hermes.get("subagent") or {}
    status = None
    if subagent.get("status"):
        status = "ok" if subagent["status"] == "completed" else str(subagent["status"])
    if doc.get("notes"):
        details.append(str(doc["notes"]))
        status = status or "partial"
    role = f" role={subagent['role']}" if subagent.get("role") else ""
    root = TraceNode("subagent" if label == "subagent" else "trajectory",
                     f"{label} {doc.get('trajectory_id') or doc.get('session_id', '?')}{role}", status=status,
                     detail="  ".join(details))
    embedded = {t.get("trajectory_id"): t for t in doc.get("subagent_trajectories") or () if isinstance(t, Mapping)}
    used: set[Any] = set()

    def subagents(result: Mapping[str, Any]) -> list[TraceNode]:
        out = []
        for ref in result.get("subagent_trajectory_ref") or ():
            child = embedded.get(get(ref, "trajectory_id"))
            if child is not None and id(child) not in used:
                used.add(id(child))
                out.append(_atif_node(child, "subagent"))
            elif child is None:
                target = get(ref, "trajectory_id") or get(ref, "trajectory_path")
                out.append(TraceNode("mark", f"· subagent ref {target}", status="error", detail="unresolved"))
        return out

    turn: TraceNode | None = None
    turn_start: int | None = None
    previous: int | None = None
    tool_ms = 0.0
    for step in doc.get("steps") or ():
        ts = _ts(step)
        source = step.get("source")
        if source == "user":
            turn = TraceNode("turn", f"turn {short(step.get('message'))}")
            root.children.append(turn)
            turn_start = ts
        elif source == "system":
            root.children.append(TraceNode("step", f"system {short(step.get('message'))}"))
        else:
            node, tool_ms_step = _agent_step(step, subagents)
            if node.kind == "llm" and ts is not None and previous is not None:
                node.duration_ms, node.approx = max((ts - previous) / 1000 - tool_ms, 0.0), True
            (turn or root).children.append(node)
            tool_ms = tool_ms_step
            if turn is not None and ts is not None and turn_start is not None:
                turn.duration_ms, turn.approx = (ts - turn_start) / 1000 + tool_ms, True
        previous = ts if ts is not None else previous
        if source != "agent":
            tool_ms = 0.0
    for trajectory in embedded.values():
        if id(trajectory) not in used:
            root.children.append(_atif_node(trajectory, "subagent"))
    return root


def _agent_step(step: Mapping[str, Any], subagents: Any) -> tuple[TraceNode, float]:
    hermes = get(step.get("extra"), "hermes") or {}
    metrics = mapping(step.get("metrics"))
    if step.get("llm_call_count") or metrics:
        label = f"llm {step.get('model_name', '?')}" + (f" [{hermes['api_request_id']}]"
                                                        if hermes.get("api_request_id") else "")
        node = TraceNode("llm", label, status="ok",
                         detail=f"finish={hermes['finish_reason']}" if hermes.get("finish_reason") else "",
                         tokens_in=as_int(metrics.get("prompt_tokens")),
                         tokens_out=as_int(metrics.get("completion_tokens")))
    else:
        node = TraceNode("step", "tool calls without an LLM step" if hermes.get("synthetic") else "agent step")
    for failed in hermes.get("failed_attempts") or ():
        bits = [str(x) for x in (get(failed, "error_type"), get(failed, "status_code")) if x is not None]
        node.children.append(TraceNode("attempt", f"attempt {get(failed, 'attempt') or '?'}", status="error",
                                       detail=" ".join(bits)))
    results = [r for r in (get(step.get("observation"), "results") or ()) if isinstance(r, Mapping)]
    by_call = {r["source_call_id"]: r for r in results if r.get("source_call_id")}
    used: set[int] = set()
    tool_ms = 0.0
    for call in step.get("tool_calls") or ():
        result = by_call.get(call.get("tool_call_id"))
        if result is not None:
            used.add(id(result))
        tool = _tool_node(f"tool {call.get('function_name', '?')} [{call.get('tool_call_id')}]", result, subagents)
        tool_ms += tool.duration_ms or 0.0
        node.children.append(tool)
    for result in results:
        if id(result) in used:
            continue
        if get(result.get("extra"), "hermes"):
            call_id = result.get("source_call_id")
            tool = _tool_node(f"tool result [{call_id}]" if call_id else "tool result (unmatched call)", result,
                              subagents)
            tool_ms += tool.duration_ms or 0.0
            node.children.append(tool)
        else:
            node.children.extend(subagents(result))
    return node, tool_ms


def _tool_node(label: str, result: Mapping[str, Any] | None, subagents: Any) -> TraceNode:
    if result is None:
        return TraceNode("tool", label, status="open", detail="no result")
    hermes = get(result.get("extra"), "hermes") or {}
    duration = hermes.get("duration_ms")
    node = TraceNode("tool", label, status=hermes.get("status"),
                     duration_ms=float(duration) if isinstance(duration, int | float) else None)
    node.children.extend(subagents(result))
    return node


def _atif_trace(path: Path, doc: Mapping[str, Any]) -> Trace:
    root = _atif_node(doc)
    steps = len(doc.get("steps") or ())
    nested = sum(1 for node in root.walk() if node.kind == "subagent")
    summary = f"ATIF {path}: {doc.get('schema_version')}, {steps} steps, {nested} embedded subagent trajectories"
    return Trace("ATIF", path, summary, [root])
