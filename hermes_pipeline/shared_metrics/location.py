"""Where a profile's shared-metrics store lives (spec 05 §7): stated once, importable without SQLite."""

from __future__ import annotations

from pathlib import Path

__all__ = ["database_path", "store_directory"]


def store_directory(hermes_home: Path) -> Path:
    """``$HERMES_HOME/telemetry/shared_metrics``."""
    return hermes_home / "telemetry" / "shared_metrics"


def database_path(hermes_home: Path) -> Path:
    """``$HERMES_HOME/telemetry/shared_metrics/metrics.sqlite3``."""
    return store_directory(hermes_home) / "metrics.sqlite3"
