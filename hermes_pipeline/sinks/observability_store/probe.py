"""Hashing ``SKILL.md`` when a lifecycle event fires, not when its row is written.

The rows are written later, on the store's writer thread; by then the agent may have changed the
skill again, so the ``after_hash`` of each change is taken by this small hook implementation on the
caller's thread at the time of the event (skill mutations are rare, and the file is small). The
writer takes the hashes back in the same order, per skill.
"""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path

from ...contract.hookspecs import hookimpl
from .scan import sha256_file

_MISSING = "-"


class SkillHashProbe:
    """``on_skill_lifecycle`` → the hash of the skill's ``SKILL.md`` right now (see the module docstring)."""

    def __init__(self, skills_root: Path) -> None:
        self.root = skills_root
        self._hashes: dict[str, deque[str]] = {}
        self._lock = threading.Lock()

    @hookimpl
    def on_skill_lifecycle(self, action: str, skill_name: str) -> None:
        if action == "loaded" or not isinstance(skill_name, str) or not skill_name or "/" in skill_name:
            return
        digest = sha256_file(self.root / skill_name / "SKILL.md")
        with self._lock:
            self._hashes.setdefault(skill_name, deque()).append(digest or _MISSING)

    def take(self, skill_name: str) -> tuple[bool, str | None]:
        """``(known, hash)`` of the oldest change of ``skill_name`` not taken yet (``hash`` ``None``: no file)."""
        with self._lock:
            queue = self._hashes.get(skill_name)
            if not queue:
                return False, None
            digest = queue.popleft()
            if not queue:
                del self._hashes[skill_name]
        return True, None if digest == _MISSING else digest
