"""The context snapshot of a Hermes turn (spec 06 BOOK-29): what a replay needs to rebuild that turn's state.

:class:`TurnContext` is the bridge's snapshot collaborator: at each turn start (``pre_llm_call``) it hashes
the profile's skills (every file of each), memory files and persona file (:func:`~..host.snapshot.
context_snapshot`) and keeps the text of each distinct content once (:func:`~..export.blobs.
keep_snapshot_files`), so the recording refers to the exact skills and memory the turn started with, by
hash, and ``hermes-pipeline replay`` rebuilds them even after the profile has changed.

It runs on Hermes' thread at the turn start only when a sink listens to ``on_context_snapshot`` (the
trajectory store, an ATIF file): hashing a profile's skills is a few milliseconds, and a text is written
only the first time its content is seen.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..export.blobs import keep_snapshot_files
from ..host.snapshot import context_snapshot

__all__ = ["TurnContext"]


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
        counts = keep_snapshot_files(self.home, context)
        with self._lock:
            self.not_kept += counts["not_kept"]
        if counts["not_kept"]:
            context["files_not_kept"] = counts["not_kept"]
        return context
