"""The shared-metrics first-party consumer of :func:`hermes_pipeline.profile.open_profile`.

A profile with shared metrics off (the default) only runs the consent reconciler
(:mod:`.switched_off`), and only when a store exists or sending is on; the collection machinery (:mod:`.api`:
stream listener, accounting, packager,
jsonschema) is imported only when the profile's ``config.yaml`` enables shared metrics.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .location import database_path

if TYPE_CHECKING:
    from .api import SharedMetrics

__all__ = ["attach_for_profile"]


def attach_for_profile(profile: Any) -> SharedMetrics | None:
    """Start the profile's shared metrics (see :func:`.api.attach_for_profile`); ``None`` when off."""
    settings = profile.settings.shared_metrics
    if settings.enabled is True:
        from .api import attach_for_profile as attach

        return attach(profile)
    home = Path(profile.home).expanduser()
    if settings.send is not True and not database_path(home).is_file():
        return None  # off, never sent and no store: nothing to reconcile, so SQLite is not even imported
    from .clock import SystemClock
    from .switched_off import switch_off

    switch_off(home, send=settings.send is True, clock=SystemClock())
    return None
