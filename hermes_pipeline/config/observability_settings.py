"""The ``observability.*`` keys of the profile's ``config.yaml`` that the audit store, sampling, the
quick OTel settings, structured logs and retention read (spec 06 §0, BOOK-16..26, BOOK-46..50).

:data:`KEYS` maps each dotted key to its validator (a problem text or ``None``), :data:`DEFAULTS`
gives the defaults, and :func:`observability_from` reads a parsed ``config.yaml`` into
:class:`ObservabilitySettings`: an invalid value falls back to its default with a warning, never
stopping the host.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from .diagnostics import Diagnostics
from .profile_paths import profile_path_problem

ENVIRONMENTS: Final = ("development", "production")
SPAN_KINDS: Final = ("memory.retrieve", "memory.update")


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "expected a boolean (true or false)"


def _environment(value: Any) -> str | None:
    return None if value in ENVIRONMENTS else "expected development or production"


def _dir(value: Any) -> str | None:
    return profile_path_problem(value, "a directory path")


def _dirs(value: Any) -> str | None:
    if not isinstance(value, list) or not value:
        return "expected a non-empty list of directory paths relative to $HERMES_HOME"
    for index, item in enumerate(value):
        problem = profile_path_problem(item, "a directory path")
        if problem:
            return f"entry {index + 1}: {problem}"
    return None


def _positive_int(value: Any) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) and value > 0 else "expected an integer > 0"


def _value_chars(value: Any) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) and value >= 1000 else \
        "expected an integer >= 1000 (characters)"


QUEUE_BYTES_MIN: Final = 2**20
"""The smallest ``observability.max_queue_bytes`` (1 MiB, the component key's floor: below it one LLM request with
its history would not fit)."""


def _queue_bytes(value: Any) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) and value >= QUEUE_BYTES_MIN else \
        f"expected an integer >= {QUEUE_BYTES_MIN} (bytes)"


def _days(value: Any) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else \
        "expected a number of days >= 0 (0 keeps everything)"


def _memory_tools(value: Any) -> str | None:
    if not isinstance(value, Mapping) or any(not isinstance(k, str) or v not in SPAN_KINDS for k, v in value.items()):
        return "expected a map of tool name to memory.retrieve or memory.update"
    return None


def _pricing(value: Any) -> str | None:
    from .pricing import pricing_problem

    if not isinstance(value, Mapping):
        return "expected a table of provider/model prices (USD per million tokens)"
    return pricing_problem(value)


def _endpoint(value: Any) -> str | None:
    if not isinstance(value, str):
        return "expected an http:// or https:// URL"
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return "expected an http:// or https:// URL"
    return None if parts.scheme in ("http", "https") and parts.hostname else "expected an http:// or https:// URL"


def _name(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() else "expected a non-empty string"


def _rate(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or not 0 <= value <= 1:
        return "expected a number between 0 and 1"
    return None


def _log_path(value: Any) -> str | None:
    return profile_path_problem(value, "a file path")


KEYS: Final = {
    "observability.environment": _environment,
    "observability.audit.enabled": _bool,
    "observability.audit.memory_dirs": _dirs,
    "observability.audit.skills_dir": _dir,
    "observability.audit.excerpt_chars": _positive_int,
    "observability.memory_tools": _memory_tools,
    "observability.pricing": _pricing,
    "observability.otel_enabled": _bool,
    "observability.otel_endpoint": _endpoint,
    "observability.otel_service_name": _name,
    "observability.trace_sampling_rate": _rate,
    "observability.retention.runs_days": _days,
    "observability.retention.history_days": _days,
    "observability.logs.path": _log_path,
    "observability.max_value_chars": _value_chars,
    "observability.max_queue_bytes": _queue_bytes,
}
"""Dotted key → validator."""

DEFAULTS: Final[dict[str, Any]] = {
    "observability.environment": "development", "observability.audit.enabled": False,
    "observability.audit.memory_dirs": ["memories"], "observability.audit.skills_dir": "skills",
    "observability.audit.excerpt_chars": 500, "observability.memory_tools": {}, "observability.pricing": None,
    "observability.otel_enabled": False, "observability.otel_endpoint": "http://localhost:4318",
    "observability.otel_service_name": "hermes-agent", "observability.trace_sampling_rate": None,
    "observability.retention.runs_days": 90, "observability.retention.history_days": 365,
    "observability.logs.path": "logs/hermes-pipeline.jsonl", "observability.max_value_chars": None,
    "observability.max_queue_bytes": None,
}

SECTIONS: Final = ("observability.audit", "observability.retention", "observability.logs")
"""Sections whose every key belongs to this schema."""
MAP_KEYS: Final = ("observability.memory_tools", "observability.pricing")
"""Keys whose value is a whole table (their inner keys are data, not schema)."""


@dataclass(frozen=True)
class ObservabilitySettings:
    """The ``observability.*`` settings read by this module (see :data:`KEYS`)."""

    environment: str = "development"
    audit_enabled: bool = False
    memory_dirs: tuple[str, ...] = ("memories",)
    skills_dir: str = "skills"
    excerpt_chars: int = 500
    memory_tools: Mapping[str, str] = field(default_factory=dict)
    pricing: Any = None
    otel_enabled: bool = False
    otel_endpoint: str = "http://localhost:4318"
    otel_service_name: str = "hermes-agent"
    trace_sampling_rate: float | None = None
    runs_days: int = 90
    history_days: int = 365
    log_path: str = "logs/hermes-pipeline.jsonl"
    max_value_chars: int | None = None
    """The bound of one string value in the profile's stores and its JSON Lines log (``export/bounds.py``);
    ``None`` (unset): the pipeline component's bound when the profile shares its scope plugin, else 1,000,000."""
    max_queue_bytes: int | None = None
    """The byte bound (estimated from the events' text) of the queues between the agent and the profile's consumers:
    its own publication queue (default 64 MiB when unset) and, when set, the observability store's, the trajectory
    store's and the quick OTel endpoint's event queues too (unset: bounded by their event count)."""

    @property
    def sampling_rate(self) -> float:
        """BOOK-46: the shorthand endpoint's rate: the key when set, else 1.0 in development, 0.1 in production."""
        if self.trace_sampling_rate is not None:
            return float(self.trace_sampling_rate)
        return default_sampling_rate(self.environment)


