"""The context snapshot of a Hermes turn (spec 06 BOOK-29): what a replay needs to rebuild that turn's state.

:class:`TurnContext` is the bridge's snapshot collaborator: at each turn start (``pre_llm_call``) it hashes
the profile's skills (every file of each), memory files and persona file (:func:`~..host.snapshot.
context_snapshot`) and keeps the text of each distinct content once (:func:`~..export.blobs.
keep_snapshot_files`), so the recording refers to the exact skills and memory the turn started with, by
hash, and ``hermes-pipeline replay`` rebuilds them even after the profile has changed.

Every skill Hermes loads is in the snapshot: those of the profile's ``skills/``, those it reaches through a
symbolic link (``linked``) and those of ``skills.external_dirs`` (``external_skills``); the texts of the last two,
which are not under the profile's home, are kept from where the snapshot found them. A file whose text could not
be kept (not text, too large, changed meanwhile) is counted in the snapshot's ``files_not_kept``.

It runs on Hermes' thread at the turn start only when a sink listens to ``on_context_snapshot`` (the
trajectory store, an ATIF file): hashing a profile's skills is a few milliseconds, and a text is written
only the first time its content is seen.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..export.blobs import keep_file, keep_snapshot_files
from ..host.snapshot import EXTERNAL_SKILLS, context_snapshot

__all__ = ["TurnContext"]


def _outside_files(home: Path, context: Mapping[str, Any]) -> Iterator[tuple[Path, str]]:
    """``(where the file is, sha256)`` of the skill files a snapshot names outside the profile's home: the files
    of the skills reached through a link and of the external skills."""
    for key, base in (("skills", home / "skills"), (EXTERNAL_SKILLS, None)):
        for skill in context.get(key) or []:
            if not isinstance(skill, Mapping) or not isinstance(skill.get("name"), str):
                continue
            if base is None:
                root = skill.get("root")
                if not isinstance(root, str):
                    continue
                where = Path(root) / skill["name"]
            elif skill.get("linked"):
                where = base / skill["name"]
            else:
                continue
            files = skill.get("files")
            for rel, sha in (files.items() if isinstance(files, Mapping) else ()):
                if isinstance(rel, str) and isinstance(sha, str):
                    yield where / rel, sha


class TurnContext:
    """``snapshot(pre_llm_call event) -> context`` for the profile at ``home`` (see the module docstring)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.not_kept = 0
        """Files named by a snapshot whose text could not be kept (not text, too large, changed meanwhile)."""
        self._lock = threading.Lock()

    def __call__(self, event: dict[str, Any]) -> dict[str, Any]:
        context = context_snapshot(self.home, model=str(event.get("model") or "") or None,
                                   provider=str(event.get("provider") or "") or None)
        inside = {**context, "skills": [s for s in context.get("skills") or [] if not s.get("linked")]}
        inside.pop(EXTERNAL_SKILLS, None)
        not_kept = keep_snapshot_files(self.home, inside)["not_kept"]
        for source, sha in _outside_files(self.home, context):
            if keep_file(self.home, source, sha) is False:
                not_kept += 1
        with self._lock:
            self.not_kept += not_kept
        if not_kept:
            context["files_not_kept"] = not_kept
        return context
