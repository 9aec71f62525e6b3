"""The ``observability`` component's own keys (spec 03 §7, spec 04 FMT-3).

Every sink section states its own keys in its package (``sinks/atof/config.py``, ``sinks/atif/config.py``,
``sinks/otel/config.py``); only the component's top-level keys and its ``policy`` table are stated here."""

from __future__ import annotations

from typing import Final

from ..config.checks import Check, boolean, integer, one_of, table
from ..config.policy import LEVELS
from ..export.writer import MIN_MAX_QUEUE_BYTES


TOP: Final[dict[str, Check]] = {
    "version": integer(), "enable_full_payloads": boolean, "content_summary": one_of("preview", "digest", "off"),
    "atof": table, "atif": table, "opentelemetry": table, "policy": table,
    "redact_credentials": boolean, "max_value_chars": integer(1000), "max_queue_bytes": integer(MIN_MAX_QUEUE_BYTES),
}
"""Top-level keys. ``redact_credentials`` (hermes_pipeline extension, default true) is the one switch that turns
the exporters' credential scrubber off (spec 04 FMT-33a); every activation with it false logs a WARNING.
``max_value_chars`` (hermes_pipeline extension, default 1,000,000) bounds one string value of every event,
for every exporter of the component (see ``export/bounds.py``). ``max_queue_bytes`` (hermes_pipeline extension)
bounds the component's queues between threads in estimated bytes, beside their ``max_queue_size`` in events
(``export/sizes.py``): unset, the publication queue and each third-party sink's or worker process's queue at 64 MiB;
set, each ATOF sink's, the ATIF writer's and the OTel span builder's event queue too (``SinkContext.max_queue_bytes``)."""
POLICY: Final[dict[str, Check]] = {"unknown_field": one_of(*LEVELS), "unsupported_value": one_of(*LEVELS)}
