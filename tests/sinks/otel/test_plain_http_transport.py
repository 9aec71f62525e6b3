"""The plain-HTTP transport of the default OTLP exporter (FMT-72, FMT-78, FMT-81): which endpoints use it, and that
it delivers, retries and counts as the ``requests`` transport does, against real sockets on 127.0.0.1.

The bytes and headers it sends are held equal to the SDK exporter's by
``test_delivery.py::test_fmt_72_default_exporter_sends_what_the_sdk_exporter_sends`` (an ``http://`` receiver)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.sinks.otel import proto
from hermes_pipeline.sinks.otel.exporter import ObservedSession, default_exporter
from hermes_pipeline.sinks.otel.transport import PlainHttpTransport, plain_http_target
from tests.sinks.otel.test_delivery import _batch, _endpoint


def _short(url: str) -> Any:
    """An endpoint whose requests end after 0.3 s and whose export (retries included) after 1 s."""
    from hermes_pipeline.sinks.otel.config import parse_otel_config

    config = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": url,
                                                                "timeout_millis": 300,
                                                                "export_timeout_millis": 1000}]})
    return config.endpoints[0]

_PROXY_VARS = ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", "NETRC")


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)


def _transport(exporter: Any) -> Any:
    transport = exporter._client._transport
    return getattr(transport, "_transport", transport)  # under AttemptTimeout


def test_fmt_72_plain_http_endpoints_use_it_others_keep_the_requests_transport(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``http://`` without a proxy: the plain transport; ``https://``, user information in the URL, a proxy
    variable that applies or a ``.netrc`` login for the host: the SDK's ``requests`` transport (TLS variables,
    CA bundles, proxies, ``.netrc``)."""
    assert plain_http_target("http://127.0.0.1:4318/v1/traces?tenant=a") == ("127.0.0.1", 4318, "/v1/traces?tenant=a")
    assert plain_http_target("http://collector/v1/traces") == ("collector", 80, "/v1/traces")
    for url in ("https://collector:4318/v1/traces", "http://u:p@collector/v1/traces", "http://[::1/v1/traces",
                "http://collector:99999/v1/traces"):
        assert plain_http_target(url) is None, url
    exporter = default_exporter(_endpoint("http://127.0.0.1:9/v1/traces"), ObservedSession({}))
    assert isinstance(exporter, proto.DirectOTLPSpanExporter)
    assert isinstance(_transport(exporter), PlainHttpTransport)
    secure = default_exporter(_endpoint("https://127.0.0.1:9/v1/traces"), ObservedSession({}))
    assert not isinstance(_transport(secure), PlainHttpTransport)
    monkeypatch.setenv("http_proxy", "http://proxy.internal:3128")
    assert plain_http_target("http://collector:4318/v1/traces") is None
    proxied = default_exporter(_endpoint("http://collector:4318/v1/traces"), ObservedSession({}))
    assert not isinstance(_transport(proxied), PlainHttpTransport)
    monkeypatch.setenv("no_proxy", "collector")
    assert plain_http_target("http://collector:4318/v1/traces") == ("collector", 4318, "/v1/traces")
    monkeypatch.delenv("http_proxy")
    netrc = tmp_path / "netrc"
    netrc.write_text("machine collector login otel password from-netrc\n")
    monkeypatch.setenv("NETRC", str(netrc))
    assert plain_http_target("http://collector:4318/v1/traces") is None  # requests would send that login
    assert plain_http_target("http://other:4318/v1/traces") == ("other", 4318, "/v1/traces")
    for made in (exporter, secure, proxied):
        made.shutdown()


class _KeepAliveCollector:
    """A raw HTTP/1.1 collector on 127.0.0.1 that answers 200 and keeps the connection, but closes it after
    ``close_after`` requests on it (as a collector's idle timeout does); counts connections and requests."""

    def __init__(self, close_after: int) -> None:
        self.close_after = close_after
        self.connections = 0
        self.requests = 0
        self.closed = threading.Semaphore(0)
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}/v1/traces"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        with conn, reader:
            for _ in range(self.close_after):
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = reader.readline()
                    if not line:
                        return
                    head += line
                length = next(int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
                reader.read(length)
                self.requests += 1
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n")
            conn.shutdown(socket.SHUT_RDWR)
        self.closed.release()

    def close(self) -> None:
        self._server.close()


@pytest.fixture()
def collector() -> Iterator[_KeepAliveCollector]:
    made = _KeepAliveCollector(close_after=2)
    yield made
    made.close()


def test_fmt_78_81_a_kept_connection_is_reused_and_one_closed_while_idle_is_opened_again_without_a_failure(
        collector: _KeepAliveCollector) -> None:
    """Two exports share one connection; the collector then closes it while idle: the next export opens a new one
    before sending (no failed request counted, nothing retried), as a connection pool does."""
    session = ObservedSession({})
    exporter = default_exporter(_endpoint(collector.url), session)
    assert isinstance(_transport(exporter), PlainHttpTransport)
    assert exporter.export(_batch()) is True
    assert exporter.export(_batch()) is True
    assert collector.closed.acquire(timeout=10)  # the collector closed the idle connection
    assert exporter.export(_batch()) is True
    exporter.shutdown()
    assert (collector.requests, collector.connections) == (3, 2)
    assert (session.requests_sent, session.failures) == (3, 0)


def test_fmt_78_81_a_collector_that_never_answers_times_out_counted_and_its_connection_is_dropped() -> None:
    """A collector that accepts and never answers: each request ends at its timeout, each failure is counted with
    its exception class only, the export reports failure, and the timed-out connection is not kept."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    session = ObservedSession({})
    exporter = default_exporter(_short(f"http://127.0.0.1:{port}/v1/traces"), session)
    try:
        assert exporter.export(_batch()) is False
        assert session.failures >= 1 and session.last_failure in {"TimeoutError", "timeout"}
        assert session.last_status is None
        transport = _transport(exporter)
        assert transport._connection is None  # the timed-out connection is not reused
    finally:
        exporter.shutdown()
        server.close()


def test_fmt_78_retryable_status_is_retried_counted_and_delivered() -> None:
    """503 then 200: the SDK client retries through the transport; one failure is counted with its status."""
    with OTLPReceiver(responses=[503]) as receiver:
        session = ObservedSession({"x-tenant": "acme"})
        exporter = default_exporter(_endpoint(f"{receiver.endpoint}/v1/traces"), session)
        assert exporter.export(_batch()) is True
        exporter.shutdown()
    assert receiver.requests == 2 and len(receiver.spans) == 3
    assert (session.requests_sent, session.failures, session.last_status) == (2, 1, 503)
    assert session.last_failure == "HTTP 503"
    assert all(h["x-tenant"] == "acme" for h in receiver.headers)


def test_fmt_78_nothing_is_sent_after_shutdown_and_a_refused_connection_is_a_counted_failure() -> None:
    """A closed port: the request fails with a connection error (counted by class); after ``shutdown`` the
    transport sends nothing."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.close()  # nothing listens there now
    session = ObservedSession({})
    exporter = default_exporter(_short(f"http://127.0.0.1:{port}/v1/traces"), session)
    assert exporter.export(_batch()) is False
    assert session.failures >= 1 and session.last_failure == "ConnectionRefusedError"
    transport = _transport(exporter)
    exporter.shutdown()
    result = transport.request("POST", f"http://127.0.0.1:{port}/v1/traces", headers={}, timeout=1, data=b"")
    assert result.status_code is None and isinstance(result.error, ConnectionAbortedError)
