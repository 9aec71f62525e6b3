"""Fixtures for the shared-metrics tests: a profile home, a manual clock, an attached collector,
a host on the profile's engine, and a loopback ingestion server that records what it receives."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.shared_metrics import ManualClock, MetricsStore, SharedMetrics, attach_shared_metrics
from hermes_pipeline.shared_metrics.resource import Resource
from hermes_pipeline.shared_metrics.store import counters

T0 = datetime(2026, 9, 1, 10, 0, tzinfo=UTC)
RESOURCE = Resource("0.1.0", "linux", "x86_64", "pip")
TOOLSETS = {"read_file": "file", "write_file": "file", "terminal": "terminal", "my_tool": "acme-custom",
            "browse": "browser_use", "search": "mcp-github"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes_home"
    path.mkdir()
    return path


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture(autouse=True)
def stream_time(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shared metrics counts each event at the time the profile's stream stamped its hook with; in a test that
    uses the manual ``clock`` the stream reads it too, so ``clock.advance`` / ``clock.set`` move the hooks'
    time as the test says (a test on the system clock leaves the stream's clock alone)."""
    if "clock" not in request.fixturenames:
        return
    clock: ManualClock = request.getfixturevalue("clock")
    from hermes_pipeline.export import publication, scopes

    def now_ns() -> int:
        now = clock.now()
        return int(now.timestamp()) * 1_000_000_000 + now.microsecond * 1000

    monkeypatch.setattr(publication, "time_ns", now_ns)
    monkeypatch.setattr(scopes, "time_ns", now_ns)


@pytest.fixture
def profile_engine() -> Engine:
    return Engine().child()


@pytest.fixture
def metrics(profile_engine: Engine, home: Path, clock: ManualClock) -> Iterator[SharedMetrics]:
    handle = attach_shared_metrics(profile_engine, home, enabled=True, clock=clock, toolsets=TOOLSETS,
                                   resource=RESOURCE)
    assert handle is not None
    yield handle
    handle.close()


@pytest.fixture
def mhost(profile_engine: Engine, metrics: SharedMetrics) -> Host:
    return Host(profile_engine, platform="cli", model="Test-Model", provider="Test-Provider",
                base_url="http://127.0.0.1:9/v1")


def rows(store: MetricsStore, metric: str | None = None) -> list[dict[str, Any]]:
    """Counter rows (optionally of one metric) with ``dimensions`` parsed."""
    conn = store.connect()
    try:
        found = counters(conn)
    finally:
        conn.close()
    for row in found:
        row["dimensions"] = json.loads(row["dimensions_json"])
    return [r for r in found if metric is None or r["metric_name"] == metric]


def totals(store: MetricsStore, metric: str) -> int:
    return sum(r["value"] for r in rows(store, metric))


def response(content: str | None = "done", tool_calls: list[dict[str, Any]] | None = None,
             model: str = "Resp-Model") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "r", "model": model, "choices": [{"index": 0, "message": message,
                                                    "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


# ---------------------------------------------------------------------------- loopback ingestion server


@dataclass
class Received:
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> bytes:
        return gzip.decompress(self.raw) if self.headers.get("content-encoding") == "gzip" else self.raw

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Ingest:
    """A real HTTP server on 127.0.0.1 answering from a list of (status, headers, body) replies."""

    replies: list[tuple[int, dict[str, str], bytes]] = field(default_factory=list)
    default: tuple[int, dict[str, str], bytes] = (202, {}, b'{"status":"accepted"}')
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def reply(self) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            return self.replies.pop(0) if self.replies else self.default


@pytest.fixture
def ingest() -> Iterator[Ingest]:
    state = Ingest()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            with state.lock:
                state.received.append(Received({k.lower(): v for k, v in self.headers.items()}, raw))
            status, headers, body = state.reply()
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1/packages"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

