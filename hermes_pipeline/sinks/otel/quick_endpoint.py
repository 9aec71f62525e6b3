"""``observability.otel_enabled`` / ``otel_endpoint`` / ``otel_service_name`` / ``trace_sampling_rate``:
a shorthand for one ``gen_ai`` OTLP trace endpoint of the profile (BOOK-46, BOOK-50), a built-in consumer of
:mod:`hermes_pipeline.profile` (``quick_otel``).

The endpoint is an ordinary ``opentelemetry`` section built by the OTel sink's own builder, fed by the
profile's one scope stream (:class:`~hermes_pipeline.profile.stream.SharedStream`: only this
profile's turns, the same scope UUIDs as its trajectory and observability stores). Its sampling rate is
``trace_sampling_rate`` when set, else the default of ``observability.environment``: 1.0 in
``development``, 0.1 in ``production`` (BOOK-46). An endpoint the pipeline file already exports to
(same traces URL) is not added twice: it is skipped with a warning and the pipeline's applies.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Final

from ...config.observability_settings import ObservabilitySettings, read_observability
from ...engine.deadline import Deadline

logger: Final = logging.getLogger("hermes_pipeline.sinks.quick_otel")
CLOSE_DEADLINE: Final = 5.0


def trace_url(endpoint: str) -> str:
    """The traces URL of an OTLP/HTTP base (``/v1/traces`` appended unless the path already ends so)."""
    url = endpoint.strip().rstrip("/")
    return url if url.endswith("/v1/traces") else url + "/v1/traces"


def quick_otel_config(settings: ObservabilitySettings) -> dict[str, Any]:
    """The ``opentelemetry`` section the four settings stand for."""
    config: dict[str, Any] = {"enabled": True, "endpoints": [{
        "type": "gen_ai", "endpoint": trace_url(settings.otel_endpoint), "service_name": settings.otel_service_name}]}
    if settings.trace_sampling_rate is not None:  # else the sink takes the environment's default (BOOK-46)
        config["sampling_rate"] = float(settings.trace_sampling_rate)
    return config


def pipeline_trace_urls(selected: str | None) -> set[str]:
    """Traces URLs of the ``opentelemetry`` endpoints of the pipeline file ``selected`` (the active one, as the
    activation report names it; empty without one)."""
    if not selected:
        return set()
    try:
        from ...config.pipeline import load_pipeline

        loaded = load_pipeline(selected=Path(selected), discover=False)
    except Exception:  # a file that does not load exports nothing: nothing to de-duplicate against
        return set()
    urls: set[str] = set()
    for component in loaded.components:
        section = component.config.get("opentelemetry") if component.enabled else None
        if isinstance(section, dict) and section.get("enabled") is True:
            for entry in section.get("endpoints") or ():
                if isinstance(entry, dict) and isinstance(entry.get("endpoint"), str):
                    urls.add(trace_url(entry["endpoint"]))
    return urls


class QuickOtelHandle:
    """The running shorthand endpoint: the OTel sink and the scope stream feeding it (the profile's, else a scope
    plugin of its own on the engine)."""

    def __init__(self, engine: Any, home: Path, settings: ObservabilitySettings, *, stream: Any = None) -> None:
        from .sink import build_otel_sink

        self.engine = engine
        self.config = quick_otel_config(settings)
        self.sink = build_otel_sink(self.config, base_dir=home, environment=settings.environment,
                                    max_queue_bytes=settings.max_queue_bytes)
        self._own = stream is None
        self.plugin_name: str | None = None
        self._closed = False
        if self._own:
            from ...export.scope_hooks import ScopePlugin

            self.stream: Any = ScopePlugin((self.sink,), deferred=True, memory_tools=dict(settings.memory_tools),
                                           max_queue_bytes=settings.max_queue_bytes)
            self.plugin_name = engine.add_plugin(self.stream, name=f"hermes.quick_otel.{id(self):x}")
        else:
            self.stream = stream
            self.stream.add_listener(self.sink)

    def flush(self, timeout: float = 5.0) -> bool:
        """Make what is queued into scope events and export them, within ``timeout`` seconds in all (the
        sink gets what the stream left of it); ``False`` on timeout."""
        deadline = Deadline(timeout)
        streamed = bool(self.stream.flush(deadline.remaining()))
        return bool(self.sink.flush(deadline.remaining())) and streamed

    def close(self) -> None:
        """Export what is queued and stop; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            from ...export.scope_hooks import release_listener

            release_listener(self.engine, self.plugin_name, self.stream, self.sink, own=self._own,
                             deadline=CLOSE_DEADLINE)
        finally:
            self.sink.shutdown(CLOSE_DEADLINE)


def attach_for_profile(profile: Any) -> QuickOtelHandle | None:
    """The first-party consumer entry: the shorthand endpoint, or ``None`` when off or already exported to."""
    settings = getattr(profile.settings, "observability", None)
    if not isinstance(settings, ObservabilitySettings):
        settings = read_observability(profile.home)
    if not settings.otel_enabled:
        return None
    url = trace_url(settings.otel_endpoint)
    if url in pipeline_trace_urls(profile.activation.selected):
        logger.warning("hermes_pipeline: observability.otel_endpoint %s duplicates an opentelemetry endpoint of the "
                       "pipeline file; the shorthand endpoint is ignored (traces go there once)", url,
                       extra={"event": "quick_otel_duplicate_endpoint"})
        return None
    return QuickOtelHandle(profile.engine, Path(profile.home), settings,
                           stream=getattr(profile, "stream", None))
