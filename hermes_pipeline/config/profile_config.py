"""The profile-owned ``$HERMES_HOME/config.yaml`` (spec 03 §13, 05 §2, 06 §0).

(Over 400 lines on purpose: it is the one statement of the profile's own keys, their defaults,
checks and fallbacks, which the reader, ``config set`` and the generated docs all use.)

Keys read here (:data:`KNOWN_KEYS`): ``telemetry.shared_metrics.{enabled,send,endpoint}``,
``gateway.telemetry.session_segments.{on_compaction,max_turns}``, ``plugins.hook_callback_timeout``
and ``observability.trajectories.{enabled,dir,retention_days}`` (the trajectory store). Invalid values never stop the host: each falls back to its
default with a diagnostic. Every key of the schema works; a key this version does not read is
never accepted silently: the profile-local observability features (``observability.*``) are not
available in this version apart from the trajectory store, so the rest of that section, and unknown keys inside the sections above, are
reported with a warning (and refused by ``config set``) instead of being parsed and ignored.

A machine-managed overlay (``HERMES_MANAGED_CONFIG``) may set the other keys, but never enables
or disables shared metrics: ``telemetry.shared_metrics.*`` always comes from the profile's own,
raw file (CFG-64, 05 SM-7).
"""

from __future__ import annotations

import ipaddress
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from .alert_settings import DEFAULTS as ALERT_DEFAULTS
from .alert_settings import AlertSettings, alerts_from
from .alert_settings import KEYS as ALERT_KEYS
from .alert_settings import SECTIONS as ALERT_SECTIONS
from .diagnostics import Diagnostic, Diagnostics
from .errors import ConfigError
from .files import read_config_text
from .observability_settings import DEFAULTS as OBSERVABILITY_DEFAULTS
from .observability_settings import KEYS as OBSERVABILITY_KEYS
from .observability_settings import MAP_KEYS, ObservabilitySettings, observability_from
from .observability_settings import SECTIONS as OBSERVABILITY_SECTIONS
from .profile_paths import profile_path_problem
from .suggest import did_you_mean, hint
from .yaml_text import load_yaml_text

CONFIG_NAME: Final = "config.yaml"
MAX_HOOK_TIMEOUT: Final = 600.0

_send_warning_lock = threading.Lock()
_send_warned = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedMetricsSettings:
    """``telemetry.shared_metrics``: collection and transmission are separate opt-ins (CFG-65)."""

    enabled: bool = False
    send: bool = False
    endpoint: str | None = None
    """A usable endpoint, or ``None`` (missing or invalid: nothing is sent)."""

    @property
    def transmits(self) -> bool:
        """``True`` only when collection and sending are both on and an endpoint is set."""
        return self.enabled and self.send and self.endpoint is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSegmentSettings:
    """``gateway.telemetry.session_segments`` (spec 03 §14)."""

    on_compaction: bool = False
    max_turns: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class TrajectorySettings:
    """``observability.trajectories``: the profile's trajectory store (spec 06 §0, §7)."""

    enabled: bool = False
    dir: str = "trajectories"
    """The store directory, relative to ``$HERMES_HOME`` (or absolute)."""
    retention_days: int = 90
    """Trajectory files older than this many days are pruned; 0 keeps them forever."""

    def directory(self, home: Path) -> Path:
        """The store directory of the profile at ``home``."""
        return (home / Path(self.dir).expanduser()) if not Path(self.dir).expanduser().is_absolute() \
            else Path(self.dir).expanduser()


