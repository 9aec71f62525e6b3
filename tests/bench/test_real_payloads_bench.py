"""The real-payload bench compares like with like (issue #29 item 8; spec 04 FMT-1, FMT-42, FMT-33a).

``bench/bench_real_payloads.py`` replays a session recorded from Hermes through the engine and through the
floor (``_floor.floor_replay``); its ratios are only honest if both write the same ATOF scope tree and one ATIF
file per session for the same recorded calls, if every session brings new text, and if the rows that must
scrub let no planted secret through.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # bench scripts import their siblings

import bench_real_payloads as real  # noqa: E402

from hermes_pipeline.demo.otlp_receiver import OTLPReceiver  # noqa: E402


def tree(path: Path) -> list[tuple[Any, ...]]:
    """Per ATOF line: kind, phase, category, name and the parent's name (sorted)."""
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    names = {e["uuid"]: e["name"] for e in events if e.get("scope_category") == "start"}
    return sorted((e["kind"], e["scope_category"], e["category"], e["name"], names.get(e["parent_uuid"]))
                  for e in events)


@pytest.fixture(scope="module")
def workload() -> real.RealWorkload:
    return real.RealWorkload(real.load_fixture(), 2)


def test_the_fixture_is_a_real_hermes_session_with_new_text_in_every_session(workload: real.RealWorkload) -> None:
    fixture = workload.fixture
    assert fixture["hermes_version"] and len(fixture["request"]["tools"]) >= 10
    assert workload.llm_calls >= 3 and workload.tools_per_session >= 5
    assert max(len(t["result"]) for c in fixture["calls"] for t in c["tools"]) > 4000
    first, second = workload.session(0), workload.session(1)
    assert first.user != second.user
    assert {t[3] for c in first.calls for t in c[2]}.isdisjoint({t[3] for c in second.calls for t in c[2]})
    # the history a request carries is the tool results the session's own tools returned
    last_request = first.calls[-1][0]
    results = {t[3] for c in first.calls for t in c[2]}
    assert results <= {m.get("content") for m in last_request["messages"]}


@pytest.mark.parametrize("obliged", [False, True])
def test_fmt1_fmt42_floor_replay_writes_the_engines_scope_tree(tmp_path: Path, workload: real.RealWorkload,
                                                              obliged: bool) -> None:
    (tmp_path / "floor").mkdir()
    (tmp_path / "ours").mkdir()
    floor = real.floor_row(workload, tmp_path / "floor", None, obliged=obliged)
    with OTLPReceiver(discard=True) as receiver:
        ours = real.hermes_run(workload, tmp_path / "ours", receiver, exporters=True, otlp=False)
    assert floor.atof_lines == ours.atof_lines == workload.events()
    assert floor.atif_files == ours.atif_files == workload.sessions
    assert tree(tmp_path / "floor" / "events.jsonl") == tree(tmp_path / "ours" / "events.jsonl")
    secrets = workload.secrets()
    assert real.leaks(tmp_path / "ours", secrets) == 0  # FMT-33a: the engine scrubs every planted secret
    if obliged:
        assert real.leaks(tmp_path / "floor", secrets) == 0  # the obliged floor runs the scrubber too
    else:
        assert real.leaks(tmp_path / "floor", secrets) > 0  # the inline floor does not: the secrets are real


def test_the_caller_floor_records_every_tool_call_inside_the_engines_run(tmp_path: Path,
                                                                         workload: real.RealWorkload) -> None:
    """The caller floor row (issue #29 caller-thread target) is only a floor if it does record each tool call: a
    start before the tool and an end after it, with the call's id, arguments and result, in call order, while the
    engine around it still exports every other event of the same run (so the agent's thread sees the same work)."""
    with OTLPReceiver(discard=True) as receiver:
        run = real.caller_floor_run(workload, tmp_path, receiver)
    assert run.cpu > 0
    records = [json.loads(line) for line in (tmp_path / "tool-floor.jsonl").read_text(encoding="utf-8").splitlines()]
    calls = [t for i in range(workload.sessions) for c in workload.session(i).calls for t in c[2]]
    assert [(phase, fields[0] if phase == "end" else fields[2]) for _, phase, fields in records] == \
        [(phase, call_id) for call_id, *_ in calls for phase in ("start", "end")]
    starts = [fields for _, phase, fields in records if phase == "start"]
    ends = [fields for _, phase, fields in records if phase == "end"]
    assert [(f[0], f[1]) for f in starts] == [(name, args) for _, name, args, _ in calls]
    assert [f[1] for f in ends] == [result for *_, result in calls]
    lines = (tmp_path / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == workload.events() - 2 * workload.tool_calls  # everything but the tool calls
