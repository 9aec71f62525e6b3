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

The ATIF documents are assembled from the scope events themselves (:class:`_Trajectories`), as the
engine's ATIF sink does, so that each value is handled once.

``floor_run(..., obligations=OBLIGATIONS)`` is the second floor row: the same smallest code plus only
the four things the engine must do and the first floor skips, each done the cheapest honest way:
``"thread"``, the events are appended to a queue that one writer thread drains, encoding the lines and
assembling ATIF there; ``"hook"``, every scope event goes through one pluggy hook call (the hook
contract; one hookimpl) on its way to that queue; ``"scrub"``, the writer runs the engine's credential
scrubber (``redact_value``) once over each event's ``category_profile``, ``data`` and ``metadata``
before both outputs see it; ``"durable"``, each ATIF file is written as FMT-52 says (a temporary file in
the same directory, ``fsync``, rename over the target; on this kind of virtual disk a file's ``fsync`` and
rename cost a few hundred microseconds of system CPU, a few microseconds per tool call). Any subset with
``"thread"`` can be run (``bench/bench_floor.py`` adds them one at a time; ``bench_exporters.py`` also shows the
floor of the first three, the obliged floor as it stood before the fourth was counted). Still no sanitizer, scope
plugin, bounded queue, drop counter, deadline or fault handling, and no ``fsync`` of the directory (the engine's
own choice beyond FMT-52). It answers "what do the bytes plus the obligations cost": a measured floor
for the all-CPU target.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

import orjson
import pluggy

from hermes_pipeline.export.redaction import redact_value

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


Fields = tuple[Any, ...]
"""One scope event: ``(phase, uuid, parent, timestamp, name, category, profile, data, metadata)``."""


class _Trajectories:
    """One ATIF v1.7 document per session, built from its scope events and written when the session ends."""

    def __init__(self, directory: Path, durable: bool = False) -> None:
        self._directory = directory
        self._durable = durable  # FMT-52: a temporary file, fsync, rename over the target
        self._sessions: dict[str, dict[str, Any]] = {}  # session uuid -> its document being built
        self._turns: dict[str, tuple[dict[str, Any], str]] = {}  # turn uuid -> (document, turn id)
        self._starts: dict[str, Any] = {}  # open LLM / tool scope uuid -> its start's request / arguments
        self._agent: dict[str, dict[str, Any]] = {}  # turn uuid -> its latest agent step

    def add(self, phase: str, uuid: str, parent: str | None, ts: str, name: str, category: str, profile: Any,
            data: Any, metadata: dict[str, Any]) -> None:
        if category == "tool":
            if phase == "start":
                self._starts[uuid] = data["arguments"]
                return
            step = self._agent[parent]  # type: ignore[index]
            call_id = profile["tool_call_id"]
            step["tool_calls"].append({"tool_call_id": call_id, "function_name": name,
                                       "arguments": self._starts.pop(uuid), "extra": {"tool_scope_uuid": uuid}})
            step["observation"]["results"].append(
                {"source_call_id": call_id, "content": data["result"],
                 "extra": {"hermes": {"status": metadata["hermes.tool.status"], "event_uuid": uuid,
                                      "duration_ms": metadata["hermes.duration_ms"]}}})
        elif category == "llm":
            if phase == "start":
                self._starts[uuid] = data["request"]
                return
            document, turn_id = self._turns[parent]  # type: ignore[index]
            steps, usage, reply = document["steps"], data["usage"], data["response"]
            metrics = {"prompt_tokens": usage["input_tokens"], "completion_tokens": usage["output_tokens"]}
            step = self._agent[parent] = {  # type: ignore[index]
                "step_id": len(steps) + 1, "source": "agent",
                "message": reply["assistant_message"].get("content") or "", "timestamp": ts,
                "model_name": profile["model_name"], "tool_calls": [], "observation": {"results": []},
                "metrics": metrics, "llm_call_count": 1,
                "extra": {"ancestry": {"function_id": uuid, "function_name": name, "parent_id": parent,
                                       "parent_name": "agent.run"},
                          "hermes": {"api_request_id": metadata["hermes.api_request_id"], "turn_id": turn_id,
                                     "finish_reason": data["finish_reason"], "llm_request": self._starts.pop(uuid),
                                     "llm_response": reply}}}
            steps.append(step)
            totals = document["final_metrics"]
            totals["total_prompt_tokens"] += metrics["prompt_tokens"]
            totals["total_completion_tokens"] += metrics["completion_tokens"]
        elif category == "function":
            if phase == "start":
                document = self._sessions[parent]  # type: ignore[index]
                turn_id = metadata["hermes.turn_id"]
                self._turns[uuid] = (document, turn_id)
                steps = document["steps"]
                steps.append({"step_id": len(steps) + 1, "source": "user", "message": data["user_message"],
                              "timestamp": ts,
                              "extra": {"hermes": {"turn_id": turn_id, "task_id": metadata["hermes.task_id"]}}})
            else:
                del self._turns[uuid]
                self._agent.pop(uuid, None)
        elif phase == "start":  # the session
            self._sessions[uuid] = {
                "schema_version": "ATIF-v1.7", "session_id": uuid, "trajectory_id": uuid,
                "agent": {"name": "hermes", "version": "0.1.0", "model_name": data["model"]}, "steps": [],
                "final_metrics": {"total_prompt_tokens": 0, "total_completion_tokens": 0, "total_steps": 0},
                "extra": {"hermes": {"session_id": metadata["hermes.session_id"], "platform": data["platform"],
                                     "content": "full", "llm_payloads": True}}}
        else:
            document = self._sessions.pop(uuid)
            document["final_metrics"]["total_steps"] = len(document["steps"])
            path = self._directory / f"atif-{uuid}.json"
            content = orjson.dumps(document, option=orjson.OPT_INDENT_2)
            if self._durable:
                _write_durably(path, content)
            else:
                path.write_bytes(content)