@dataclass(frozen=True, slots=True, kw_only=True)
class DashboardSettings:
    """``observability.dashboard``: the local dashboard's default address and its Jaeger UI (spec 06 §10)."""

    host: str = "127.0.0.1"
    port: int = 3001
    jaeger_url: str | None = None
    """Base URL of a Jaeger UI; the dashboard links runs and sessions to their traces there."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileSettings:
    """A snapshot of one profile's ``config.yaml`` (read once, reloaded explicitly; CFG-64a)."""

    home: Path
    path: Path
    exists: bool = False
    shared_metrics: SharedMetricsSettings = SharedMetricsSettings()
    session_segments: SessionSegmentSettings = SessionSegmentSettings()
    trajectories: TrajectorySettings = TrajectorySettings()
    observability: ObservabilitySettings = ObservabilitySettings()
    dashboard: DashboardSettings = DashboardSettings()
    """``observability.*``: the audit store, environment, quick OTel settings, pricing, logs, retention."""
    alerts: AlertSettings = AlertSettings()
    """``observability.alerts.*``: the alert evaluator's rules, delivery and notifiers."""
    hook_callback_timeout: float = 0.0
    hook_callback_timeout_set: bool = False
    """``True`` when ``plugins.hook_callback_timeout`` is present with a usable value."""
    diagnostics: tuple[Diagnostic, ...] = ()


def read_yaml_mapping(path: Path) -> tuple[dict[str, Any], str | None]:
    """The top-level mapping of a YAML file: ``({}, None)`` when missing, ``({}, reason)`` when unusable
    (a key written twice in one mapping included: :func:`~.yaml_text.check_unique_keys`)."""
    data, problem, _ = read_yaml_checked(path)
    return data, problem


def read_yaml_checked(path: Path) -> tuple[dict[str, Any], str | None, ConfigError | None]:
    """:func:`read_yaml_mapping` plus the typed error of a repeated key (``config.duplicate_key``), if any."""
    try:  # only a regular file below the size limit: a FIFO or /dev/zero must never hang the host
        text = read_config_text(path, code="config.invalid_file")
    except ConfigError as exc:
        return {}, None if exc.code == "pipeline.file_missing" else exc.message, None
    try:
        data = load_yaml_text(text, path)
    except ConfigError as exc:  # the one rule for repeated keys, as config get / set / validate apply it
        return {}, exc.message, exc
    except Exception as exc:
        return {}, f"is not valid YAML ({type(exc).__name__})", None
    if data is None:
        return {}, None, None
    if not isinstance(data, dict):
        return {}, "does not contain a mapping at the top level", None
    return data, None, None


