"""A minimal, uncached reader of ``telemetry.shared_metrics.*`` in the profile's own ``config.yaml``.

Shared metrics read only the profile's own file (SM-7): no managed overlay, no environment
override. Only the YAML boolean ``true`` turns ``enabled`` or ``send`` on (SM-6). The sender calls
this before every package (SM-72); the CLI uses it for ``metrics status`` and ``metrics send``. The
config layer's loader is the full implementation; this reader exists so that this sink does not
import the config layer (one direction of dependencies). The file is read with the host layer's
:func:`~hermes_pipeline.host.profile_files.read_regular_bytes` (the sender's thread, before every package): a
FIFO, a device, a directory or a file over :data:`MAX_BYTES` is refused at once, never waited for, warned once
naming it, and read as everything off (fail-closed, SM-72).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")

CONFIG_NAME = "config.yaml"
MAX_BYTES = 1024 * 1024
"""Larger files are not a profile configuration (the config layer refuses them too)."""


@dataclass(frozen=True, slots=True)
class ProfileConsent:
    """``telemetry.shared_metrics`` as written in the profile's own file."""

    enabled: bool = False
    send: bool = False
    endpoint: str | None = None

    def as_tuple(self) -> tuple[bool, bool, str | None]:
        """``(enabled, send, endpoint)``: the shape the sender's consent callable returns."""
        return self.enabled, self.send, self.endpoint


def read_profile_consent(hermes_home: Path | str) -> ProfileConsent:
    """Read ``$HERMES_HOME/config.yaml`` now; a missing or unreadable file means everything off."""
    from ruamel.yaml import YAML

    from ..host.profile_files import ProfileFileError, read_regular_bytes, warn_unreadable

    path = Path(hermes_home).expanduser() / CONFIG_NAME
    try:  # only a regular file, and only its first MiB: a FIFO or /dev/zero here must never hang the sender
        text = read_regular_bytes(path, MAX_BYTES).decode("utf-8")
    except ProfileFileError as exc:
        warn_unreadable(logger, exc, "shared metrics: profile configuration", event="shared_metrics_config_unreadable")
        return ProfileConsent()
    except (OSError, UnicodeDecodeError):
        return ProfileConsent()
    try:
        raw: Any = YAML(typ="safe", pure=True).load(text)
    except Exception:
        return ProfileConsent()
    section: Any = raw
    for key in ("telemetry", "shared_metrics"):
        section = section.get(key) if isinstance(section, dict) else None
    if not isinstance(section, dict):
        return ProfileConsent()
    endpoint = section.get("endpoint")
    return ProfileConsent(section.get("enabled") is True, section.get("send") is True,
                          endpoint.strip() if isinstance(endpoint, str) and endpoint.strip() else None)


def consent_reader(hermes_home: Path | str) -> Any:
    """A zero-argument callable returning ``(enabled, send, endpoint)`` re-read from the file each call."""
    home = Path(hermes_home)
    return lambda: read_profile_consent(home).as_tuple()