def _write_durably(path: Path, content: bytes) -> None:
    """FMT-52 the cheapest honest way: a temporary file in the same directory (mode ``0600``), the bytes, ``fsync``,
    rename over the target. Nothing more: no directory ``fsync`` (FMT-52 does not ask for it), no clean-up."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)


OBLIGATIONS: tuple[str, ...] = ("thread", "hook", "scrub", "durable")
"""What the obliged floor adds to the inline one (see the module docstring)."""

_hookspec = pluggy.HookspecMarker("floor")
_hookimpl = pluggy.HookimplMarker("floor")


class _Spec:
    @_hookspec
    def scope_event(self, fields: Fields) -> None:
        """One scope event (see :data:`Fields`)."""


class DequeWriter:
    """A floor's writer thread: its hookimpls append to ``self._queue`` (and notify ``self._wake`` every 256
    records), the thread waits for records (a 50 ms poll otherwise) and hands the ready ones to
    :meth:`_write_ready`. Subclasses set their own fields, then call ``super().__init__``, which starts it."""

    def __init__(self, name: str) -> None:
        self._queue: deque[Any] = deque()
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._drain, name=name, daemon=True)
        self._thread.start()

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join()

    def _drain(self) -> None:
        queue = self._queue
        while True:
            with self._wake:
                while not queue and not self._closed:
                    self._wake.wait(0.05)
                if not queue and self._closed:
                    return
            self._write_ready(queue)

    def _write_ready(self, queue: deque[Any]) -> None:
        """Write every record of ``queue`` (popping them)."""
        raise NotImplementedError


class _ObligedWriter(DequeWriter):
    """The obliged floor's hookimpl and writer thread: a deque, a wake-up per batch, the scrubber, the outputs."""

    def __init__(self, out: Any, trajectories: _Trajectories, scrub: bool) -> None:
        self._out, self._trajectories, self._scrub = out, trajectories, scrub
        super().__init__("floor-writer")

    @_hookimpl
    def scope_event(self, fields: Fields) -> None:
        self._queue.append(fields)
        if len(self._queue) >= 256:
            with self._wake:
                self._wake.notify()

    def _write_ready(self, queue: deque[Any]) -> None:
        write, assemble, scrub = self._out.write, self._trajectories.add, self._scrub
        while queue:
            phase, uuid, parent, ts, name, category, profile, data, metadata = queue.popleft()
            if scrub:
                profile, data, metadata = redact_value(profile), redact_value(data), redact_value(metadata)
            write(_line(phase, uuid, parent, ts, name, category, profile, data, metadata))
            assemble(phase, uuid, parent, ts, name, category, profile, data, metadata)


