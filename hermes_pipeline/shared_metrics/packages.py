"""Immutable daily delta packages: packaging (SM-53, SM-54, SM-57) and export to ``outbox/`` (SM-55, SM-56).

A packaging run turns every counter delta (``value - packaged_value``) into one v2 package per
(period, resource tuple), validated against the closed schema before anything is committed; the
same transaction advances ``packaged_value`` and the ``data`` consent mark, so a crash or a
concurrent run never loses or duplicates a delta. Export writes each unexported package row to
``outbox/<package_id>.json`` with write-to-temporary, ``fsync`` and rename; a retry rewrites the
same ``package_id`` with the same bytes. Package files are never edited afterwards.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from ..export.atomic import write_atomically as atomic_replace
from .clock import day_start, period_bounds, stamp
from ..export.locks import file_lock
from .schemas import V2, PackageInvalid, validate_package
from .store import MetricsStore, ensure_install_id, transaction

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")

LEGACY_MODEL_CALL: Final = "hermes.model_call.count"
_V2_MODEL_CALL_KEYS: Final = ("call_role", "locality", "model_family", "outcome", "provider_family")
_TMP_SUFFIX: Final = ".tmp"


@dataclass
class ExportResult:
    """What one packaging-and-export attempt did."""

    created: list[str] = field(default_factory=list)
    """``package_id`` of every package committed by this run."""
    exported: list[str] = field(default_factory=list)
    """``package_id`` of every file written to ``outbox/`` by this run."""
    due: bool = False
    """Whether a packaging run was due (always ``True`` when forced)."""
    error: str | None = None
    """Why packaging or export failed (committed state is then unchanged), else ``None``."""
    pruned: dict[str, int] = field(default_factory=dict)
    """Rows and files removed by retention after the export (SM-63)."""


def canonical(value: Any) -> str:
    """Canonical compact JSON: sorted keys, no spaces (``dimensions_json``, ``payload_json``)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def file_bytes(payload_json: str) -> bytes:
    """The bytes of ``outbox/<package_id>.json``: 2-space indent, sorted keys, UTF-8 (SM-55)."""
    return (json.dumps(json.loads(payload_json), indent=2, sort_keys=True) + "\n").encode("utf-8")


def is_due(conn: sqlite3.Connection, now: datetime) -> bool:
    """SM-53: due unless a ``package_outbox`` row was created on the current UTC date."""
    start = day_start(now)
    row = conn.execute("SELECT 1 FROM package_outbox WHERE created_at >= ? AND created_at < ? LIMIT 1",
                       (stamp(start), stamp(start + timedelta(days=1)))).fetchone()
    return row is None


def _legacy_dimensions(dims: dict[str, Any]) -> dict[str, Any]:
    """Drain rule for retired ``hermes.model_call.count`` rows of the v1 era (ten dimensions).

    The v2 contract keeps the five routing dimensions; rows that carry the v1 latency, token, cost
    and retry buckets are coarsened to those five (and summed), never dropped, so pending legacy
    counts drain without loss (SM-23, SM-60). Rows already in the v2 shape pass unchanged.
    """
    if set(_V2_MODEL_CALL_KEYS) <= set(dims):
        return {k: dims[k] for k in _V2_MODEL_CALL_KEYS}
    return dims


def _metrics_of(rows: Iterable[tuple[str, str, int]]) -> list[dict[str, Any]]:
    merged: dict[tuple[str, str], int] = {}
    dims_of: dict[tuple[str, str], Any] = {}
    for metric, dims_json, delta in rows:
        try:
            dims = json.loads(dims_json)
        except ValueError:
            dims = dims_json  # left as text: the schema rejects it (SM-4, no clean-up)
        if metric == LEGACY_MODEL_CALL and isinstance(dims, dict):
            dims = _legacy_dimensions(dims)
        key = (metric, canonical(dims))
        merged[key] = merged.get(key, 0) + delta
        dims_of[key] = dims
    return [{"name": name, "type": "counter", "dimensions": dims_of[(name, dims)], "value": value}
            for (name, dims), value in sorted(merged.items())]


