"""Which recorded runs a batch replays (``replay --batch``; spec 06 BOOK-32, issue #28 item 4).

A selection starts from trajectory files (given ids or paths, the files of a directory, else every trajectory
of the profile's store) and keeps those that match every filter given:

- ``since`` (``30m``, ``12h``, ``7d``, ``2w``): the run started (its first step's timestamp) that recently;
- ``skill``: the run used that skill (a ``skill_*`` tool call whose ``name`` argument is it: Hermes'
  ``skill_view`` / ``skill_manage``);
- ``failed``: the run's turn ended in error (or was cancelled), or one of its tool calls failed.

A replay written by an earlier replay (``extra.hermes.replay``) is never selected: the store keeps replays
beside the runs they replayed, and a regression run is over what was recorded.

Every file is loaded and checked (:func:`~.recording.load_trajectory`) before anything runs: bad input stops the
batch with a :class:`~.errors.TrajectoryError` naming the file, and nothing is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Final

from ..readers.definitions import Fallback
from .errors import TrajectoryError
from .recording import load_trajectory

__all__ = ["Selection", "parse_since", "select", "trajectory_files"]

_SINCE: Final = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
_UNITS: Final = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_FAILED: Final = frozenset({"error", "cancelled", "blocked", "timeout", "failed"})


def parse_since(text: str) -> timedelta:
    """``30m`` / ``12h`` / ``7d`` / ``2w`` → a duration.

    Raises:
        TrajectoryError: any other text (naming ``--since``).
    """
    match = _SINCE.match(text or "")
    if match is None or int(match.group(1)) == 0:
        raise TrajectoryError(f"--since {text!r}: give a positive age such as 30m, 12h, 7d or 2w", key="--since")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


@dataclass(frozen=True)
class Selection:
    """The filters of a batch (see the module docstring); ``None`` / ``False`` keeps every run."""

    since: timedelta | None = None
    skill: str | None = None
    failed: bool = False


def trajectory_files(directory: Path) -> list[Path]:
    """The trajectory files of ``directory`` (redacted copies left out), sorted by name (by date in a store)."""
    if not directory.is_dir():
        raise TrajectoryError("not a directory of trajectories", path=str(directory))
    return sorted(p for p in directory.glob("*.json") if p.is_file() and not p.name.endswith(".redacted.json"))


def _started(doc: Mapping[str, Any]) -> datetime | None:
    for step in doc.get("steps") or []:
        stamp = step.get("timestamp") if isinstance(step, Mapping) else None
        if isinstance(stamp, str) and stamp:
            try:
                found = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            except ValueError:
                return None
            return found if found.tzinfo else found.replace(tzinfo=timezone.utc)
    return None


def _steps(doc: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    for step in doc.get("steps") or []:
        if isinstance(step, Mapping):
            yield step
    for child in doc.get("subagent_trajectories") or []:
        if isinstance(child, Mapping):
            yield from _steps(child)


def _arguments(call: Mapping[str, Any]) -> Mapping[str, Any]:
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {}
    return arguments if isinstance(arguments, Mapping) else {}


def used_skill(doc: Mapping[str, Any], name: str) -> bool:
    """Whether the run called a ``skill_*`` tool on skill ``name`` (a category path ending in it counts)."""
    for step in _steps(doc):
        for call in step.get("tool_calls") or []:
            if not isinstance(call, Mapping) or not str(call.get("function_name") or "").startswith("skill"):
                continue
            args = _arguments(call)
            for key in ("name", "skill", "skill_name"):
                value = args.get(key)
                if isinstance(value, str) and (value == name or value.rsplit("/", 1)[-1] == name):
                    return True
    return False


def failed(doc: Mapping[str, Any]) -> bool:
    """Whether the run's turn ended in error or was cancelled, or one of its tool calls failed."""
    for step in _steps(doc):
        extra = step.get("extra")
        hermes = extra.get("hermes") if isinstance(extra, Mapping) else None
        if isinstance(hermes, Mapping) and hermes.get("turn_status") in _FAILED:
            return True
        observation = step.get("observation")
        for result in (observation.get("results") if isinstance(observation, Mapping) else None) or []:
            extra = result.get("extra") if isinstance(result, Mapping) else None
            hermes = extra.get("hermes") if isinstance(extra, Mapping) else None
            if isinstance(hermes, Mapping) and hermes.get("status") in _FAILED:
                return True
    return False


def select(paths: Iterable[Path], selection: Selection, *, now: datetime | None = None,
           definitions_from: Fallback = ()) -> list[Path]:
    """The files of ``paths`` that match ``selection`` (each loaded and checked first; ``definitions_from``: where
    else a store file copied elsewhere finds its tool lists and system prompts, see :func:`.load_trajectory`).

    Raises:
        TrajectoryError: a file is not a trajectory that can be read (naming it).
    """
    moment = now or datetime.now(timezone.utc)
    out: list[Path] = []
    for path in paths:
        doc = load_trajectory(path, definitions_from=definitions_from)
        extra = doc.get("extra")
        if isinstance(extra, Mapping) and isinstance(extra.get("hermes"), Mapping) and extra["hermes"].get("replay"):
            continue
        if selection.since is not None:
            started = _started(doc)
            if started is None or started < moment - selection.since:
                continue
        if selection.skill is not None and not used_skill(doc, selection.skill):
            continue
        if selection.failed and not failed(doc):
            continue
        out.append(path)
    return out