Turn = tuple[str, list[tuple[dict[str, Any], dict[str, Any], list[tuple[str, str, dict[str, Any], str]]]]]
"""One turn: ``(user message, [(request, response, [(call id, tool name, arguments, recorded result)]) per LLM
call])``."""


def floor_run(sessions: int, turns: int, tools: int, directory: Path, request: dict[str, Any],
              response: dict[str, Any], user: str, args: dict[str, Any],
              tool: Callable[..., str], timed: Callable[[Callable[[], object]], object],
              obligations: Collection[str] = ()) -> None:
    """Run the workload, writing ``events.jsonl`` and ``atif/atif-{uuid}.json`` under ``directory``
    (``obligations``: a subset of :data:`OBLIGATIONS` holding ``"thread"``; see the module docstring): each
    turn one LLM call (``request`` → ``response``) and ``tools`` calls of ``tool(**args)``."""
    calls = response["choices"][0]["message"].get("tool_calls") or []
    tool_calls = [(calls[k]["id"] if k < len(calls) else f"call_{k}", "read_file", args, "") for k in range(tools)]
    session: list[Turn] = [(user, [(request, response, tool_calls)])] * turns
    _floor(itertools.repeat(session, sessions), directory, timed, obligations, "bench-model", tool, "done")


def floor_replay(sessions: list[list[Turn]], directory: Path, timed: Callable[[Callable[[], object]], object],
                 obligations: Collection[str] = (), model: str = "bench-model") -> None:
    """:func:`floor_run` for recorded sessions (``bench_real_payloads.py``): each session a list of turns, each
    turn its LLM calls (request, response) and the tool calls of each response with their recorded results
    (``lambda: result``, timed with ``timed``)."""
    _floor(sessions, directory, timed, obligations, model, None, "")