def default_sampling_rate(environment: str) -> float:
    """BOOK-46: 1.0 for ``development``, 0.1 for ``production``."""
    return 0.1 if environment == "production" else 1.0


_FIELDS: Final = {
    "observability.environment": "environment", "observability.audit.enabled": "audit_enabled",
    "observability.audit.memory_dirs": "memory_dirs", "observability.audit.skills_dir": "skills_dir",
    "observability.audit.excerpt_chars": "excerpt_chars", "observability.memory_tools": "memory_tools",
    "observability.pricing": "pricing", "observability.otel_enabled": "otel_enabled",
    "observability.otel_endpoint": "otel_endpoint", "observability.otel_service_name": "otel_service_name",
    "observability.trace_sampling_rate": "trace_sampling_rate", "observability.retention.runs_days": "runs_days",
    "observability.retention.history_days": "history_days", "observability.logs.path": "log_path",
    "observability.max_value_chars": "max_value_chars", "observability.max_queue_bytes": "max_queue_bytes",
}


def dotted_value(data: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    """``(True, value)`` at the dotted key path of a parsed ``config.yaml``, ``(False, None)`` when absent."""
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def checked_values(raw: Mapping[str, Any], keys: Mapping[str, Callable[[Any], str | None]],
                   diagnostics: Diagnostics | None, source: str) -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` for every key of ``keys`` present in ``raw`` whose check passes; a value that
    fails its check is skipped (the default applies) with a ``config.invalid_value`` warning."""
    for dotted, check in keys.items():
        present, value = dotted_value(raw, dotted)
        if not present:
            continue
        problem = check(value)
        if problem:
            if diagnostics is not None:
                diagnostics.warning("config.invalid_value", f"{problem}; the default applies", field=dotted,
                                    source=source)
            continue
        yield dotted, value


def observability_from(raw: Mapping[str, Any], diagnostics: Diagnostics | None = None,
                       source: str = "config.yaml") -> ObservabilitySettings:
    """:class:`ObservabilitySettings` from a parsed ``config.yaml`` (bad values: default plus a warning)."""
    values: dict[str, Any] = {}
    for dotted, value in checked_values(raw, KEYS, diagnostics, source):
        if dotted == "observability.audit.memory_dirs":
            value = tuple(v.strip() for v in value)
        elif isinstance(value, str):
            value = value.strip()
        elif dotted == "observability.memory_tools":
            value = dict(value)
        values[_FIELDS[dotted]] = value
    return ObservabilitySettings(**values)


def read_observability(home: Any) -> ObservabilitySettings:
    """The settings of the profile at ``home``, read from its ``config.yaml`` now (no diagnostics)."""
    from pathlib import Path

    from .profile_config import CONFIG_NAME, read_yaml_mapping

    raw, _ = read_yaml_mapping(Path(home).expanduser() / CONFIG_NAME)
    return observability_from(raw)


TABLE_KEYS: Final = (*MAP_KEYS, "observability.audit.memory_dirs")
"""Keys whose value ``config set`` takes as a YAML flow mapping or list."""
