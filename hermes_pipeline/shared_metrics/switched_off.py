"""What a profile with shared metrics switched off still does: close consent windows (SM-89).

Kept apart from :mod:`.api` so that opening such a profile imports only the store and the consent
reconciler, not the stream listener, the packager or jsonschema (:mod:`.profile_entry`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Final

from .clock import Clock, SystemClock
from .consent import reconcile
from .sender import endpoint_problem, warn_once
from .store import MetricsStore

__all__ = ["reconcile_consent", "switch_off"]

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")


def reconcile_consent(hermes_home: Path | str, *, enabled: bool, send: bool, endpoint: str | None = None,
                      clock: Clock | None = None) -> bool:
    """Run the consent reconciler for a profile now (SM-87, SM-89); returns the resolved send decision.

    Call it after a setup wizard or a CLI command wrote ``telemetry.shared_metrics.send`` (or
    ``enabled`` / ``endpoint``): consent windows are written only by the reconciler (SM-86). Nothing is
    created when sending is off and no store exists. Never raises; a failure is logged.
    """
    allowed = enabled is True and send is True and endpoint_problem(endpoint) is None
    store = MetricsStore(hermes_home)
    if not allowed and not store.exists():
        return allowed
    try:
        conn = store.connect()
        try:
            reconcile(conn, allowed, (clock or SystemClock()).now())
        finally:
            conn.close()
    except Exception as exc:
        logger.warning("hermes_pipeline: shared metrics: consent reconcile failed: %s", exc)
    return allowed


def switch_off(home: Path, *, send: bool, clock: Clock) -> None:
    """Collection is off: warn once if ``send`` is on anyway, and close an existing store's consent window."""
    if send is True:
        warn_once("send-without-enabled", logging.WARNING,
                  "hermes_pipeline: telemetry.shared_metrics.send is true but enabled is not; nothing is "
                  "collected or sent")
    reconcile_consent(home, enabled=False, send=False, clock=clock)
