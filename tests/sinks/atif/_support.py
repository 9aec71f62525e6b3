"""Helpers for the ATIF tests: ATOF + ATIF on one shared scope plugin, document checks, event streams."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import jsonschema

from hermes_pipeline import Engine
from hermes_pipeline.export import MemoryDestination, ScopeEvent, ScopePlugin
from hermes_pipeline.export.events import END, MARK, SCOPE, START
from hermes_pipeline.export.ids import new_uuid7, uuid_str
from hermes_pipeline.schemas import load_schema
from hermes_pipeline.sinks.atif import AtifPlugin, AtifSink, build_atif_plugin, build_atif_sink
from hermes_pipeline.sinks.atof import AtofSink, build_atof_sink

from tests.sinks.atof._support import decode

ATIF_VALIDATOR = jsonschema.Draft202012Validator(load_schema("atif-1.7"))
ATOF_VALIDATOR = jsonschema.Draft202012Validator(load_schema("atof-0.1"))


class Pipeline:
    """One deferred :class:`ScopePlugin` with an ATOF sink and an ATIF sink as listeners (memory outputs)."""

    def __init__(self, engine: Engine, *, atif: dict[str, Any] | None = None, toolsets: dict[str, str] | None = None,
                 local: Any = None) -> None:
        self.atof_dest = MemoryDestination()
        self.atif_dest = local if local is not None else MemoryDestination()
        self.scopes = ScopePlugin(deferred=True, toolsets=toolsets)
        self.atof: AtofSink = build_atof_sink({"enabled": True, "sinks": [{"type": "file"}]},
                                              destinations={0: self.atof_dest})
        self.atif: AtifSink = build_atif_sink({"enabled": True, **(atif or {})}, destinations={"local": self.atif_dest})
        self.scopes.add_listener(self.atof)
        self.scopes.add_listener(self.atif)
        engine.add_plugin(self.scopes, name="scopes")

    def flush(self) -> None:
        assert self.scopes.flush(10.0) and self.atof.flush(10.0) and self.atif.flush(10.0)

    def shutdown(self) -> None:
        """The owner's order: project and close scopes, then drain both sinks (FMT-85)."""
        assert self.scopes.shutdown(10.0)
        assert self.atof.shutdown(10.0) and self.atif.shutdown(10.0)

    def events(self) -> list[dict[str, Any]]:
        events = decode(self.atof_dest)
        for event in events:
            ATOF_VALIDATOR.validate(event)
        return events

    def documents(self) -> list[dict[str, Any]]:
        return documents(self.atif_dest)


def documents(dest: MemoryDestination) -> list[dict[str, Any]]:
    """Every trajectory a memory destination received: decoded from its bytes and checked."""
    out = []
    for item in dest.items:
        doc = json.loads(item.content)
        assert doc == item.document
        assert item.content.startswith(b'{\n  "schema_version": "ATIF-v1.7"')  # FMT-52: 2-space indentation
        check_document(doc)
        assert item.name.endswith(f"{doc['trajectory_id']}.json") or doc["trajectory_id"] in item.name
        out.append(doc)
    return out


def check_document(doc: dict[str, Any]) -> None:
    """Schema (recursively) plus what a schema cannot say: consecutive step ids, unique child ids, sums."""
    ATIF_VALIDATOR.validate(doc)
    for trajectory in walk(doc):
        assert trajectory["session_id"] == trajectory["trajectory_id"]  # FMT-42
        assert [s["step_id"] for s in trajectory["steps"]] == list(range(1, len(trajectory["steps"]) + 1))
        children = [c["trajectory_id"] for c in trajectory.get("subagent_trajectories", [])]
        assert len(children) == len(set(children))  # FMT-43
        metrics = [s["metrics"] for s in trajectory["steps"] if "metrics" in s]
        final = trajectory.get("final_metrics")
        assert (final is None) == (not metrics)
        if final is not None:
            assert final["total_steps"] == len(trajectory["steps"])
            for key, total in (("prompt_tokens", "total_prompt_tokens"), ("completion_tokens", "total_completion_tokens"),
                               ("cached_tokens", "total_cached_tokens")):
                values = [m[key] for m in metrics if key in m]
                assert final.get(total) == (sum(values) if values else None)


