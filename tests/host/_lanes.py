"""Shared by the record-lane tests: the scope events a run gives through the record lanes and through the
dispatch, in a form that compares (ids numbered in order of appearance, durations left out)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.export import ScopeEvent, ScopePlugin


def normalised(events: list[ScopeEvent]) -> list[tuple[Any, ...]]:
    """``events`` with their uuids numbered in order of appearance and every duration left out."""
    ids: dict[int, int] = {}

    def n(uuid: int | None) -> int | None:
        return None if uuid is None else ids.setdefault(uuid, len(ids))

    return [(e.kind, e.phase, n(e.uuid), n(e.parent_uuid), e.name, e.category, e.attributes, e.profile,
             json.dumps(e.data, sort_keys=True, default=str),
             json.dumps({k: v for k, v in (e.metadata or {}).items() if "duration" not in k}, sort_keys=True,
                        default=str)) for e in events]


def lanes_and_dispatch(run: Callable[[Engine], None], *, deferred: bool,
                       monkeypatch: pytest.MonkeyPatch) -> tuple[list[list[tuple[Any, ...]]], set[str]]:
    """``run`` on a fresh engine with a scope plugin, first with the record lanes, then with every hook
    dispatched: the two runs' :func:`normalised` events, and the hooks that went through a lane."""
    runs: list[list[tuple[Any, ...]]] = []
    used: set[str] = set()
    for lanes in (True, False):
        engine = Engine()
        seen: list[ScopeEvent] = []
        plugin = ScopePlugin((seen.append,), deferred=deferred)
        engine.add_plugin(plugin, name="scopes")
        real = engine.record_lanes

        def spy(hook: str, entries: Any, _lanes: bool = lanes) -> Any:
            found = real(hook, entries) if _lanes else None
            if found is not None:
                used.add(hook)
            return found

        monkeypatch.setattr(engine, "record_lanes", spy)
        run(engine)
        assert plugin.shutdown(5.0)
        runs.append(normalised(seen))
    return runs, used