def _get(data: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def endpoint_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable shared-metrics endpoint (https, or http on loopback)."""
    if not isinstance(value, str) or not value.strip():
        return "expected a URL string"
    try:
        parts = urlsplit(value.strip())
        host = parts.hostname or ""
    except ValueError:
        return "expected a valid URL"
    if parts.scheme == "https" and host:
        return None
    if parts.scheme == "http" and (host == "localhost" or _is_loopback(host)):
        return None
    return "expected an https:// URL (http:// only for localhost, 127.0.0.1 or ::1)"


def _is_loopback(host: str) -> bool:
    try:
        return host in ("127.0.0.1", "::1") or ipaddress.ip_address(host) in (
            ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
    except ValueError:
        return False


def hook_timeout_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable ``plugins.hook_callback_timeout`` (a number >= 0)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return "expected a number of seconds >= 0"
    return None


def max_turns_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable ``max_turns`` (an integer >= 0, never a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return "expected an integer >= 0"
    return None


def bool_problem(value: Any) -> str | None:
    """Why ``value`` is not a boolean."""
    return None if isinstance(value, bool) else "expected a boolean (true or false)"


def directory_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable directory name (a non-empty string)."""
    return profile_path_problem(value, "a directory path")


def retention_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable ``retention_days`` (an integer >= 0; 0 keeps files forever)."""
    return max_turns_problem(value)


def dashboard_host_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable dashboard bind address (a host name or IP address)."""
    return None if isinstance(value, str) and value.strip() and not any(c.isspace() or c in "/@" for c in value.strip()) \
        else "expected a host name or IP address"


def port_problem(value: Any) -> str | None:
    """Why ``value`` is not a TCP port (an integer 0..65535; 0 picks a free port)."""
    return None if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 65535 \
        else "expected a port number 0..65535"


def web_url_problem(value: Any) -> str | None:
    """Why ``value`` is not an http:// or https:// URL."""
    try:
        parts = urlsplit(value.strip()) if isinstance(value, str) else None
    except ValueError:
        parts = None
    return None if parts is not None and parts.scheme in ("http", "https") and parts.hostname \
        else "expected an http:// or https:// URL"


KNOWN_KEYS: Final = {
    "telemetry.shared_metrics.enabled": bool_problem,
    "telemetry.shared_metrics.send": bool_problem,
    "telemetry.shared_metrics.endpoint": endpoint_problem,
    "gateway.telemetry.session_segments.on_compaction": bool_problem,
    "gateway.telemetry.session_segments.max_turns": max_turns_problem,
    "plugins.hook_callback_timeout": hook_timeout_problem,
    "observability.trajectories.enabled": bool_problem,
    "observability.trajectories.dir": directory_problem,
    "observability.trajectories.retention_days": retention_problem,
    "observability.dashboard.host": dashboard_host_problem,
    "observability.dashboard.port": port_problem,
    "observability.dashboard.jaeger_url": web_url_problem,
    **OBSERVABILITY_KEYS,
    **ALERT_KEYS,
}
"""Keys this layer understands → validator returning a problem text or ``None``."""

DEFAULTS: Final = {
    "telemetry.shared_metrics.enabled": False, "telemetry.shared_metrics.send": False,
    "telemetry.shared_metrics.endpoint": None, "gateway.telemetry.session_segments.on_compaction": False,
    "gateway.telemetry.session_segments.max_turns": 0, "plugins.hook_callback_timeout": 0,
    "observability.trajectories.enabled": False, "observability.trajectories.dir": "trajectories",
    "observability.trajectories.retention_days": 90,
    "observability.dashboard.host": "127.0.0.1", "observability.dashboard.port": 3001,
    "observability.dashboard.jaeger_url": None,
    **OBSERVABILITY_DEFAULTS,
    **ALERT_DEFAULTS,
}

OWNED_SECTIONS: Final = ("telemetry.shared_metrics", "gateway.telemetry.session_segments",
                         "observability.trajectories", "observability.dashboard", *OBSERVABILITY_SECTIONS,
                         *ALERT_SECTIONS)
"""Sections whose every key belongs to this schema (elsewhere ``config.yaml`` holds the agent's own keys)."""

UNAVAILABLE: Final = {
    "observability": "the profile-local observability features other than the trajectory store, the audit "
                     "store, environment, pricing, memory_tools, the quick OTel settings, logs, retention, the dashboard and "
                     "the alerts are not available in this version; nothing reads this key",
}
"""Top-level sections reserved for features this version does not have → why they are refused."""


def _available(key: str) -> bool:
    """Whether ``key`` is, or lies inside, a section of a reserved top level that this version reads."""
    if key in KNOWN_KEYS or any(key.startswith(table + ".") for table in MAP_KEYS):  # a table's entries are data
        return True
    return any(key == owned or key.startswith(owned + ".") for owned in OWNED_SECTIONS)


def unavailable_reason(key: str) -> str | None:
    """Why ``key`` (dotted) names a feature this version does not have, or ``None``."""
    if key in KNOWN_KEYS or _available(key):
        return None
    return UNAVAILABLE.get(key.split(".", 1)[0])


def suggest_key(key: str) -> str | None:
    """The known key closest to ``key`` ("did you mean"), or ``None``."""
    import difflib

    matches = difflib.get_close_matches(key, list(KNOWN_KEYS), n=1, cutoff=0.6)
    return matches[0] if matches else None


def clamp_note(key: str, value: Any) -> str | None:
    """What the engine will do differently from what ``value`` says (for ``config set``), or ``None``."""
    if key == "plugins.hook_callback_timeout" and hook_timeout_problem(value) is None and value > MAX_HOOK_TIMEOUT:
        return f"{key} {value} will be clamped to {MAX_HOOK_TIMEOUT:g} seconds (the maximum)"
    return None


def _unread_keys(raw: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(dotted key, why)`` of keys in ``raw`` that belong to this schema's sections but that this
    version does not read."""
    out: list[tuple[str, str]] = []
    for top, reason in UNAVAILABLE.items():
        node = raw.get(top) if isinstance(raw, Mapping) else None
        if node is None and top not in raw:
            continue
        if not isinstance(node, Mapping):
            out.append((top, reason))
            continue
        for name in node:  # the sections of this top level that this version reads are checked below
            dotted = f"{top}.{name}"
            if not _available(dotted):
                out.append((dotted, reason))
    for section in OWNED_SECTIONS:
        present, node = _get(raw, section)
        if present and isinstance(node, Mapping):
            for name in node:
                dotted = f"{section}.{name}"
                if dotted not in KNOWN_KEYS:
                    hint = suggest_key(dotted)
                    out.append((dotted, "unknown key; ignored" + (f" (did you mean {hint}?)" if hint else "")))
    return out


TOP_LEVEL_CUTOFF: Final = 0.8
"""Closeness a top-level key needs to be taken for a misspelling of this schema's (the rest of the file's top
level is the agent's own, so only near misses are named)."""


def top_level_keys() -> tuple[str, ...]:
    """The top-level keys this schema reads (``observability``, ``telemetry``, ``plugins`` ...)."""
    return tuple(sorted({key.split(".", 1)[0] for key in (*KNOWN_KEYS, *UNAVAILABLE)}))


def misspelt_top_level(raw: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(key, meant)`` for each top-level key of ``raw`` that is not one of :func:`top_level_keys` but reads as
    one: the same after folding case, full-width and Cyrillic / Greek look-alike letters, or a near miss."""
    tops = top_level_keys()
    out: list[tuple[str, str]] = []
    for key in raw if isinstance(raw, Mapping) else ():
        if isinstance(key, str) and key not in tops:
            meant = did_you_mean(key, tops, cutoff=TOP_LEVEL_CUTOFF)
            if meant is not None:
                out.append((key, meant))
    return out


def _overlay(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _overlay(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, Mapping) \
            else value
    return out


def shared_metrics_from(raw: Mapping[str, Any], diagnostics: Diagnostics, source: str) -> SharedMetricsSettings:
    """``telemetry.shared_metrics`` from the profile's raw file (CFG-64..CFG-66)."""
    values: dict[str, Any] = {}
    for key in ("enabled", "send"):
        present, value = _get(raw, f"telemetry.shared_metrics.{key}")
        values[key] = value is True
        if present and not isinstance(value, bool):
            diagnostics.warning("config.invalid_value", "expected a boolean; treated as false",
                                field=f"telemetry.shared_metrics.{key}", source=source)
    present, endpoint = _get(raw, "telemetry.shared_metrics.endpoint")
    if present:
        problem = endpoint_problem(endpoint)
        if problem:
            diagnostics.error("shared_metrics.invalid_endpoint", f"{problem}; nothing is sent",
                              field="telemetry.shared_metrics.endpoint", source=source)
        else:
            values["endpoint"] = endpoint.strip()
    if values["send"] and not values["enabled"]:
        global _send_warned
        with _send_warning_lock:
            first, _send_warned = not _send_warned, True
        diagnostics.warning("shared_metrics.send_without_enabled",
                            "telemetry.shared_metrics.send is true but enabled is not; nothing is collected or sent",
                            field="telemetry.shared_metrics.send", source=source, log=first)
    return SharedMetricsSettings(**values)


def trajectories_from(raw: Mapping[str, Any], diagnostics: Diagnostics, source: str) -> TrajectorySettings:
    """``observability.trajectories`` (an invalid value falls back to its default with a warning)."""
    values: dict[str, Any] = {}
    for key, check in (("enabled", bool_problem), ("dir", directory_problem), ("retention_days", retention_problem)):
        dotted = f"observability.trajectories.{key}"
        present, value = _get(raw, dotted)
        if not present:
            continue
        problem = KNOWN_KEYS[dotted](value) if check is not None else None
        if problem:
            diagnostics.warning("config.invalid_value", f"{problem}; the default applies", field=dotted, source=source)
        else:
            values[key] = value.strip() if isinstance(value, str) else value
    return TrajectorySettings(**values)


def dashboard_from(raw: Mapping[str, Any], diagnostics: Diagnostics, source: str) -> DashboardSettings:
    """``observability.dashboard`` (an invalid value falls back to its default with a warning)."""
    values: dict[str, Any] = {}
    for key in ("host", "port", "jaeger_url"):
        dotted = f"observability.dashboard.{key}"
        present, value = _get(raw, dotted)
        if not present:
            continue
        problem = KNOWN_KEYS[dotted](value)
        if problem:
            diagnostics.warning("config.invalid_value", f"{problem}; the default applies", field=dotted, source=source)
        else:
            values[key] = value.strip() if isinstance(value, str) else value
    return DashboardSettings(**values)


def load_profile_settings(home: str | Path, *, managed: str | Path | None = None,
                          log: bool = True) -> ProfileSettings:
    """Read ``<home>/config.yaml`` (plus an optional managed overlay) into a snapshot.

    A missing file or a malformed section yields the defaults, never an error (CFG-69).
    """
    home = Path(home).expanduser()
    path = home / CONFIG_NAME
    source = str(path)
    diagnostics = Diagnostics(log=log)
    raw, problem, error = read_yaml_checked(path)
    if error is not None:  # the same error config get / set / validate give, not a silent last-one-wins
        diagnostics.error(error.code, f"{error.message}; the file is not used, defaults apply", source=source,
                          line=error.line, field=error.key)
    elif problem:
        diagnostics.warning("config.invalid_value", f"{CONFIG_NAME} {problem}; defaults apply", source=source)
    effective = raw
    if managed is not None:
        overlay, overlay_problem = read_yaml_mapping(Path(managed))
        if overlay_problem:
            diagnostics.warning("config.invalid_value", f"managed overlay {overlay_problem}; ignored",
                                source=str(managed))
        present, _ = _get(overlay, "telemetry.shared_metrics")
        if present:
            diagnostics.info("config.managed_value_ignored", "a managed overlay cannot enable or disable shared "
                             "metrics; telemetry.shared_metrics is read from the profile's own file",
                             field="telemetry.shared_metrics", source=str(managed))
        effective = _overlay(raw, overlay)
    values: dict[str, Any] = {"home": home, "path": path, "exists": path.is_file()}
    values["shared_metrics"] = shared_metrics_from(raw, diagnostics, source)
    segments: dict[str, Any] = {}
    for key, check in (("on_compaction", bool_problem), ("max_turns", max_turns_problem)):
        dotted = f"gateway.telemetry.session_segments.{key}"
        present, value = _get(effective, dotted)
        if not present:
            continue
        problem = check(value)
        if problem:
            diagnostics.warning("config.invalid_value", f"{problem}; the default applies", field=dotted, source=source)
        else:
            segments[key] = value
    values["session_segments"] = SessionSegmentSettings(**segments)
    values["trajectories"] = trajectories_from(effective, diagnostics, source)
    values["observability"] = observability_from(effective, diagnostics, source)
    values["alerts"] = alerts_from(effective, diagnostics, source)
    values["dashboard"] = dashboard_from(effective, diagnostics, source)
    present, timeout = _get(effective, "plugins.hook_callback_timeout")
    if present:
        problem = hook_timeout_problem(timeout)
        if problem:
            diagnostics.warning("config.invalid_value", f"{problem}; hang protection stays off",
                                field="plugins.hook_callback_timeout", source=source)
        else:
            values["hook_callback_timeout"] = min(float(timeout), MAX_HOOK_TIMEOUT)
            values["hook_callback_timeout_set"] = True
    for dotted, why in _unread_keys(effective):
        diagnostics.warning("config.unsupported_key", why, field=dotted, source=source)
    for key, meant in misspelt_top_level(raw):
        diagnostics.warning("config.unknown_key", f"unknown top-level key {key!r} is ignored"
                            + (" (it contains look-alike non-ASCII letters)" if not key.isascii() else "")
                            + hint(meant), field=key, source=source, suggestion=meant)
    values["diagnostics"] = tuple(diagnostics.items)
    return ProfileSettings(**values)


def read_shared_metrics(home: str | Path) -> SharedMetricsSettings:
    """Re-read ``telemetry.shared_metrics`` from the profile's own file, uncached.

    The sender calls this before every package (CFG-67, 05 SM-72).
    """
    path = Path(home).expanduser() / CONFIG_NAME
    raw, _ = read_yaml_mapping(path)
    return shared_metrics_from(raw, Diagnostics(log=False), str(path))