def walk(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The trajectory and its embedded subagents, depth first."""
    yield doc
    for child in doc.get("subagent_trajectories", []):
        yield from walk(child)


def memory_atif_plugin(engine: Engine, **config: Any) -> tuple[AtifPlugin, MemoryDestination]:
    """A stand-alone ATIF plugin writing to memory, registered on ``engine``."""
    dest = MemoryDestination()
    toolsets = config.pop("toolsets", None)
    plugin = build_atif_plugin({"enabled": True, **config}, destinations={"local": dest}, toolsets=toolsets)
    engine.add_plugin(plugin, name="atif")
    return plugin, dest


def results(step: dict[str, Any]) -> list[dict[str, Any]]:
    return step.get("observation", {}).get("results", [])


def agent_steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in doc["steps"] if s["source"] == "agent"]


class Stream:
    """Hand-made scope events (for orders and marks the host API cannot produce), fed straight to a listener."""

    def __init__(self, listener: Any, session_id: str = "s") -> None:
        self.listener = listener
        self.session_id = session_id
        self.root = 0
        self.session = 0

    def start(self, name: str, category: str, parent: int | None, ts: int, *, data: dict[str, Any] | None = None,
              meta: dict[str, Any] | None = None, profile: dict[str, Any] | None = None) -> ScopeEvent:
        uuid = new_uuid7(ts // 1000)
        if parent is None:
            self.root = self.session = uuid
        event = ScopeEvent(SCOPE, START, uuid, parent, ts, name, category, (), profile, data,
                           {"hermes.telemetry_schema_version": "hermes.observer.v1",
                            "hermes.session_id": self.session_id, **(meta or {})}, self.session, self.root)
        self.listener(event)
        return event

    def end(self, start: ScopeEvent, ts: int, *, data: dict[str, Any] | None = None,
            meta: dict[str, Any] | None = None, profile: dict[str, Any] | None = None) -> ScopeEvent:
        event = ScopeEvent(SCOPE, END, start.uuid, start.parent_uuid, ts, start.name, start.category, (),
                           profile if profile is not None else start.profile, data,
                           {"hermes.telemetry_schema_version": "hermes.observer.v1",
                            "hermes.session_id": self.session_id, **(meta or {})}, self.session, self.root,
                           start)  # a closed scope, as the tracker hands it
        self.listener(event)
        return event

    def mark(self, name: str, parent: int, ts: int, data: dict[str, Any]) -> ScopeEvent:
        event = ScopeEvent(MARK, None, new_uuid7(ts // 1000), parent, ts, name, None, (), None, data,
                           {"hermes.telemetry_schema_version": "hermes.observer.v1",
                            "hermes.session_id": self.session_id}, self.session, self.root)
        self.listener(event)
        return event


def assistant(content: str | None = None, calls: list[tuple[str | None, str, str]] | None = None,
              usage: dict[str, int] | None = None, model: str = "m-1") -> dict[str, Any]:
    """An ``llm.call`` end ``data`` with an assistant message (``calls``: ``(id, name, arguments JSON)``)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{**({"id": cid} if cid else {}), "type": "function",
                                  "function": {"name": name, "arguments": args}} for cid, name, args in calls]
    return {"response": {"model": model, "finish_reason": "tool_calls" if calls else "stop",
                         "assistant_message": message},
            "usage": usage or {"input_tokens": 10, "output_tokens": 2}, "finish_reason":
                "tool_calls" if calls else "stop"}


class Gate:
    """A local output whose first write waits for :attr:`release` (a stuck disk), then records items."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.writing = threading.Event()
        self.items: list[Any] = []

    def write(self, batch: list[Any]) -> None:
        self.writing.set()
        self.release.wait(10)
        self.items.extend(batch)


__all__ = ["ATIF_VALIDATOR", "Gate", "Pipeline", "Stream", "agent_steps", "assistant", "check_document", "documents",
           "memory_atif_plugin", "results", "uuid_str", "walk"]