def create_packages(conn: sqlite3.Connection, now: datetime, *, force: bool = False) -> tuple[bool, list[str]]:
    """One packaging run in one write transaction (SM-54); returns ``(due, package_ids)``.

    Raises :class:`PackageInvalid` (after rolling everything back) if any package fails the v2
    schema, for example because a stored resource tuple was tampered with (SM-45).
    """
    created: list[str] = []
    with transaction(conn):
        if not force and not is_due(conn, now):
            return False, created
        rows = conn.execute("""
            SELECT period_start, hermes_version, os_family, architecture, install_method, metric_name,
                   dimensions_json, value, packaged_value, rowid
            FROM counter_aggregates WHERE value > packaged_value
            ORDER BY period_start, hermes_version, os_family, architecture, install_method""").fetchall()
        if not rows:
            return True, created
        install_id = ensure_install_id(conn)
        generated = stamp(now)
        groups: dict[tuple[str, str, str, str, str], list[tuple[Any, ...]]] = {}
        for row in rows:
            groups.setdefault((row[0], row[1], row[2], row[3], row[4]), []).append(row)
        max_end = ""
        for (period, version, os_family, arch, method), members in groups.items():
            try:
                start, end = period_bounds(period)
            except ValueError:
                raise PackageInvalid(f"counter period {period!r} is not a UTC date") from None
            package_id = str(uuid.uuid4())
            payload: dict[str, Any] = {
                "schema_version": V2,
                "package_id": package_id,
                "install_id": install_id,
                "period_start": start,
                "period_end": end,
                "generated_at": generated,
                "resource": {"architecture": arch, "hermes_version": version, "install_method": method,
                             "os_family": os_family},
                "metrics": _metrics_of((m[5], m[6], m[7] - m[8]) for m in members),
            }
            validate_package(payload, expect=V2)
            conn.execute("""INSERT INTO package_outbox (package_id, period_start, period_end, payload_json,
                                                         created_at) VALUES (?, ?, ?, ?, ?)""",
                         (package_id, start, end, canonical(payload), generated))
            conn.executemany("UPDATE counter_aggregates SET packaged_value = value WHERE rowid = ?",
                             [(m[9],) for m in members])
            created.append(package_id)
            max_end = max(max_end, end)
        raise_data_mark(conn, max_end)
    return True, created


def raise_data_mark(conn: sqlite3.Connection, period_end: str) -> None:
    """SM-54/SM-86: the package writer raises the ``data`` consent mark to at least ``period_end``
    (inside the writer's transaction; the mark never moves backwards)."""
    conn.execute("""INSERT INTO consent_marks (name, stamp) VALUES ('data', ?)
                    ON CONFLICT(name) DO UPDATE SET stamp = MAX(stamp, excluded.stamp)""", (period_end,))


# ---------------------------------------------------------------------- export


def write_atomically(directory: Path, name: str, data: bytes) -> Path:
    """Write ``directory/name`` via a temporary file in the same directory, ``fsync`` and rename (0600)."""
    final = directory / name
    atomic_replace(final, data)
    return final


def _remove_stale_temporaries(outbox: Path) -> None:
    """Remove temporary files left by a crashed export (the caller holds the export lock)."""
    for entry in outbox.glob(f".*{_TMP_SUFFIX}"):
        try:
            entry.unlink()
        except OSError:
            pass


def export_pending(store: MetricsStore, conn: sqlite3.Connection, now: datetime) -> list[str]:
    """SM-55: write every unexported package to ``outbox/`` and set ``exported_at``; returns the ids written."""
    written: list[str] = []
    with file_lock(store.directory / ".export.lock"):
        _remove_stale_temporaries(store.outbox)
        rows = conn.execute("""SELECT package_id, payload_json FROM package_outbox WHERE exported_at IS NULL
                               ORDER BY created_at, package_id""").fetchall()
        for package_id, payload_json in rows:
            write_atomically(store.outbox, f"{package_id}.json", file_bytes(payload_json))
            with transaction(conn):
                conn.execute("UPDATE package_outbox SET exported_at = ? WHERE package_id = ? AND exported_at IS NULL",
                             (stamp(now), package_id))
            written.append(package_id)
    return written


def package_and_export(store: MetricsStore, now: datetime, *, force: bool = False) -> ExportResult:
    """Package if due (or ``force``), export pending packages, then prune (SM-53..57, SM-63).

    Never raises for packaging, export or prune failures: they are logged and reported in
    :attr:`ExportResult.error` (a prune failure never fails a committed export, SM-64).
    """
    from .retention import prune

    result = ExportResult()
    try:
        conn = store.connect()
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"[:500]
        logger.warning("hermes_pipeline: shared metrics: cannot open the store: %s", result.error)
        return result
    try:
        try:
            result.due, result.created = create_packages(conn, now, force=force)
        except PackageInvalid as exc:
            result.error = f"package failed schema validation: {exc}"[:500]
            logger.error("hermes_pipeline: shared metrics: packaging rolled back; %s", result.error)
        except Exception as exc:
            result.error = f"{type(exc).__name__}: {exc}"[:500]
            logger.warning("hermes_pipeline: shared metrics: packaging failed: %s", result.error)
        try:
            result.exported = export_pending(store, conn, now)
        except Exception as exc:
            result.error = result.error or f"export failed: {type(exc).__name__}: {exc}"[:500]
            logger.warning("hermes_pipeline: shared metrics: export failed: %s", exc)
        result.pruned = prune(store, conn, now)
    finally:
        conn.close()
    return result
