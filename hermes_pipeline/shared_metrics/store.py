"""The SQLite store ``$HERMES_HOME/telemetry/shared_metrics/metrics.sqlite3`` (spec 05 §7).

(Over 400 lines on purpose: every write of the store shares its transaction discipline and schema;
splitting them would split the statement of the schema from its writers.)

Layout, permissions (0700 directories, 0600 files, SM-46), schema creation and the 1 → 2
migration (SM-51, SM-52), and the transactional writes of the subscriber: counter upserts
(SM-49), the rolling 24-hour ``hermes.client.active`` compare-and-set (SM-34), the once-per-install
latches (SM-36), ``install_id`` (SM-68) and local latency samples (SM-50). Every write runs in one
``BEGIN IMMEDIATE`` transaction (SM-47); each thread uses its own connection.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from .clock import parse_stamp, period_of, stamp
from .location import database_path, store_directory
from .resource import Resource

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")

SCHEMA_VERSION: Final = "2"
BUSY_MS: Final = 250
SCHEMA_BUSY_MS: Final = 5000
ACTIVE_WINDOW: Final = timedelta(hours=24)

DIR_MODE: Final = 0o700
FILE_MODE: Final = 0o600

CLIENT_ACTIVE_KEY: Final = "client_active_recorded_at"
FIRST_USABLE_KEY: Final = "first_usable_recorded_at"
FIRST_SUCCESS_KEY: Final = "first_successful_task_recorded_at"
INSTALL_ID_KEY: Final = "install_id"

Op = tuple[Any, ...]
"""A subscriber write: ``("inc", period, metric, dims_json, n)``, ``("active", now)``,
``("latch", key, metric, now)`` or ``("sample", kind, recorded_at, ms)``."""


class StoreError(Exception):
    """The shared-metrics store cannot be used (unknown schema version, unreadable file)."""


class StoreBusy(StoreError):
    """Another process held the write lock past the busy timeout; the write was abandoned (SM-47)."""


_PACKAGE_OUTBOX: Final = """
CREATE TABLE package_outbox (
    package_id TEXT PRIMARY KEY,
    period_start TEXT NOT NULL,
    period_end TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    exported_at TEXT NULL
)"""
_SEND_COLUMNS: Final = (
    ("sent_at", "TEXT NULL"),
    ("send_state", "TEXT NULL CHECK (send_state IN ('pending', 'sent', 'rejected'))"),
    ("send_attempts", "INTEGER NOT NULL DEFAULT 0"),
    ("next_attempt_at", "TEXT NULL"),
    ("last_error", "TEXT NULL"),
    ("sent_install_id", "TEXT NULL"),
    ("claim_token", "TEXT NULL"),
)
_COUNTERS: Final = """
CREATE TABLE counter_aggregates (
    period_start TEXT NOT NULL,
    metric_name TEXT NOT NULL,
    hermes_version TEXT NOT NULL,
    os_family TEXT NOT NULL,
    architecture TEXT NOT NULL,
    install_method TEXT NOT NULL,
    dimensions_json TEXT NOT NULL,
    value INTEGER NOT NULL,
    packaged_value INTEGER NOT NULL DEFAULT 0,
    CHECK (packaged_value >= 0 AND packaged_value <= value),
    PRIMARY KEY (period_start, metric_name, hermes_version, os_family, architecture, install_method,
                 dimensions_json)
)"""
_OTHER_TABLES: Final = (
    "CREATE TABLE IF NOT EXISTS telemetry_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS send_consent_windows (
        opened_at TEXT NOT NULL, last_confirmed_at TEXT NOT NULL, closed_at TEXT NULL)""",
    """CREATE UNIQUE INDEX IF NOT EXISTS send_consent_windows_one_open
        ON send_consent_windows ((closed_at IS NULL)) WHERE closed_at IS NULL""",
    """CREATE TABLE IF NOT EXISTS local_latency_samples (
        metric_name TEXT NOT NULL CHECK (metric_name IN ('task', 'model_call')),
        recorded_at TEXT NOT NULL,
        duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0))""",
    "CREATE INDEX IF NOT EXISTS local_latency_samples_by_value ON local_latency_samples (metric_name, duration_ms)",
)
_INDEXES: Final = (
    "CREATE INDEX IF NOT EXISTS package_outbox_created ON package_outbox (created_at)",
    "CREATE INDEX IF NOT EXISTS package_outbox_unexported ON package_outbox (exported_at)",
)

