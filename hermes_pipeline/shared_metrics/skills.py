"""Host-side skill reporting: ``skills/.usage.json`` bookkeeping and ``on_skill_lifecycle`` (SM-31..33).

``on_skill_lifecycle`` is a Hermes hook outside the 01 catalogue (SM-17): a host that does not
report skills produces no skill counters. :class:`SkillReporter` is the small API a host calls when
a skill mutation or load *succeeded*. It updates the host's usage state in
``$HERMES_HOME/skills/.usage.json`` transactionally (an inter-process file lock around
read-modify-write, then an atomic replace) and derives, in the same step, the reuse facts of a
load: use count after this load, whether it is a reuse, and whether a new patch happened since the
previous use. It then reports the event to the profile's shared metrics (which keep only the
closed-vocabulary mapping: never the skill name, the exact count or the patch generation) and
dispatches ``on_skill_lifecycle`` to any other listener on the engine.

The state is read on the agent's thread with :func:`~hermes_pipeline.host.profile_files.read_regular_bytes`: a
FIFO (a file on a home that stopped answering), a device, a directory or a file over :data:`MAX_USAGE_BYTES` is
refused at once, never waited for, with one warning naming it. The event is still reported, but the update is not
written over the refused file (it may hold the real state): it is counted in :attr:`SkillReporter.unsaved`.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..export.locks import FileLockTimeout, file_lock

if TYPE_CHECKING:
    from ..engine.core import Engine
    from .api import SharedMetrics

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")

HOOK: Final = "on_skill_lifecycle"
LOCK_TIMEOUT: Final = 1.0
"""Seconds the host's thread waits for another process's update of ``.usage.json`` (milliseconds, usually)."""
MAX_USAGE_BYTES: Final = 8 * 1024 * 1024
"""The largest usage state read (8 MiB, some 40,000 skills); a larger file is refused, not read whole."""
PATCHING_ACTIONS: Final = frozenset({"patched", "edited"})
"""Actions that create a new patch generation (a load after one counts as ``reused_after_patch``)."""
_STATES: Final = {"stale": "stale", "archived": "archived", "restored": "active", "created": "active",
                  "installed": "active"}


@dataclass(frozen=True, slots=True)
class SkillUse:
    """What one successful load derived from the usage state (host-side only; never packaged)."""

    use_count: int
    reused: bool
    reuse_after_patch: bool


class SkillReporter:
    """Report successful skill mutations and loads of one profile.

    Args:
        hermes_home: the profile directory (``skills/.usage.json`` lives under it).
        metrics: the profile's :class:`~hermes_pipeline.shared_metrics.SharedMetrics`, or ``None``
            when collection is off (the usage state is still kept).
        engine: dispatch ``on_skill_lifecycle`` to other listeners of this engine (e.g. exporters).
    """

    def __init__(self, hermes_home: Path | str, *, metrics: SharedMetrics | None = None,
                 engine: Engine | None = None) -> None:
        self.directory = Path(hermes_home).expanduser() / "skills"
        self.usage_path = self.directory / ".usage.json"
        self.metrics = metrics
        self.engine = engine
        self.unsaved = 0
        """Mutations and loads reported but not counted in the usage state (its lock held past :data:`LOCK_TIMEOUT`, or
        the file refused: a FIFO, a device, a directory, too large)."""
        self._warned = False

    # ------------------------------------------------------------------ mutations

    def created(self, name: str, *, provenance: str = "agent_created") -> None:
        """A skill was created (by the agent unless ``provenance`` says otherwise)."""
        self.report("created", name, provenance=provenance)

    def installed(self, name: str, *, provenance: str = "installed") -> None:
        """A skill was installed from a hub."""
        self.report("installed", name, provenance=provenance)

    def patched(self, name: str) -> None:
        """A skill was patched (new patch generation)."""
        self.report("patched", name)

    def edited(self, name: str) -> None:
        """A skill was edited (new patch generation)."""
        self.report("edited", name)

    def stale(self, name: str) -> None:
        """A skill was marked stale."""
        self.report("stale", name)

    def archived(self, name: str) -> None:
        """A skill was archived."""
        self.report("archived", name)

    def restored(self, name: str) -> None:
        """A skill was restored."""
        self.report("restored", name)

    def report(self, action: str, name: str, *, provenance: str | None = None, success: bool = True) -> None:
        """Report one mutation; a failed one (``success=False``) changes nothing and emits nothing."""
        if not success:
            return
        with self._locked(action, name) as held:
            state, readable = self._read()
            entry = state["skills"].setdefault(name, _new_entry())
            if provenance is not None:
                entry["provenance"] = provenance
            if action in PATCHING_ACTIONS:
                entry["patch_generation"] = int(entry.get("patch_generation", 0)) + 1
            if action in _STATES:
                entry["state"] = _STATES[action]
            self._save(state, held, readable)
            origin = str(entry.get("provenance") or "unknown")
        self._emit({"action": action, "skill_name": name, "provenance": origin, "success": True})

    # ------------------------------------------------------------------ loads

    def loaded(self, name: str) -> SkillUse:
        """A skill was loaded successfully: update the usage state and report the load (SM-32)."""
        with self._locked("loaded", name) as held:
            state, readable = self._read()
            entry = state["skills"].setdefault(name, _new_entry())
            generation = int(entry.get("patch_generation", 0))
            previous = entry.get("last_used_generation")
            use_count = int(entry.get("use_count", 0)) + 1
            reused = use_count > 1
            use = SkillUse(use_count, reused, reused and previous is not None and generation > int(previous))
            entry["use_count"] = use_count
            entry["last_used_generation"] = generation
            self._save(state, held, readable)
            origin = str(entry.get("provenance") or "unknown")
        self._emit({"action": "loaded", "skill_name": name, "provenance": origin, "success": True,
                    "use_count": use.use_count, "reused": use.reused, "reuse_after_patch": use.reuse_after_patch})
        return use

    # ------------------------------------------------------------------ internals

    @contextmanager
    def _locked(self, action: str, name: str) -> Iterator[bool]:
        """The usage state's lock, waited for at most :data:`LOCK_TIMEOUT` (this is the agent's thread); yields
        ``False`` when another process held it past that: the state is then read but not written (a write
        without the lock could undo a peer's), and the update not saved is counted and warned once."""
        try:
            lock = file_lock(self._lock_path(), timeout=LOCK_TIMEOUT)
            lock.__enter__()
        except FileLockTimeout:
            self.unsaved += 1
            if not self._warned:
                self._warned = True
                logger.warning("hermes_pipeline: %s is locked by another process; the %s of a skill was reported but "
                               "not counted in it (later ones are counted in SkillReporter.unsaved)", self.usage_path,
                               action, extra={"event": "skill_usage_unsaved"})
            yield False
            return
        try:
            yield True
        finally:
            lock.__exit__(None, None, None)

    def _lock_path(self) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        return self.directory / ".usage.json.lock"

    def _read(self) -> tuple[dict[str, Any], bool]:
        """The usage state, and whether it may be written back: ``False`` when the file was refused (a FIFO, a
        device, a directory, too large: warned once) and so must not be replaced."""
        from ..host.profile_files import ProfileFileError, read_regular_bytes, warn_unreadable

        readable = True
        try:  # never blocks: this is the agent's thread
            state = json.loads(read_regular_bytes(self.usage_path, MAX_USAGE_BYTES).decode("utf-8"))
        except FileNotFoundError:
            state = {}
        except ProfileFileError as exc:
            warn_unreadable(logger, exc, "skill usage state", event="skill_usage_unreadable")
            state, readable = {}, False
        except (OSError, ValueError) as exc:
            logger.warning("hermes_pipeline: %s is unreadable (%s); starting a new usage state", self.usage_path, exc)
            state = {}
        if not isinstance(state, dict) or not isinstance(state.get("skills"), dict):
            state = {"version": 1, "skills": {}}
        return state, readable

    def _save(self, state: dict[str, Any], held: bool, readable: bool) -> None:
        """Write ``state`` when the lock is ``held`` and the file was ``readable``; an update not written over a
        refused file is counted in :attr:`unsaved` (one the lock kept out was counted by :meth:`_locked`)."""
        if held and readable:
            self._write(state)
        elif held:
            self.unsaved += 1

    def _write(self, state: dict[str, Any]) -> None:
        tmp = self.usage_path.with_name(f".usage.{uuid.uuid4().hex}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(state, fh, indent=2, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.usage_path)

    def _emit(self, payload: dict[str, Any]) -> None:
        if self.metrics is not None:
            self.metrics.on_skill_lifecycle(**payload)
        engine = self.engine
        if engine is not None and engine.has_hook(HOOK):
            from ..host.skills import skill_payload  # the hook's full payload, IDs from the ambient context

            fields = {k: v for k, v in payload.items() if k not in ("action", "skill_name", "success")}
            engine.dispatch(HOOK, skill_payload(payload["action"], payload["skill_name"], **fields))


def _new_entry() -> dict[str, Any]:
    return {"use_count": 0, "patch_generation": 0, "last_used_generation": None, "provenance": "unknown",
            "state": "active"}
