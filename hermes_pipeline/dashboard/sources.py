"""Where the dashboard reads from: the profile's paths, ids checked against strict patterns, and
read-only SQLite connections.

Every path the dashboard opens is derived here from the profile directory; an id taken from a URL
must match a strict pattern before it is used, and a resolved file must still lie inside its
directory, so a URL can never reach a file outside the profile.
"""

from __future__ import annotations

import os
import re
import stat
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import quote

__all__ = ["SESSION_ID", "TRAJECTORY_ID", "TRAJECTORY_REF", "ReadConnection", "Sources", "connect_ro", "inside",
           "load_sources", "read_part"]

SESSION_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
"""A session id as Hermes (``20260101_120000_ab12cd``) or a host (hex, UUID) writes it."""
TRAJECTORY_ID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""A trajectory id: the UUID of the run, as in the store's file names."""
TRAJECTORY_REF: Final = re.compile(r"[0-9a-fA-F][0-9a-fA-F-]{3,35}")
"""A trajectory id or a prefix of one (at least 4 characters) in a URL; resolved by the store's one lookup."""


@dataclass(frozen=True)
class Sources:
    """The files of one profile that the dashboard reads (none of them needs to exist)."""

    home: Path
    state_db: Path
    store_db: Path
    trajectories: Path
    skills: Path
    memory_dirs: tuple[Path, ...]
    jaeger_url: str | None = None
    audit_enabled: bool = False
    """``observability.audit.enabled``: a missing store is then "not written yet", not "enable it"."""


def _under(home: Path, name: str) -> Path:
    path = Path(name).expanduser()
    return path if path.is_absolute() else home / path


def load_sources(home: Path) -> Sources:
    """The sources of the profile at ``home``, with the directories its ``config.yaml`` names
    (trajectory store, skills and memory directories, the Jaeger UI)."""
    from ..config.profile_config import load_profile_settings

    home = home.expanduser().resolve()
    settings = load_profile_settings(home, log=False)
    obs = settings.observability
    return Sources(home=home, state_db=home / "state.db",
                   store_db=home / "observability" / "observability.sqlite3",
                   trajectories=settings.trajectories.directory(home), skills=_under(home, obs.skills_dir),
                   memory_dirs=tuple(_under(home, d) for d in obs.memory_dirs),
                   jaeger_url=settings.dashboard.jaeger_url, audit_enabled=bool(obs.audit_enabled))


class ReadConnection(sqlite3.Connection):
    """A read-only connection that keeps what went wrong with it: ``problems`` collects the errors of
    the queries made through it, so a page can say "store unreadable: <reason>" instead of showing an
    empty panel as an all-clear."""

    problems: list[str] | None = None


def connect_ro(path: Path, problems: list[str] | None = None) -> ReadConnection | None:
    """A read-only connection to the database at ``path`` (``mode=ro``: nothing is ever created or
    written), or ``None`` when there is no such database or it cannot be opened (then the reason is
    appended to ``problems``, and the queries' errors later too)."""
    if not path.is_file():
        return None
    conn: ReadConnection | None = None
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=2.0,
                               check_same_thread=False, factory=ReadConnection)
        conn.problems = problems
        conn.row_factory = sqlite3.Row
        conn.text_factory = lambda raw: raw.decode("utf-8", "replace")  # a damaged page: shown, not raised
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        if conn is not None:
            conn.close()
        if problems is not None:
            problems.append(str(exc) or type(exc).__name__)
        return None
    return conn


def inside(path: Path, directory: Path) -> bool:
    """Whether ``path``, symlinks resolved, lies inside ``directory`` (also resolved)."""
    try:
        return path.resolve().is_relative_to(directory.resolve())
    except (OSError, RuntimeError):
        return False


_PART_FLAGS: Final = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | \
    getattr(os, "O_CLOEXEC", 0)


def read_part(path: Path, size: int, *, tail: bool = False) -> bytes | None:
    """The first (or, with ``tail``, the last) ``size`` bytes of the regular file ``path``; ``None`` for a link,
    a FIFO, a device, a directory or an error. Never blocks on a FIFO (opened non-blocking, checked by
    ``fstat``) and never follows a link out of the trajectory directory."""
    try:
        fd = os.open(path, _PART_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        os.set_blocking(fd, True)
        if tail:
            os.lseek(fd, max(0, info.st_size - size), os.SEEK_SET)
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)
