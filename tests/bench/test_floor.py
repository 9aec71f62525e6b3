"""The benchmark's two floor rows write what the engine writes (FMT-1, FMT-42), and the obliged one scrubs.

``bench/bench_exporters.py`` reports how far the engine is from its floors; that comparison is only
honest if a floor produces the same ATOF scope tree and ATIF steps as the engine for the same workload,
and if the obliged floor really runs the credential scrubber over every event and document (FMT-33a) and writes
its ATIF files as FMT-52 says (a temporary file, ``fsync``, rename), as the engine must.
"""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._repo import REPO

sys.path.insert(0, str(REPO / "bench"))  # bench scripts import their siblings

import bench_exporters as bench  # noqa: E402
from _floor import OBLIGATIONS, floor_run  # noqa: E402

from hermes_pipeline.demo.otlp_receiver import OTLPReceiver  # noqa: E402


def _atof(path: Path) -> list[tuple[Any, ...]]:
    """Per line: kind, phase, category, name, parent's name, and the key sets of the three content fields."""
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    names = {e["uuid"]: e["name"] for e in events if e.get("scope_category") == "start"}

    def keys(value: Any) -> Any:
        return sorted(value) if isinstance(value, dict) else value

    return sorted((e["kind"], e["scope_category"], e["category"], e["name"], names.get(e["parent_uuid"]),
                   sorted(e), keys(e["data"]), keys(e["category_profile"])) for e in events)


def _atif(directory: Path) -> list[tuple[Any, ...]]:
    out = []
    for path in sorted(directory.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out.append((doc["schema_version"], [(s["source"], s.get("message")) for s in doc["steps"]],
                    [(c["function_name"], c["arguments"]) for s in doc["steps"] for c in s.get("tool_calls") or []],
                    sum(len((s.get("observation") or {}).get("results") or []) for s in doc["steps"]),
                    {k: v for k, v in doc["final_metrics"].items() if k.startswith("total_")}))
    return sorted(out, key=repr)


@pytest.mark.parametrize("obliged", [False, True])
def test_fmt1_fmt42_floor_writes_the_engines_scope_tree_and_steps(tmp_path: Path, obliged: bool) -> None:
    workload = bench.Workload(2, 2, 3)
    (tmp_path / "floor").mkdir()
    (tmp_path / "ours").mkdir()
    bench.floor_row(workload, tmp_path / "floor", None, obligations=OBLIGATIONS if obliged else ())
    with OTLPReceiver(discard=True) as receiver:
        bench.hermes_run(workload, tmp_path / "ours", receiver, exporters=True, otlp=False)
    floor_atof = _atof(tmp_path / "floor" / "events.jsonl")
    assert len(floor_atof) == workload.events()
    ours_atof = _atof(tmp_path / "ours" / "events.jsonl")
    # the engine's content fields hold more than the floor writes; the scope tree and line keys are the same
    assert [e[:6] for e in floor_atof] == [e[:6] for e in ours_atof]
    assert _atif(tmp_path / "floor" / "atif") == _atif(tmp_path / "ours" / "atif")


def test_fmt33a_obliged_floor_scrubs_every_line_and_document(tmp_path: Path) -> None:
    canary = secrets.token_hex(16)
    args = {"path": "notes.txt", "note": f"my key is sk-proj-{canary}"}
    response = bench.Workload(1, 1, 2).response()

    def tool(**kwargs: Any) -> str:
        return f"password: {canary}"

    for obliged in (False, True):
        directory = tmp_path / str(obliged)
        floor_run(1, 2, 2, directory, bench.REQUEST, response, bench.USER, args, tool, lambda fn: fn(),
                  obligations=OBLIGATIONS if obliged else ())
        written = (directory / "events.jsonl").read_bytes() + b"".join(
            p.read_bytes() for p in (directory / "atif").glob("*.json"))
        assert (canary.encode() in written) is not obliged  # the plain floor skips the scrubber, by design
    assert b"<redacted:" in (tmp_path / "True" / "events.jsonl").read_bytes()


def test_fmt52_obliged_floor_writes_each_atif_file_through_fsync_and_rename(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The obliged floor pays for FMT-52 as the engine does: each ATIF file is a temporary file of the same
    directory, synced, then renamed over its name (mode 0600, nothing left behind); the floor without the
    obligation writes the file in place and syncs nothing."""
    import os

    synced: list[int] = []
    renamed: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (renamed.append((str(a), str(b))), real_replace(a, b))[1])
    workload = bench.Workload(3, 2, 2)
    for obligations in (OBLIGATIONS[:3], OBLIGATIONS):
        synced.clear()
        renamed.clear()
        directory = tmp_path / str(len(obligations))
        directory.mkdir()
        bench.floor_row(workload, directory, None, obligations=obligations)
        files = sorted((directory / "atif").iterdir())
        assert [p.name for p in files if not p.name.startswith("atif-")] == []  # no temporary file left
        assert len(files) == workload.sessions
        if "durable" in obligations:
            assert len(synced) == workload.sessions
            assert sorted(target for _, target in renamed) == [str(p) for p in files]
            assert all(Path(source).parent == directory / "atif" and Path(source).name.startswith(".")
                       for source, _ in renamed)
            assert {p.stat().st_mode & 0o777 for p in files} == {0o600}
        else:
            assert synced == [] and renamed == []
