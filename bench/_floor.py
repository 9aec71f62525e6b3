"""The floor row of ``bench_exporters.py``: the smallest honest pure-Python code for the same output.

It runs the benchmark's workload (sessions x turns x one LLM call + K tool calls) and writes what the
engine writes for it: one ATOF 0.1 JSONL line per scope start and end (the same keys, the same
``data`` / ``category_profile`` / ``metadata`` shapes, UUIDv7s, RFC 3339 timestamps, parents) through
one buffered file, and one indented ATIF v1.7 document per session (user and agent steps, tool
calls with their observations, token metrics, ``final_metrics``) written when the session ends.
Encoding is orjson, as in the engine.

What it leaves out, on purpose, is everything the engine does *besides* producing those bytes: no
hook contract, no plugin dispatch, no sanitizer or credential scrubber, no background thread and no
queue (it writes on the caller's thread, so its "added" time is its whole cost), no fault handling.
So the row answers "how far is the engine from the cost of the bytes themselves".
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

_SCHEMA = "hermes.observer.v1"
_ids = itertools.count(int.from_bytes(os.urandom(8), "big") >> 3)
_FIXED = ((int.from_bytes(os.urandom(2), "big") & 0xFFF) << 64) | (0x7 << 76) | (0b10 << 62)
_MASK62 = (1 << 62) - 1
_seconds: dict[int, str] = {}


def _uuid() -> str:
    value = ((time.time_ns() // 1_000_000) << 80) | _FIXED | (next(_ids) & _MASK62)
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _now() -> str:
    seconds, micros = divmod(time.time_ns() // 1000, 1_000_000)
    text = _seconds.get(seconds)
    if text is None:
        text = _seconds[seconds] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{text}.{micros:06d}Z"


def _line(kind: str, uuid: str, parent: str | None, ts: str, name: str, category: str,
          profile: Any, data: Any, metadata: dict[str, Any]) -> bytes:
    return orjson.dumps({"kind": "scope", "scope_category": kind, "atof_version": "0.1", "uuid": uuid,
                         "parent_uuid": parent, "timestamp": ts, "name": name, "attributes": [],
                         "category": category, "category_profile": profile, "data": data,
                         "data_schema": None, "metadata": metadata}) + b"\n"


def floor_run(sessions: int, turns: int, tools: int, directory: Path, request: dict[str, Any],
              response: dict[str, Any], user: str, args: dict[str, Any],
              tool: Callable[..., str], timed: Callable[[Callable[[], object]], object]) -> None:
    """Run the workload, writing ``events.jsonl`` and ``atif/atif-{uuid}.json`` under ``directory``."""
    (directory / "atif").mkdir(parents=True, exist_ok=True)
    message = response["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    usage = response["usage"]
    with open(directory / "events.jsonl", "wb", buffering=1 << 16) as out:
        write = out.write
        for index in range(sessions):
            session_id, session_uuid = f"session{index:024d}", _uuid()
            base = {"hermes.telemetry_schema_version": _SCHEMA, "hermes.session_id": session_id}
            write(_line("start", session_uuid, None, _now(), "hermes.session", "agent", None,
                        {"model": "bench-model", "platform": "cli"},
                        {**base, "hermes.platform": "cli", "hermes.span_kind": "session"}))
            steps: list[dict[str, Any]] = []
            prompt = completion = 0
            for turn_no in range(turns):
                turn_id, task_id, turn_uuid = f"turn_{turn_no:016x}", f"task_{index:016x}", _uuid()
                ids = {**base, "hermes.task_id": task_id, "hermes.turn_id": turn_id}
                ts = _now()
                write(_line("start", turn_uuid, session_uuid, ts, "agent.run", "function", None,
                            {"user_message": user, "is_first_turn": turn_no == 0},
                            {**ids, "hermes.platform": "cli", "hermes.span_kind": "agent.run"}))
                steps.append({"step_id": len(steps) + 1, "source": "user", "message": user, "timestamp": ts,
                              "extra": {"hermes": {"turn_id": turn_id, "task_id": task_id}}})
                api_id, llm_uuid = f"{turn_id}:api:1", _uuid()
                body = {"method": "POST", "body": request}
                write(_line("start", llm_uuid, turn_uuid, _now(), "llm.call", "llm", {"model_name": "bench-model"},
                            {"request": body, "messages_offset": 0},
                            {**ids, "hermes.api_request_id": api_id, "hermes.api_call_count": 1,
                             "hermes.provider": "bench", "hermes.api_mode": "chat_completions",
                             "hermes.base_url": "http://127.0.0.1/v1", "hermes.span_kind": "llm.call"}))
                reply = {"model": response["model"], "finish_reason": "tool_calls", "assistant_message": message,
                         "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                                   "prompt_tokens": usage["prompt_tokens"], "total_tokens": usage["total_tokens"]}}
                ts = _now()
                write(_line("end", llm_uuid, turn_uuid, ts, "llm.call", "llm", {"model_name": "bench-model"},
                            {"response": reply, "usage": {"input_tokens": usage["prompt_tokens"],
                                                          "output_tokens": usage["completion_tokens"]},
                             "finish_reason": "tool_calls"},
                            {**base, "hermes.api_request_id": api_id, "hermes.duration_ms": 0,
                             "otel.status_code": "OK"}))
                prompt, completion = prompt + usage["prompt_tokens"], completion + usage["completion_tokens"]
                step_calls: list[dict[str, Any]] = []
                results: list[dict[str, Any]] = []
                steps.append({"step_id": len(steps) + 1, "source": "agent", "message": message.get("content") or "",
                              "timestamp": ts, "model_name": "bench-model", "tool_calls": step_calls,
                              "observation": {"results": results},
                              "metrics": {"prompt_tokens": usage["prompt_tokens"],
                                          "completion_tokens": usage["completion_tokens"]},
                              "llm_call_count": 1,
                              "extra": {"ancestry": {"function_id": llm_uuid, "function_name": "llm.call",
                                                     "parent_id": turn_uuid, "parent_name": "agent.run"},
                                        "hermes": {"api_request_id": api_id, "turn_id": turn_id,
                                                   "finish_reason": "tool_calls", "llm_request": body,
                                                   "llm_response": reply}}})
                for k in range(tools):
                    call_id = calls[k]["id"] if k < len(calls) else f"call_{k}"

                    def tool_call() -> None:
                        tool_uuid = _uuid()
                        write(_line("start", tool_uuid, turn_uuid, _now(), "read_file", "tool",
                                    {"tool_call_id": call_id}, {"arguments": args},
                                    {**ids, "hermes.api_request_id": api_id, "hermes.span_kind": "tool.execute"}))
                        result = tool(**args)
                        write(_line("end", tool_uuid, turn_uuid, _now(), "read_file", "tool",
                                    {"tool_call_id": call_id}, {"result": result},
                                    {**base, "hermes.tool.status": "ok", "hermes.duration_ms": 0,
                                     "otel.status_code": "OK"}))
                        step_calls.append({"tool_call_id": call_id, "function_name": "read_file", "arguments": args,
                                           "extra": {"tool_scope_uuid": tool_uuid}})
                        results.append({"source_call_id": call_id, "content": result,
                                        "extra": {"hermes": {"status": "ok", "event_uuid": tool_uuid,
                                                             "duration_ms": 0}}})

                    timed(tool_call)
                write(_line("end", turn_uuid, session_uuid, _now(), "agent.run", "function", None,
                            {"final_response": "done", "completed": True, "interrupted": False},
                            {**base, "hermes.turn.status": "completed", "hermes.duration_ms": 0,
                             "otel.status_code": "OK"}))
            write(_line("end", session_uuid, None, _now(), "hermes.session", "agent", None,
                        {"status": "completed"}, {**base, "hermes.duration_ms": 0, "otel.status_code": "OK"}))
            document = {"schema_version": "ATIF-v1.7", "session_id": session_uuid, "trajectory_id": session_uuid,
                        "agent": {"name": "hermes", "version": "0.1.0", "model_name": "bench-model"},
                        "steps": steps,
                        "final_metrics": {"total_prompt_tokens": prompt, "total_completion_tokens": completion,
                                          "total_steps": len(steps)},
                        "extra": {"hermes": {"session_id": session_id, "platform": "cli", "content": "full",
                                             "llm_payloads": True}}}
            (directory / "atif" / f"atif-{session_uuid}.json").write_bytes(
                orjson.dumps(document, option=orjson.OPT_INDENT_2))