def _floor(sessions: Iterable[list[Turn]], directory: Path, timed: Callable[[Callable[[], object]], object],
           obligations: Collection[str], model: str, tool: Callable[..., str] | None, final_default: str) -> None:
    """The one floor loop of :func:`floor_run` and :func:`floor_replay`: a tool call's result is
    ``tool(**arguments)`` when ``tool`` is given, else the recorded one; a turn's final response is its last
    LLM reply's text, else ``final_default``."""
    unknown = set(obligations) - set(OBLIGATIONS)
    if unknown or (obligations and "thread" not in obligations):
        raise ValueError(f"obligations must be a subset of {OBLIGATIONS} holding 'thread', not {sorted(obligations)}")
    (directory / "atif").mkdir(parents=True, exist_ok=True)
    trajectories = _Trajectories(directory / "atif", "durable" in obligations)
    with open(directory / "events.jsonl", "wb", buffering=1 << 16) as out:
        writer: _ObligedWriter | None = None
        if obligations:
            writer = _ObligedWriter(out, trajectories, "scrub" in obligations)
            enqueue = writer.scope_event
            if "hook" in obligations:
                plugins = pluggy.PluginManager("floor")
                plugins.add_hookspecs(_Spec)
                plugins.register(writer)
                hook = plugins.hook.scope_event

                def emit(*fields: Any) -> None:
                    hook(fields=fields)
            else:
                def emit(*fields: Any) -> None:
                    enqueue(fields)
        else:
            write, assemble = out.write, trajectories.add

            def emit(*fields: Any) -> None:
                write(_line(*fields))
                assemble(*fields)
        for index, turns in enumerate(sessions):
            session_id, session_uuid = f"session{index:024d}", _uuid()
            base = {"hermes.telemetry_schema_version": _SCHEMA, "hermes.session_id": session_id}
            emit("start", session_uuid, None, _now(), "hermes.session", "agent", None,
                 {"model": model, "platform": "cli"},
                 {**base, "hermes.platform": "cli", "hermes.span_kind": "session"})
            for turn_no, (user, llm_calls) in enumerate(turns):
                turn_id, task_id, turn_uuid = f"turn_{turn_no:016x}", f"task_{index:016x}", _uuid()
                ids = {**base, "hermes.task_id": task_id, "hermes.turn_id": turn_id}
                emit("start", turn_uuid, session_uuid, _now(), "agent.run", "function", None,
                     {"user_message": user, "is_first_turn": turn_no == 0},
                     {**ids, "hermes.platform": "cli", "hermes.span_kind": "agent.run"})
                final = final_default
                for call_no, (request, response, tool_calls) in enumerate(llm_calls, 1):
                    api_id, llm_uuid = f"{turn_id}:api:{call_no}", _uuid()
                    emit("start", llm_uuid, turn_uuid, _now(), "llm.call", "llm", {"model_name": model},
                         {"request": {"method": "POST", "body": request}, "messages_offset": 0},
                         {**ids, "hermes.api_request_id": api_id, "hermes.api_call_count": call_no,
                          "hermes.provider": "bench", "hermes.api_mode": "chat_completions",
                          "hermes.base_url": "http://127.0.0.1/v1", "hermes.span_kind": "llm.call"})
                    choice, usage = response["choices"][0], response["usage"]
                    reply = {"model": response["model"], "finish_reason": choice["finish_reason"],
                             "assistant_message": choice["message"],
                             "usage": {"input_tokens": usage["prompt_tokens"],
                                       "output_tokens": usage["completion_tokens"],
                                       "prompt_tokens": usage["prompt_tokens"], "total_tokens": usage["total_tokens"]}}
                    emit("end", llm_uuid, turn_uuid, _now(), "llm.call", "llm", {"model_name": model},
                         {"response": reply, "usage": {"input_tokens": usage["prompt_tokens"],
                                                       "output_tokens": usage["completion_tokens"]},
                          "finish_reason": choice["finish_reason"]},
                         {**base, "hermes.api_request_id": api_id, "hermes.duration_ms": 0,
                          "otel.status_code": "OK"})
                    final = choice["message"].get("content") or final
                    for call_id, name, args, recorded in tool_calls:

                        def tool_call() -> None:
                            tool_uuid = _uuid()
                            emit("start", tool_uuid, turn_uuid, _now(), name, "tool",
                                 {"tool_call_id": call_id}, {"arguments": args},
                                 {**ids, "hermes.api_request_id": api_id, "hermes.span_kind": "tool.execute"})
                            result = tool(**args) if tool is not None else (lambda: recorded)()
                            emit("end", tool_uuid, turn_uuid, _now(), name, "tool",
                                 {"tool_call_id": call_id}, {"result": result},
                                 {**base, "hermes.tool.status": "ok", "hermes.duration_ms": 0,
                                  "otel.status_code": "OK"})

                        timed(tool_call)
                emit("end", turn_uuid, session_uuid, _now(), "agent.run", "function", None,
                     {"final_response": final, "completed": True, "interrupted": False},
                     {**base, "hermes.turn.status": "completed", "hermes.duration_ms": 0,
                      "otel.status_code": "OK"})
            emit("end", session_uuid, None, _now(), "hermes.session", "agent", None,
                 {"status": "completed"}, {**base, "hermes.duration_ms": 0, "otel.status_code": "OK"})
        if writer is not None:
            writer.close()
