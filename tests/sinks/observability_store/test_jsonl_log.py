"""hermes_pipeline's structured log (spec 06 BOOK-47): JSON Lines with stable event ids and correlation ids."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.profile import open_profile, release_all
from hermes_pipeline.logs import attach_jsonl_log, event_id
from hermes_pipeline.logs import jsonl as jsonl_module

LOG = logging.getLogger("hermes_pipeline.tests.jsonl")
SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)*$")
TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_fields_event_ids_and_no_secrets(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "hermes-pipeline.jsonl"
    handle = attach_jsonl_log(path)
    try:
        for name in ("a", "b"):
            LOG.warning("hermes_pipeline: sink %s failed with token %s", name, "sk-abcdefghijklmnopqrstuvwxyz012345")
        LOG.warning("explicit", extra={"event": "my_event", "trajectory_id": "t-1", "rows": 3})
    finally:
        handle.close()
    first, second, third = _lines(path)
    assert set(first) >= {"ts", "level", "logger", "event", "msg"} and TS.match(first["ts"])
    assert first["level"] == "WARNING" and first["logger"] == "hermes_pipeline.tests.jsonl"
    assert first["event"] == second["event"] == "sink_failed_with_token" and SNAKE.match(first["event"])
    assert "sk-abc" not in path.read_text() and "sink a failed" in first["msg"]
    assert third["event"] == "my_event" and third["trajectory_id"] == "t-1" and third["rows"] == 3


def test_correlation_ids_come_from_the_calling_code(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    handle = attach_jsonl_log(path)
    engine = Engine()
    engine.register_hook("post_tool_call", lambda **kw: LOG.warning("inside the tool's hook"))
    try:
        host = Host(engine)
        with host.session() as session, session.turn("x") as turn:
            turn.call_tool("t", {}, lambda: (LOG.warning("inside the tool"), "ok")[1], tool_call_id="call-7")
            turn.complete("ok")
    finally:
        handle.close()
    line = next(x for x in _lines(path) if x["msg"] == "inside the tool")
    assert line["session_id"] == session.session_id and line["turn_id"] == turn.turn_id
    assert line["tool_call_id"] == "call-7"


def test_rotation_keeps_five_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl_module, "MAX_BYTES", 2000)
    path = tmp_path / "r.jsonl"
    handle = attach_jsonl_log(path)
    try:
        for k in range(400):
            LOG.warning("line %d", k)
    finally:
        handle.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["r.jsonl", "r.jsonl.1", "r.jsonl.2", "r.jsonl.3", "r.jsonl.4", "r.jsonl.5"]
    assert all(p.stat().st_size <= 2200 for p in tmp_path.iterdir())


def test_a_profile_logs_to_its_home(tmp_path: Path) -> None:
    profile = open_profile(tmp_path / "p")
    try:
        LOG.warning("hello from a profile")
    finally:
        release_all()
    lines = _lines(tmp_path / "p" / "logs" / "hermes-pipeline.jsonl")
    assert any(x["msg"] == "hello from a profile" for x in lines)
    LOG.warning("after close")  # detached: not written
    assert not any(x["msg"] == "after close" for x in _lines(tmp_path / "p" / "logs" / "hermes-pipeline.jsonl"))
    assert profile.closed


@given(template=st.text(max_size=80), args=st.lists(st.integers(), max_size=3))
def test_event_ids_are_snake_case_and_ignore_arguments(template: str, args: list[int]) -> None:
    ident = event_id(template, "hermes_pipeline.x")
    assert SNAKE.match(ident) and len(ident) <= 64
    assert event_id(template + " %s", "hermes_pipeline.x") == ident or "%" in template or "{" in template


def test_an_unwritable_log_is_reported_once_and_logging_goes_on(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "logs").write_text("a file where the directory should be")
    handle = attach_jsonl_log(tmp_path / "logs" / "x.jsonl")
    try:
        LOG.warning("one")
        LOG.warning("two")
    finally:
        handle.close()
    err = capsys.readouterr().err
    assert err.count("cannot be written") == 1