_ready_lock = threading.Lock()
_ready: set[str] = set()


def secure_dir(path: Path) -> None:
    """Create ``path`` (and parents) and make it owner-only (0700)."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    os.chmod(path, DIR_MODE)


def secure_file(path: Path) -> None:
    """Make an existing file owner-only (0600); a missing file is ignored."""
    try:
        os.chmod(path, FILE_MODE)
    except FileNotFoundError:
        pass


class MetricsStore:
    """Paths of one profile's shared-metrics state and connections to its database.

    Nothing touches the disk until :meth:`connect` is called (so a profile with collection off
    leaves no trace).
    """

    def __init__(self, hermes_home: Path | str) -> None:
        self.home = Path(hermes_home).expanduser()
        self.directory = store_directory(self.home)
        self.db_path = database_path(self.home)
        self.outbox = self.directory / "outbox"

    def exists(self) -> bool:
        """Whether ``metrics.sqlite3`` exists."""
        return self.db_path.is_file()

    # ------------------------------------------------------------------ connections

    def connect(self, *, create: bool = True) -> sqlite3.Connection:
        """A new connection (autocommit; use :func:`transaction` for writes), schema ensured.

        Raises :class:`StoreError` if the store does not exist and ``create`` is false, or if its
        schema version is newer than this build understands.
        """
        if not create and not self.exists():
            raise StoreError(f"no shared-metrics store at {self.db_path}")
        if create and self._prepare_files():
            self.forget_schema_cache()
        conn = sqlite3.connect(self.db_path, timeout=BUSY_MS / 1000, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            key = str(self.db_path)
            with _ready_lock:
                ready = key in _ready
            if not ready:
                ensure_schema(conn)
                with _ready_lock:
                    _ready.add(key)
            conn.execute("PRAGMA synchronous = FULL")
            for suffix in ("-wal", "-shm", "-journal"):
                secure_file(self.db_path.with_name(self.db_path.name + suffix))
        except BaseException:
            conn.close()
            raise
        return conn

    def _prepare_files(self) -> bool:
        """Create the directories and the database file owner-only; ``True`` if the file is new."""
        telemetry = self.directory.parent
        if not telemetry.exists():
            secure_dir(telemetry)
        secure_dir(self.directory)
        secure_dir(self.outbox)
        if self.db_path.exists():
            # Never open and close a descriptor of an existing database: closing any descriptor of
            # the file drops every POSIX lock this process holds on it, including SQLite's.
            return False
        try:
            fd = os.open(self.db_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            return False
        try:
            os.fchmod(fd, FILE_MODE)
        finally:
            os.close(fd)
        return True

    def forget_schema_cache(self) -> None:
        """Forget that this process already ensured the schema (after the directory was deleted)."""
        with _ready_lock:
            _ready.discard(str(self.db_path))


@contextmanager
def transaction(conn: sqlite3.Connection, *, busy_ms: int = BUSY_MS) -> Iterator[sqlite3.Connection]:
    """One ``BEGIN IMMEDIATE`` write transaction; :class:`StoreBusy` if the lock is not free in time."""
    if busy_ms != BUSY_MS:
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if _busy(exc):
                raise StoreBusy(str(exc)) from None
            raise
        try:
            yield conn
        except BaseException:
            _rollback(conn)
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            _rollback(conn)
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(str(exc)) from None
            raise
    finally:
        if busy_ms != BUSY_MS:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open (SQLite rolls back by itself after some errors)."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.OperationalError:
            pass


# ---------------------------------------------------------------------- schema


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch the database to WAL, retrying for up to ``SCHEMA_BUSY_MS``: SQLite answers "database is locked"
    at once, without its busy handler, while another process is switching the same new file (SM-47)."""
    end = time.monotonic() + SCHEMA_BUSY_MS / 1000
    delay = 0.005
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() + delay > end:
                raise
        time.sleep(delay)  # on the metrics writer thread, never on the agent's
        delay = min(delay * 2, 0.1)


