"""One lookup of a trajectory by id or unique prefix, shared by the commands and the dashboard (issue #27, BOOK-31).

An ambiguous prefix is a clear error listing the candidates (the commands: a typed error naming them; the
dashboard: a 409 page linking each); an unknown id is "no trajectory" (404); nothing but hex and dashes is
ever looked up.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.cli.trajectory_files import resolve_trajectory
from hermes_pipeline.dashboard.server import Dashboard
from hermes_pipeline.dashboard.sources import load_sources
from hermes_pipeline.replay.errors import TrajectoryError
from hermes_pipeline.sinks.trajectory_store import TrajectoryLookupError, find_trajectory

A = "01a23b56-15c8-75c9-81cb-8190ce3fa1f8"
B = "01a23b56-15de-75c9-81cb-8190ce3fa1f9"
C = "0f000000-0000-7000-8000-000000000001"


def _store(home: Path) -> Path:
    store = home / "trajectories"
    store.mkdir(parents=True)
    for tid in (A, B, C):
        doc = {"schema_version": "ATIF-v1.7", "session_id": tid, "trajectory_id": tid,
               "agent": {"name": "hermes", "version": "1", "model_name": "m"},
               "steps": [{"step_id": 1, "source": "user", "message": "hi", "timestamp": "2026-12-03T10:00:00Z"}],
               "extra": {"hermes": {"trajectory_date": "2026-12-03", "content": "full", "llm_payloads": True}}}
        (store / f"2026-12-03-{tid}.json").write_text(json.dumps(doc), encoding="utf-8")
    (store / "notes.json").write_text("{}", encoding="utf-8")
    return store


def test_full_ids_and_unique_prefixes(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert find_trajectory(store, A)[0] == A
    assert find_trajectory(store, "01a23b56-15c")[0] == A
    assert find_trajectory(store, " 0F00 ")[0] == C
    assert resolve_trajectory("01a23b56-15d", store).name.endswith(f"{B}.json")


def test_ambiguous_prefix_lists_the_candidates(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(TrajectoryLookupError) as caught:
        find_trajectory(store, "01a23b56")
    assert caught.value.candidates == (A, B) and A in str(caught.value) and B in str(caught.value)
    with pytest.raises(TrajectoryError, match="matches 2 trajectories"):
        resolve_trajectory("01a2", store)
    page = Dashboard(load_sources(tmp_path)).respond("/trajectories/01a23b56")
    assert page.status == 409 and f'href="/trajectories/{A}"'.encode() in page.body and B.encode() in page.body


def test_unknown_and_malformed_references(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for ref in ("ffff", "01a", "notes", "../x", ""):
        with pytest.raises(TrajectoryLookupError):
            find_trajectory(store, ref)
    with pytest.raises(TrajectoryError, match="no trajectory"):
        resolve_trajectory("ffff", store)
    dashboard = Dashboard(load_sources(tmp_path))
    assert dashboard.respond("/trajectories/ffff").status == 404
    assert dashboard.respond("/trajectories/01a").status == 404  # too short to be looked up


@given(st.text(max_size=40))
def test_any_reference_is_an_answer_or_a_typed_error(ref: str) -> None:
    store = Path(__file__).parent / "no-such-store-directory"
    with pytest.raises(TrajectoryLookupError):
        find_trajectory(store, ref)


def test_trace_show_takes_an_id_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_pipeline.cli.main import main

    _store(tmp_path)
    assert main(["trace", "show", "0f00", "--home", str(tmp_path), "--json"]) == 0
    assert main(["trace", "show", "01a23b56", "--home", str(tmp_path)]) == 1
    assert "matches 2 trajectories" in capsys.readouterr().err
