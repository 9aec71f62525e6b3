"""Helpers for the ATOF / export tests: a plugin on memory destinations, event decoding, a local receiver."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jsonschema

from hermes_pipeline import Engine
from hermes_pipeline.export import MemoryDestination, ScopeEvent, ScopePlugin
from hermes_pipeline.schemas import load_schema
from hermes_pipeline.sinks.atof import AtofPlugin, build_atof_plugin

VALIDATOR = jsonschema.Draft202012Validator(load_schema("atof-0.1"))


def memory_plugin(engine: Engine, *, sinks: int = 1, name: str = "atof", **atof: Any) -> tuple[AtofPlugin, list[MemoryDestination]]:
    """An ATOF plugin whose file sinks deliver to memory destinations; registered on ``engine``."""
    dests = [MemoryDestination() for _ in range(sinks)]
    extra = atof.pop("sink", {})
    config = {"enabled": True, "sinks": [{"type": "file", **extra} for _ in range(sinks)], **atof}
    plugin = build_atof_plugin(config, destinations=dict(enumerate(dests)))
    engine.add_plugin(plugin, name=name)
    return plugin, dests


def stuck_scope_plugin(engine: Engine) -> tuple[ScopePlugin, list[ScopeEvent], threading.Event]:
    """A deferred scope plugin on ``engine`` with a two-record publication queue whose thread is stuck on the
    session's first event (until the returned gate is set), inside turn ``u`` of session ``s`` (task ``k``):
    the next records fill the queue (FMT-80 tests)."""
    gate = threading.Event()
    seen: list[ScopeEvent] = []

    def slow_listener(event: ScopeEvent) -> None:
        seen.append(event)
        if len(seen) == 1:
            gate.wait(10)  # the publication thread is stuck on the first event

    plugin = ScopePlugin((slow_listener,), deferred=True, max_queue_size=2)
    engine.add_plugin(plugin, name="scopes")
    engine.dispatch("on_session_start", {"session_id": "s", "model": "m", "platform": "cli"})
    while not seen:
        plugin.flush(0.01)
    engine.dispatch("pre_llm_call", {"session_id": "s", "task_id": "k", "turn_id": "u", "user_message": "go",
                                     "is_first_turn": True})
    return plugin, seen, gate


def decode(dest: MemoryDestination) -> list[dict[str, Any]]:
    """The events a destination received, each line decoded."""
    out = []
    for item in dest.items:
        assert isinstance(item, bytes) and item.endswith(b"\n") and item.count(b"\n") == 1
        out.append(json.loads(item))
    return out


def collect(plugin: AtofPlugin, dest: MemoryDestination, *, shutdown: bool = True) -> list[dict[str, Any]]:
    """Flush (and by default shut down) the plugin, then decode and schema-validate every event."""
    assert plugin.flush(10.0)
    if shutdown:
        assert plugin.shutdown(10.0)
    events = decode(dest)
    for event in events:
        VALIDATOR.validate(event)
    return events


def scopes(events: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``uuid → {"start": event, "end": event}`` for scope events."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for event in events:
        if event["kind"] == "scope":
            phase = event["scope_category"]
            assert phase not in out.setdefault(event["uuid"], {}), f"duplicate {phase} for {event['name']}"
            out[event["uuid"]][phase] = event
    return out


def starts(events: list[dict[str, Any]], name: str | None = None) -> list[dict[str, Any]]:
    return [e for e in events if e.get("scope_category") == "start" and (name is None or e["name"] == name)]


def ends(events: list[dict[str, Any]], name: str | None = None) -> list[dict[str, Any]]:
    return [e for e in events if e.get("scope_category") == "end" and (name is None or e["name"] == name)]


def marks(events: list[dict[str, Any]], name: str | None = None) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "mark" and (name is None or e["name"] == name)]


class Receiver:
    """A stdlib HTTP collector on 127.0.0.1: records requests, answers with scripted statuses.

    ``statuses`` are used in order (then 200). Chunked uploads are decoded. Use as a context
    manager; the server stops when the block ends.
    """

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.received = threading.Event()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    body = b""
                    while True:
                        size = int(self.rfile.readline().strip() or b"0", 16)
                        if size == 0:
                            self.rfile.readline()
                            break
                        body += self.rfile.read(size)
                        self.rfile.readline()
                        with receiver._lock:
                            receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                            receiver.received.set()
                        body = b""
                    status = 200
                else:
                    body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                    with receiver._lock:
                        status = receiver.statuses.pop(0) if receiver.statuses else 200
                        if 200 <= status < 300:
                            receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                            receiver.received.set()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ingest"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)

    def lines(self) -> list[dict[str, Any]]:
        """Every NDJSON record received, decoded."""
        with self._lock:
            bodies = [body for _, body in self.requests]
        return [json.loads(line) for body in bodies for line in body.splitlines() if line.strip()]