def _busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because another connection holds the lock."""
    return "locked" in str(exc) or "busy" in str(exc)


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create or migrate the schema in one transaction with the 5 s busy timeout (SM-47, SM-51, SM-52)."""
    conn.execute(f"PRAGMA busy_timeout = {SCHEMA_BUSY_MS}")
    try:
        _use_wal(conn)
        with transaction(conn, busy_ms=SCHEMA_BUSY_MS):
            tables = _tables(conn)
            for ddl in _OTHER_TABLES:
                conn.execute(ddl)
            row = conn.execute("SELECT value FROM telemetry_state WHERE key = 'schema_version'").fetchone()
            version = row[0] if row else None
            if version not in (None, "1", SCHEMA_VERSION):
                raise StoreError(f"shared-metrics store schema version {version!r} is newer than this build "
                                 f"supports ({SCHEMA_VERSION}); upgrade hermes_pipeline")
            if "counter_aggregates" not in tables:
                conn.execute(_COUNTERS)
            elif version == "1" or "os_family" not in _columns(conn, "counter_aggregates"):
                _migrate_counters_1_to_2(conn)
            if "package_outbox" not in tables:
                conn.execute(_PACKAGE_OUTBOX)
            existing = _columns(conn, "package_outbox")
            for column, decl in _SEND_COLUMNS:  # additive; never bumps schema_version (SM-52)
                if column not in existing:
                    conn.execute(f"ALTER TABLE package_outbox ADD COLUMN {column} {decl}")
            for ddl in _INDEXES:
                conn.execute(ddl)
            if "consent_marks" not in tables:
                conn.execute("""CREATE TABLE consent_marks (
                    name TEXT PRIMARY KEY CHECK (name IN ('obs', 'data')), stamp TEXT NOT NULL)""")
                conn.execute("""INSERT INTO consent_marks (name, stamp)
                                SELECT 'data', MAX(period_end) FROM package_outbox HAVING COUNT(*) > 0""")
            conn.execute("INSERT INTO telemetry_state (key, value) VALUES ('schema_version', ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (SCHEMA_VERSION,))
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")


def _migrate_counters_1_to_2(conn: sqlite3.Connection) -> None:
    """SM-51: rename, create, copy with the three new resource fields ``unknown``, drop (caller's transaction)."""
    conn.execute("ALTER TABLE counter_aggregates RENAME TO counter_aggregates_v1")
    conn.execute(_COUNTERS)
    conn.execute("""INSERT INTO counter_aggregates (period_start, metric_name, hermes_version, os_family,
                        architecture, install_method, dimensions_json, value, packaged_value)
                    SELECT period_start, metric_name, hermes_version, 'unknown', 'unknown', 'unknown',
                           dimensions_json, value, packaged_value FROM counter_aggregates_v1""")
    conn.execute("DROP TABLE counter_aggregates_v1")
    logger.info("hermes_pipeline: shared-metrics store migrated from schema 1 to 2")


# ---------------------------------------------------------------------- state


def get_state(conn: sqlite3.Connection, key: str) -> str | None:
    """``telemetry_state[key]`` or ``None``."""
    row = conn.execute("SELECT value FROM telemetry_state WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def ensure_install_id(conn: sqlite3.Connection) -> str:
    """SM-68: insert a random UUID v4 if absent (first writer wins) and return the stored id."""
    conn.execute("INSERT OR IGNORE INTO telemetry_state (key, value) VALUES (?, ?)",
                 (INSTALL_ID_KEY, str(uuid.uuid4())))
    value = get_state(conn, INSTALL_ID_KEY)
    assert value is not None
    return value


def _set_state(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO telemetry_state (key, value) VALUES (?, ?) "
                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))


_UPSERT: Final = """
INSERT INTO counter_aggregates (period_start, metric_name, hermes_version, os_family, architecture,
                                install_method, dimensions_json, value, packaged_value)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)
ON CONFLICT DO UPDATE SET value = value + excluded.value"""


def increment(conn: sqlite3.Connection, period: str, metric: str, dims_json: str, n: int,
              resource: Resource) -> None:
    """SM-49: add ``n`` to one counter row (inside the caller's transaction)."""
    conn.execute(_UPSERT, (period, metric, *resource.as_row(), dims_json, n))


def client_active(conn: sqlite3.Connection, now: datetime, resource: Resource) -> bool:
    """SM-34 steps 1-4 inside the caller's ``BEGIN IMMEDIATE`` transaction; ``True`` if it counted."""
    now_text = stamp(now)
    latch = get_state(conn, CLIENT_ACTIVE_KEY)
    if latch is not None:
        if latch > now_text:  # the clock went backwards: re-base, do not count
            _set_state(conn, CLIENT_ACTIVE_KEY, now_text)
            return False
        try:
            if now < parse_stamp(latch) + ACTIVE_WINDOW:
                return False
        except ValueError:
            pass  # an unreadable latch is replaced below
    ensure_install_id(conn)
    increment(conn, period_of(now), "hermes.client.active", "{}", 1, resource)
    _set_state(conn, CLIENT_ACTIVE_KEY, now_text)
    return True


def latch_once(conn: sqlite3.Connection, key: str, metric: str, now: datetime, resource: Resource) -> bool:
    """SM-36: count ``metric`` once per ``install_id``, latched by ``telemetry_state[key]``."""
    if get_state(conn, key) is not None:
        return False
    ensure_install_id(conn)
    increment(conn, period_of(now), metric, "{}", 1, resource)
    _set_state(conn, key, stamp(now))
    return True


def apply_ops(conn: sqlite3.Connection, ops: Sequence[Op], resource: Resource) -> None:
    """Apply subscriber writes in order inside the caller's transaction; identical increments are summed."""
    pending: dict[tuple[str, str, str], int] = {}
    samples: list[tuple[str, str, int]] = []
    for op in ops:
        kind = op[0]
        if kind == "inc":
            key = (op[1], op[2], op[3])
            pending[key] = pending.get(key, 0) + op[4]
        elif kind == "sample":
            samples.append((op[1], op[2], op[3]))
        else:
            _flush_increments(conn, pending, resource)
            if kind == "active":
                client_active(conn, op[1], resource)
            elif kind == "latch":
                latch_once(conn, op[1], op[2], op[3], resource)
    _flush_increments(conn, pending, resource)
    if samples:
        conn.executemany("INSERT INTO local_latency_samples (metric_name, recorded_at, duration_ms) VALUES (?, ?, ?)",
                         samples)


def _flush_increments(conn: sqlite3.Connection, pending: dict[tuple[str, str, str], int], resource: Resource) -> None:
    if pending:
        row = resource.as_row()
        conn.executemany(_UPSERT, [(p, m, *row, d, n) for (p, m, d), n in pending.items()])
        pending.clear()


def counters(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every counter row, ordered by period, metric and dimensions (for ``metrics show`` and tests)."""
    rows = conn.execute("""SELECT period_start, metric_name, hermes_version, os_family, architecture, install_method,
                                  dimensions_json, value, packaged_value FROM counter_aggregates
                           ORDER BY period_start, metric_name, dimensions_json""").fetchall()
    keys = ("period_start", "metric_name", "hermes_version", "os_family", "architecture", "install_method",
            "dimensions_json", "value", "packaged_value")
    return [dict(zip(keys, row, strict=True)) for row in rows]
