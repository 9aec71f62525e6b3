"""Opening the store: owner-only files, WAL, a busy timeout, and retries on "database is locked".

Several processes of one profile (a CLI, the gateway, cron jobs) write the same database: every
write is one ``BEGIN IMMEDIATE`` transaction under SQLite's busy timeout, and switching a new file
to WAL is retried because SQLite answers "database is locked" at once, without its busy handler,
while another process switches the same file. A file that is not a database is moved aside (kept,
never deleted) and a new store is started.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from .schema import ADDED_COLUMNS, INDEXES, RETIRED_INDEXES, SCHEMA_VERSION, TABLES

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")

DIRECTORY: Final = "observability"
FILENAME: Final = "observability.sqlite3"
BUSY_MS: Final = 5_000
DIR_MODE: Final = 0o700
FILE_MODE: Final = 0o600


class StoreError(Exception):
    """The store cannot be opened or written (read-only profile, newer schema, broken file)."""


class StoreBusy(StoreError):
    """Another process held the write lock past the busy timeout; the write is retried later."""


class StoreUnreadable(StoreError):
    """The store's file is damaged (or not a database) and cannot be read or written."""


class StoreFull(StoreError):
    """The disk holding the store (or SQLite's page limit) is full: nothing more can be written."""


def store_error(path: Path, exc: BaseException) -> StoreError:
    """The typed error for a failure ``exc`` of SQLite or the OS on the store at ``path`` (for the readers:
    ``audit``, ``alerts``, ``prune``), its message naming the file, the kind and what to do."""
    from .failures import classify

    if isinstance(exc, StoreError) and not isinstance(exc, StoreBusy) and str(path) in str(exc):
        return exc  # already says which file and why
    kind = classify(exc)
    detail = str(exc) or type(exc).__name__
    if kind == "locked":
        if str(path) in detail:
            return StoreBusy(detail)
        return StoreBusy(f"the observability store at {path} stayed locked by another process past the "
                         f"{BUSY_MS / 1000:g} s wait ({detail}); try again")
    if kind == "full":
        return StoreFull(f"the observability store at {path} cannot be written: the disk is full ({detail}); "
                         "free some space")
    if kind == "damaged":
        return StoreUnreadable(f"store unreadable: {path} is damaged ({detail}); run hermes-pipeline doctor")
    if isinstance(exc, StoreError):
        return type(exc)(f"the observability store at {path}: {detail}")
    return StoreError(f"the observability store at {path} cannot be used ({kind}: {detail})")


def _text(raw: bytes) -> str:
    """SQLite text as ``str``, bytes that are not UTF-8 (a damaged page) replaced rather than raised on."""
    return raw.decode("utf-8", "replace")


def store_path(home: Path) -> Path:
    """``$HERMES_HOME/observability/observability.sqlite3`` (BOOK-16)."""
    return Path(home) / DIRECTORY / FILENAME


def _busy(exc: sqlite3.Error) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def _secure(path: Path, mode: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.chmod(path, mode)


def prepare(path: Path) -> None:
    """Create the directory (0700) and the file (0600) if missing; :class:`StoreError` if impossible."""
    try:
        path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        _secure(path.parent, DIR_MODE)
        if not path.exists():
            fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
            os.close(fd)
        _secure(path, FILE_MODE)
    except OSError as exc:
        raise StoreError(f"cannot create the observability store at {path}: {exc.strerror or exc}") from None


def _use_wal(conn: sqlite3.Connection) -> None:
    end = time.monotonic() + BUSY_MS / 1000
    delay = 0.005
    while True:
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() + delay > end:
                raise
        time.sleep(delay)  # on the store's writer thread or a CLI, never the agent's
        delay = min(delay * 2, 0.1)


def _schema_version(conn: sqlite3.Connection) -> int:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreError(f"the observability store has schema version {version}, newer than this build "
                         f"({SCHEMA_VERSION}); upgrade hermes_pipeline")
    return version


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the tables and indexes, or bring an older store up to :data:`~.schema.SCHEMA_VERSION`
    (idempotent, one transaction: another process upgrading the same file at the same time waits for
    the write lock, then finds the work done). Rows are never touched: an upgrade only adds the new
    columns (NULL in old rows) and indexes and drops the indexes they replace."""
    if _schema_version(conn) == SCHEMA_VERSION:
        return
    with transaction(conn):
        if _schema_version(conn) == SCHEMA_VERSION:  # upgraded while this one waited for the lock
            return
        for ddl in TABLES.values():
            conn.execute(ddl)
        for table, columns in ADDED_COLUMNS.items():
            have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            for name, decl in columns:
                if name not in have:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
        for name in RETIRED_INDEXES:
            conn.execute(f"DROP INDEX IF EXISTS {name}")
        for ddl in INDEXES:
            conn.execute(ddl)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def connect(path: Path, *, create: bool = True, readonly: bool = False) -> sqlite3.Connection:
    """A connection to the store at ``path`` (autocommit; writes go through :func:`transaction`).

    Raises:
        StoreError: it cannot be created, is not a database (then it is moved aside first when
            ``create``), or its schema is newer than this build.
    """
    if create:
        prepare(path)
    elif not path.is_file():
        raise StoreError(f"no observability store at {path} (enable observability.audit.enabled in config.yaml)")
    try:
        uri = f"file:{path}?mode=ro" if readonly else str(path)
        conn = sqlite3.connect(uri, uri=readonly, timeout=BUSY_MS / 1000, isolation_level=None,
                               check_same_thread=False)
        conn.text_factory = _text
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            if not readonly:
                _use_wal(conn)
                ensure_schema(conn)
                for suffix in ("-wal", "-shm"):
                    _secure(path.with_name(path.name + suffix), FILE_MODE)
            else:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if isinstance(exc, sqlite3.Error) and _busy(exc):
            raise StoreBusy(f"the observability store at {path} stayed locked by another process past the "
                            f"{BUSY_MS / 1000:g} s wait ({exc}); try again") from None
        broken = "not a database" in str(exc) or "malformed" in str(exc) or isinstance(exc, UnicodeDecodeError)
        if create and broken:  # keep the broken file beside the new store: nothing is deleted
            aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}")
            os.replace(path, aside)
            logger.warning("hermes_pipeline: observability store %s is not a database (%s); moved it to %s "
                           "and started a new one", path, exc, aside.name,
                           extra={"event": "observability_store_corrupt"})
            return connect(path, create=True)
        raise StoreError(f"the observability store at {path} cannot be opened: {exc}") from None


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One ``BEGIN IMMEDIATE`` transaction; :class:`StoreBusy` when another process held the lock too long."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if _busy(exc):
            raise StoreBusy(str(exc)) from None
        raise
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if _busy(exc):
            raise StoreBusy(str(exc)) from None
        raise
