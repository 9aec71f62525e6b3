"""``flush(timeout)`` is one deadline for the whole call, however many parts it flushes (issue #29 item 6,
spec 04 FMT-84): a handle that flushes its scope stream and then its sink hands the sink only what the stream
left, and the OTel section's trace and metrics sinks flush side by side, so a blocked part makes the call
return ``False`` within ``timeout`` instead of taking ``timeout`` once per part.

The blocked parts wait on an :class:`threading.Event` that nobody sets, for exactly the budget they are handed,
so "what is left" after one of them is nothing: a part called afterwards must be handed ``0.0``.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.config.observability_settings import ObservabilitySettings
from hermes_pipeline.engine.core import Engine

TIMEOUT = 0.2
SIDE_BY_SIDE = 1.0
"""The deadline of the side-by-side check: room for the second thread to start on a busy machine."""
RETURN_BOUND = 30.0
"""How long the test waits for a flush to come back at all (a hang fails the test instead of blocking it)."""


class Blocked:
    """A stream or sink whose ``flush`` never completes: it waits out the budget it is handed, then says
    ``False``; every budget it was handed is kept."""

    def __init__(self) -> None:
        self.never = threading.Event()
        self.budgets: list[float] = []
        self.listeners: list[Any] = []

    def add_listener(self, listener: Any, **_: Any) -> None:
        self.listeners.append(listener)

    def remove_listener(self, listener: Any) -> None:
        self.listeners.remove(listener)

    def flush(self, timeout: float) -> bool:
        self.budgets.append(timeout)
        return self.never.wait(timeout)

    def shutdown(self, deadline: float) -> bool:
        return True


def returns(call: Callable[[], bool]) -> bool | None:
    """``call()``'s result, or ``None`` when it did not return within :data:`RETURN_BOUND` (a hang)."""
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(RETURN_BOUND)
    return result[0] if result else None


def test_fmt_84_trajectory_store_flush_hands_its_sink_only_what_the_stream_left(tmp_path: Path) -> None:
    """FMT-84 / BOOK-28: the trajectory store's handle, stream blocked: ``False`` in time, sink handed 0 s."""
    from hermes_pipeline.sinks.trajectory_store import attach_store

    stream, sink = Blocked(), Blocked()
    handle = attach_store(Engine(), tmp_path / "home", tmp_path / "trajectories", retention_days=0, stream=stream)
    real, handle.sink = handle.sink, sink
    try:
        assert returns(lambda: handle.flush(TIMEOUT)) is False
        assert len(stream.budgets) == 1 and stream.budgets[0] <= TIMEOUT
        assert sink.budgets == [0.0]  # the stream used the whole deadline: nothing was left for the sink
    finally:
        stream.never.set()  # unblocked, so that closing the handle flushes at once
        handle.sink = real
        handle.close()


def test_fmt_84_quick_otel_flush_hands_its_sink_only_what_the_stream_left(tmp_path: Path) -> None:
    """FMT-84 / BOOK-50: the quick OTel endpoint's handle, stream blocked: ``False`` in time, sink handed 0 s."""
    from hermes_pipeline.sinks.otel.quick_endpoint import QuickOtelHandle

    settings = ObservabilitySettings(otel_enabled=True, otel_endpoint="http://127.0.0.1:9")
    stream, sink = Blocked(), Blocked()
    handle = QuickOtelHandle(Engine(), tmp_path, settings, stream=stream)
    real, handle.sink = handle.sink, sink
    try:
        assert returns(lambda: handle.flush(TIMEOUT)) is False
        assert len(stream.budgets) == 1 and stream.budgets[0] <= TIMEOUT
        assert sink.budgets == [0.0]
    finally:
        stream.never.set()  # unblocked, so that closing the handle flushes at once
        handle.sink = real
        handle.close()


@pytest.mark.parametrize("method", ["flush", "shutdown"])
def test_fmt_84_85_otel_traces_and_metrics_side_by_side_in_one_deadline(method: str) -> None:
    """FMT-84 / FMT-85: a blocked metrics sink neither waits for the trace sink nor makes the call take twice the
    time: both are flushed (or shut down) at once, each within the one deadline, and the call reports failure."""
    from hermes_pipeline.sinks.otel.metrics_sink import TracesAndMetrics

    entered = threading.Event()
    seen: list[bool] = []

    class Traces(Blocked):
        def flush(self, timeout: float) -> bool:
            self.budgets.append(timeout)
            seen.append(entered.wait(timeout))  # True only if the metrics call started meanwhile
            return True

        shutdown = flush

    class Metrics(Blocked):
        def flush(self, timeout: float) -> bool:
            entered.set()
            return super().flush(timeout)

        shutdown = flush

    traces, metrics = Traces(), Metrics()
    both = TracesAndMetrics(traces, metrics)  # type: ignore[arg-type]
    assert returns(lambda: getattr(both, method)(SIDE_BY_SIDE)) is False
    assert seen == [True]  # side by side: the metrics call began while the trace call was waiting
    assert traces.budgets[0] <= SIDE_BY_SIDE and metrics.budgets[0] <= SIDE_BY_SIDE


class SilentReceiver:
    """A loopback OTLP endpoint that accepts connections and never answers until :meth:`close` (the blocked
    destination); it binds 127.0.0.1 and stops with its test."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/v1/metrics"
        self.accepted = threading.Event()
        self.connections: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connections.append(connection)
            self.accepted.set()

    def close(self) -> None:
        self.server.close()
        for connection in self.connections:
            connection.close()
        self.thread.join(RETURN_BOUND)


def test_fmt_84_otel_metrics_flush_returns_in_time_and_says_not_flushed_when_the_endpoint_never_answers() -> None:
    """FMT-84 / BOOK-2: the SDK's metric exporter waits for its own 10 s HTTP timeout whatever the flush is
    given; the sink's flush returns at its own deadline instead, while the export still waits on the endpoint
    (no failure counted yet), and says ``False``."""
    from hermes_pipeline.sinks.otel.metrics_config import parse_metrics_config
    from hermes_pipeline.sinks.otel.metrics_sink import OtelMetricsSink

    receiver = SilentReceiver()
    sink = OtelMetricsSink(parse_metrics_config({"enabled": True, "endpoints": [{"endpoint": receiver.url}]}, None))
    try:
        sink.provider.get_meter("test").create_counter("hermes.test.count").add(1)  # something to export
        assert returns(lambda: sink.flush(TIMEOUT)) is False
        assert receiver.accepted.wait(RETURN_BOUND)  # the export reaches the endpoint ...
        assert sink.stats()["metrics_export_failures"] == 0  # ... and was still waiting for its answer
    finally:
        receiver.close()  # the export fails at once now
        sink.shutdown(TIMEOUT)
