"""The ``definitions/`` sidecar: tool schemas and system prompts shared by every session of one output.

Written once per session (:mod:`.definitions`), Hermes' tool list (tens of kilobytes) and system prompt
are still most of the bytes of a short session: a one-shot ``hermes chat -q`` with one to three LLM
calls writes them in full every time. An ATOF file sink's directory and the trajectory store therefore
keep each definition once for all their sessions, content-addressed:

    <output directory>/definitions/<64 hex digits>.json

holds the canonical JSON of the value whose reference is ``{"$ref": "sha256:<the same hex>"}``, so any
reader can check a file against its name, and two processes writing the same definition write the same
bytes. Each file is written atomically (temporary file, ``fsync``, rename; mode ``0600`` in a ``0700``
directory) before the first line or trajectory that refers to it, and is never changed afterwards.

:class:`DefinitionFiles` is the writer (one per output, on that output's worker thread). Readers resolve
through :mod:`hermes_pipeline.readers.definitions`. A sidecar file is checked with
:func:`~hermes_pipeline.host.profile_files.read_regular_bytes`: a FIFO, a device, a directory or a file over
:data:`MAX_DEFINITION_BYTES` found under a definition's name is refused at once (never waited for, warned once
naming it) and the definition written again over it. :func:`prune_unreferenced` deletes the files no file of the
directory refers to any more, unused for a day: the trajectory store's retention calls it
(:func:`hermes_pipeline.sinks.trajectory_store.prune.prune_store`), and so does an ATOF file sink's when it has
deleted old files (``retention_days``, :class:`hermes_pipeline.export.files.JsonlFileDestination`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ..host.profile_files import ProfileFileError, read_regular_bytes, warn_unreadable
from .atomic import make_dirs, write_atomically
from .clock_trust import DAY_S
from .content import canonical_json
from .file_scan import find_all_in_file

__all__ = ["SIDECAR", "SHARED_KEY", "UNUSED_GRACE_S", "DefinitionFiles", "definition_path", "prune_unreferenced",
           "ref_of_name"]

SIDECAR: Final = "definitions"
"""The sidecar directory's name, inside the output directory (ATOF file sink, trajectory store)."""
SHARED_KEY: Final = "shared_definitions"
"""``extra.hermes.shared_definitions`` of a stored trajectory: the references its requests use whose values
are in the sidecar (instead of ``extra.hermes.definitions``)."""
_PREFIX: Final = "sha256:"
MAX_DEFINITION_BYTES: Final = 64 * 1024 * 1024
"""The largest sidecar file checked (64 MiB; Hermes' tool list is tens of kilobytes): a larger one is written again."""
logger: Final = logging.getLogger("hermes_pipeline.export.definition_files")
_NAME: Final = re.compile(r"([0-9a-f]{64})\.json")


def definition_path(directory: Path, ref: str) -> Path:
    """The sidecar file of ``ref`` (``sha256:<hex>``) for the output ``directory``.

    Raises:
        ValueError: ``ref`` is not ``sha256:`` and 64 lower-case hex digits (never a path of its own choosing).
    """
    hexdigest = ref[len(_PREFIX):] if ref.startswith(_PREFIX) else ""
    if not _NAME.fullmatch(hexdigest + ".json"):
        raise ValueError(f"not a definition reference: {ref[:80]!r}")
    return directory / SIDECAR / f"{hexdigest}.json"


def ref_of_name(name: str) -> str | None:
    """``sha256:<hex>`` for a sidecar file name ``<hex>.json``; ``None`` for any other name."""
    match = _NAME.fullmatch(name)
    return _PREFIX + match.group(1) if match else None


class DefinitionFiles:
    """Writes the definitions of one output directory's sidecar (one instance per output; not thread-safe:
    it runs on that output's worker thread).

    Args:
        directory: the output directory; the files go to ``directory/definitions/``.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.sidecar = directory / SIDECAR
        self._checked: set[str] = set()
        """References whose file this writer wrote or found intact."""

    def ensure(self, definitions: Mapping[str, Any]) -> None:
        """Make sure the sidecar holds every ``{ref: value}`` of ``definitions``.

        A file that is there is kept (its name is its content's hash) but its modification time is set to
        now, so the store's retention, which spares recently used files, never removes a definition
        between this call and the write of the trajectory that refers to it. A file found damaged (its
        bytes do not hash to its name) is written again.

        Raises:
            OSError: the sidecar or a file could not be written (the caller counts the write as failed).
        """
        for ref, value in definitions.items():
            path = definition_path(self.directory, ref)
            if (ref in self._checked or _intact(path, ref)) and _touch(path):
                self._checked.add(ref)
                continue
            self._checked.discard(ref)
            text = canonical_json(value).encode("utf-8", "surrogatepass")
            if _PREFIX + hashlib.sha256(text).hexdigest() != ref:
                raise ValueError(f"definition {ref[:20]}… does not hash to its reference")
            make_dirs(self.sidecar)
            write_atomically(path, text)
            self._checked.add(ref)


def _touch(path: Path) -> bool:
    """Set ``path``'s modification time to now; ``False`` when the file is gone (another owner's file that
    cannot be touched counts as there)."""
    try:
        os.utime(path)
    except FileNotFoundError:
        return False
    except OSError:
        return path.is_file()
    return True


def _intact(path: Path, ref: str) -> bool:
    """Whether ``path`` is a regular file whose bytes hash to ``ref`` (a FIFO or a device is never waited for)."""
    try:
        data = read_regular_bytes(path, MAX_DEFINITION_BYTES)
    except ProfileFileError as exc:
        warn_unreadable(logger, exc, "definition file", event="definition_file_unreadable")
        return False
    except OSError:  # not there yet
        return False
    return _PREFIX + hashlib.sha256(data).hexdigest() == ref


UNUSED_GRACE_S: Final = DAY_S
"""How long a definition no file refers to is kept after it was last written or used (a writer refers to it
only once the line or trajectory that uses it is written; :meth:`DefinitionFiles.ensure` touches it first)."""
_REF: Final = re.compile(rb'"sha256:([0-9a-f]{64})"')
_CHUNK: Final = 1 << 20


def prune_unreferenced(directory: Path, now: float, *, grace: float = UNUSED_GRACE_S,
                       suffixes: tuple[str, ...] = (".json",)) -> int:
    """Delete the sidecar definitions no file of ``directory`` whose name ends with one of ``suffixes`` refers
    to and unused for ``grace`` seconds before ``now``; how many were deleted. Nothing is deleted when a file of
    the directory cannot be read (what it refers to is then unknown). Files are read a chunk at a time (an
    ATOF file may be large)."""
    sidecar = directory / SIDECAR
    try:
        names = os.listdir(sidecar)
    except OSError:
        return 0
    referenced: set[bytes] = set()
    try:
        for entry in os.scandir(directory):
            if entry.name.endswith(suffixes) and entry.is_file(follow_symlinks=False):
                _refs_of(Path(entry.path), referenced)
    except OSError:
        return 0
    deleted = 0
    for name in names:
        ref = ref_of_name(name)
        if ref is None or ref[len(_PREFIX):].encode() in referenced:
            continue
        path = sidecar / name
        try:
            if path.is_symlink() or now - path.stat().st_mtime <= grace:
                continue
            path.unlink()
            deleted += 1
        except OSError:
            continue
    return deleted


def _refs_of(path: Path, out: set[bytes]) -> None:
    """Add the references of ``path`` to ``out`` (a reference across two chunks is found)."""
    find_all_in_file(path, _REF, len('"sha256:"') + 64, out, _CHUNK)
