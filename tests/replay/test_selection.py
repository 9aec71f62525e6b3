"""The selection of a batch replay (spec 06 BOOK-32; issue #28 item 4): ``--since`` ages, ``--skill NAME``,
``--failed``, checked on generated input and on small trajectories, with an injected clock."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.replay.errors import TrajectoryError
from hermes_pipeline.replay.selection import Selection, parse_since, select

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)


@given(st.integers(min_value=1, max_value=10_000), st.sampled_from("mhdw"))
def test_an_age_is_a_number_and_a_unit(count: int, unit: str) -> None:
    seconds = {"m": 60, "h": 3600, "d": 86_400, "w": 604_800}[unit]
    assert parse_since(f"{count}{unit}") == timedelta(seconds=count * seconds)


@given(st.text(max_size=12))
def test_any_other_age_is_a_typed_error_naming_the_option(text: str) -> None:
    try:
        parse_since(text)
    except TrajectoryError as exc:
        assert exc.key == "--since"


def _trajectory(tmp_path: Path, name: str, *, started: datetime, tool: dict[str, Any] | None = None,
                status: str = "ok", turn_status: str | None = None) -> Path:
    user: dict[str, Any] = {"step_id": 1, "source": "user", "message": "hi",
                            "timestamp": started.isoformat().replace("+00:00", "Z")}
    if turn_status:
        user["extra"] = {"hermes": {"turn_status": turn_status}}
    agent: dict[str, Any] = {"step_id": 2, "source": "agent", "message": "", "timestamp": user["timestamp"]}
    if tool is not None:
        agent["tool_calls"] = [{"tool_call_id": "c1", "function_name": tool["name"],
                                "arguments": json.dumps(tool["arguments"])}]
        agent["observation"] = {"results": [{"source_call_id": "c1", "content": "x",
                                             "extra": {"hermes": {"status": status}}}]}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"schema_version": "ATIF-v1.4", "session_id": name, "trajectory_id": name,
                                "agent": {"name": "hermes", "version": "0.19.0"}, "steps": [user, agent]}))
    return path


def test_since_skill_and_failed_keep_the_matching_runs(tmp_path: Path) -> None:
    """BOOK-32: ``--since 2d`` keeps runs started within two days of the (injected) clock; ``--skill NAME`` runs
    that called a ``skill_*`` tool on it (a category path ending in it too); ``--failed`` runs with a failed tool
    call or a turn that ended in error; the filters combine."""
    old = _trajectory(tmp_path, "old", started=NOW - timedelta(days=5),
                      tool={"name": "skill_view", "arguments": {"name": "notes"}})
    skill = _trajectory(tmp_path, "skill", started=NOW - timedelta(hours=3),
                        tool={"name": "skill_view", "arguments": {"name": "data/notes"}})
    broken = _trajectory(tmp_path, "broken", started=NOW - timedelta(hours=1),
                         tool={"name": "read_file", "arguments": {"path": "x"}}, status="error")
    errored = _trajectory(tmp_path, "errored", started=NOW - timedelta(hours=1), turn_status="error")
    other = _trajectory(tmp_path, "other", started=NOW - timedelta(hours=1),
                        tool={"name": "read_file", "arguments": {"name": "notes"}})
    every = [old, skill, broken, errored, other]
    assert select(every, Selection(since=timedelta(days=2)), now=NOW) == [skill, broken, errored, other]
    assert select(every, Selection(skill="notes"), now=NOW) == [old, skill]
    assert select(every, Selection(failed=True), now=NOW) == [broken, errored]
    assert select(every, Selection(since=timedelta(days=2), skill="notes"), now=NOW) == [skill]
    assert select(every, Selection(), now=NOW) == every
    doc = json.loads(other.read_text())
    doc["extra"] = {"hermes": {"replay": {"of": "old"}}}
    other.write_text(json.dumps(doc))
    assert select(every, Selection(), now=NOW) == [old, skill, broken, errored]  # a replay is not replayed again


def test_a_damaged_file_in_the_selection_is_a_typed_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": "ATIF-v1.4", "steps": [')
    with pytest.raises(TrajectoryError, match="bad.json"):
        select([bad], Selection(failed=True), now=NOW)
