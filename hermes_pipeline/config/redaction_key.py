"""The profile's redaction key: what makes its markers agree across processes (issue #25).

A credential the scrubber finds is replaced by ``<redacted:`` + 8 hex digits of a keyed hash of it + ``>``
(:func:`~hermes_pipeline.engine.scrub.redaction_marker`): distinct secrets stay distinct, the same secret gets
the same marker. For the rows of a profile's stores (a skill named like a credential, its history across
runs) to agree between processes and days, the key must be the profile's, not the process's: it is kept in
``observability/redaction.key`` (32 random bytes, mode 0600), made the first time a profile with a store
(``observability.audit.enabled`` or ``observability.trajectories.enabled``) is opened. ``$HERMES_PIPELINE_REDACTION_KEY``
wins over it; without either the key is random per process (nothing is written where nobody asked).
The key is process-wide: the first profile opened with one sets it.
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path
from typing import Final

from ..host.profile_files import read_regular_bytes

__all__ = ["KEY_FILE", "load_redaction_key"]

KEY_FILE: Final = Path("observability") / "redaction.key"
_KEY_BYTES: Final = 32
_MAX_KEY_FILE: Final = 64 * 1024
"""The largest key file read (a key is 32 bytes; a longer one is used whole, as before, up to this)."""
logger: Final = logging.getLogger("hermes_pipeline.config")
_set_by: list[Path] = []


def load_redaction_key(home: Path, has_store: bool) -> bytes | None:
    """Read (or, with ``has_store``, make) the profile's key and key the scrubber's markers with it; the key,
    or ``None`` when the profile keeps none, the variable is set, or another profile already keyed them."""
    from ..engine.scrub import set_redaction_key

    if os.environ.get("HERMES_PIPELINE_REDACTION_KEY") or _set_by:
        return None
    path = home / KEY_FILE
    try:
        key = read_regular_bytes(path, _MAX_KEY_FILE)  # a FIFO or a device is refused at once, never waited for
    except FileNotFoundError:
        if not has_store:
            return None
        try:
            key = _make(path)
        except OSError as exc:
            logger.warning("hermes_pipeline: the redaction key %s could not be written (%s); markers are keyed "
                           "per process", path, exc.strerror or exc)
            return None
    except OSError as exc:
        logger.warning("hermes_pipeline: the redaction key %s could not be read (%s); markers are keyed per process",
                       path, exc.strerror or exc)
        return None
    if len(key) < 16:
        logger.warning("hermes_pipeline: the redaction key %s is shorter than 16 bytes; markers are keyed per "
                       "process", path)
        return None
    set_redaction_key(key)
    _set_by.append(home)
    return key


def _make(path: Path) -> bytes:
    """A new key written whole (a temporary file linked into place), or the one another process made first."""
    key = secrets.token_bytes(_KEY_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return read_regular_bytes(path, _MAX_KEY_FILE)
        return key
    finally:
        try:
            tmp.unlink()
        except OSError:
            pass
