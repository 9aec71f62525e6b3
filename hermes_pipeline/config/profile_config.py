"""The profile-owned ``$HERMES_HOME/config.yaml`` (spec 03 §13, 05 §2, 06 §0).

Keys read here: ``telemetry.shared_metrics.{enabled,send,endpoint}``,
``gateway.telemetry.session_segments.{on_compaction,max_turns}``,
``plugins.hook_callback_timeout`` and ``observability.*`` (kept for the features of spec 06).
Invalid values never stop the host: each falls back to its default with a diagnostic.

A machine-managed overlay (``HERMES_MANAGED_CONFIG``) may set the other keys, but never enables
or disables shared metrics: ``telemetry.shared_metrics.*`` always comes from the profile's own,
raw file (CFG-64, 05 SM-7).
"""

from __future__ import annotations

import ipaddress
import math
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from .diagnostics import Diagnostic, Diagnostics
from .errors import ConfigError
from .files import read_config_text

CONFIG_NAME: Final = "config.yaml"
MAX_HOOK_TIMEOUT: Final = 600.0

_send_warning_lock = threading.Lock()
_send_warned = False


class SharedMetricsSettings(BaseModel):
    """``telemetry.shared_metrics``: collection and transmission are separate opt-ins (CFG-65)."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = False
    send: bool = False
    endpoint: str | None = None
    """A usable endpoint, or ``None`` (missing or invalid: nothing is sent)."""

    @property
    def transmits(self) -> bool:
        """``True`` only when collection and sending are both on and an endpoint is set."""
        return self.enabled and self.send and self.endpoint is not None


class SessionSegmentSettings(BaseModel):
    """``gateway.telemetry.session_segments`` (spec 03 §14)."""

    model_config = ConfigDict(frozen=True)

    on_compaction: bool = False
    max_turns: int = 0


class ProfileSettings(BaseModel):
    """A snapshot of one profile's ``config.yaml`` (read once, reloaded explicitly; CFG-64a)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    home: Path
    path: Path
    exists: bool = False
    shared_metrics: SharedMetricsSettings = SharedMetricsSettings()
    session_segments: SessionSegmentSettings = SessionSegmentSettings()
    hook_callback_timeout: float = 0.0
    hook_callback_timeout_set: bool = False
    """``True`` when ``plugins.hook_callback_timeout`` is present with a usable value."""
    environment: Literal["development", "production"] = "development"
    observability: dict[str, Any] = Field(default_factory=dict)
    """The raw ``observability:`` section (profile-local features of spec 06)."""
    diagnostics: tuple[Diagnostic, ...] = ()


def read_yaml_mapping(path: Path) -> tuple[dict[str, Any], str | None]:
    """The top-level mapping of a YAML file: ``({}, None)`` when missing, ``({}, reason)`` when unusable."""
    from ruamel.yaml import YAML

    try:  # only a regular file below the size limit: a FIFO or /dev/zero must never hang the host
        text = read_config_text(path, code="config.invalid_file")
    except ConfigError as exc:
        return {}, None if exc.code == "pipeline.file_missing" else exc.message
    try:
        data = YAML(typ="safe", pure=True).load(text)
    except Exception as exc:
        return {}, f"is not valid YAML ({type(exc).__name__})"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "does not contain a mapping at the top level"
    return data, None


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


def environment_problem(value: Any) -> str | None:
    """Why ``value`` is not ``development`` / ``production``."""
    return None if value in ("development", "production") else "expected 'development' or 'production'"


KNOWN_KEYS: Final = {
    "telemetry.shared_metrics.enabled": bool_problem,
    "telemetry.shared_metrics.send": bool_problem,
    "telemetry.shared_metrics.endpoint": endpoint_problem,
    "gateway.telemetry.session_segments.on_compaction": bool_problem,
    "gateway.telemetry.session_segments.max_turns": max_turns_problem,
    "plugins.hook_callback_timeout": hook_timeout_problem,
    "observability.environment": environment_problem,
}
"""Keys this layer understands → validator returning a problem text or ``None``."""

DEFAULTS: Final = {
    "telemetry.shared_metrics.enabled": False, "telemetry.shared_metrics.send": False,
    "telemetry.shared_metrics.endpoint": None, "gateway.telemetry.session_segments.on_compaction": False,
    "gateway.telemetry.session_segments.max_turns": 0, "plugins.hook_callback_timeout": 0,
    "observability.environment": "development",
}


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


def load_profile_settings(home: str | Path, *, managed: str | Path | None = None,
                          log: bool = True) -> ProfileSettings:
    """Read ``<home>/config.yaml`` (plus an optional managed overlay) into a snapshot.

    A missing file or a malformed section yields the defaults, never an error (CFG-69).
    """
    home = Path(home).expanduser()
    path = home / CONFIG_NAME
    source = str(path)
    diagnostics = Diagnostics(log=log)
    raw, problem = read_yaml_mapping(path)
    if problem:
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
    present, timeout = _get(effective, "plugins.hook_callback_timeout")
    if present:
        problem = hook_timeout_problem(timeout)
        if problem:
            diagnostics.warning("config.invalid_value", f"{problem}; hang protection stays off",
                                field="plugins.hook_callback_timeout", source=source)
        else:
            values["hook_callback_timeout"] = min(float(timeout), MAX_HOOK_TIMEOUT)
            values["hook_callback_timeout_set"] = True
    present, observability = _get(effective, "observability")
    if present and isinstance(observability, dict):
        values["observability"] = dict(observability)
        if "environment" in observability:
            problem = environment_problem(observability["environment"])
            if problem:
                diagnostics.warning("config.invalid_value", f"{problem}; development applies",
                                    field="observability.environment", source=source)
            else:
                values["environment"] = observability["environment"]
    elif present:
        diagnostics.warning("config.invalid_value", "expected a mapping; ignored", field="observability",
                            source=source)
    values["diagnostics"] = tuple(diagnostics.items)
    return ProfileSettings(**values)


def read_shared_metrics(home: str | Path) -> SharedMetricsSettings:
    """Re-read ``telemetry.shared_metrics`` from the profile's own file, uncached.

    The sender calls this before every package (CFG-67, 05 SM-72).
    """
    path = Path(home).expanduser() / CONFIG_NAME
    raw, _ = read_yaml_mapping(path)
    return shared_metrics_from(raw, Diagnostics(log=False), str(path))
