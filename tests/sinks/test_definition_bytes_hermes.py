"""Issue #27 item 9 with the real Hermes Agent: a short ``hermes chat -q`` session writes, per LLM call, at most a
fifth of the bytes of its full requests into the ATOF file and into the trajectory store, and both give back every
request exactly.

Hermes' tool schemas and system prompt are kept once per output directory (the ``definitions/`` sidecar of the
ATOF file sink and of the store, :mod:`hermes_pipeline.export.definition_files`). The bound is derived from the
same run: the uncompressed bytes of the requests the scripted model server received, per call (each written
whole would cost that much); what the measured session adds to each output, sidecar included, is compared with
a fifth of it. A first one-shot session in the same directories comes before, as on a real profile (FMT-25, the
ATOF history delta, keeps working beside it; BOOK-31 replay reads the store's requests whole).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.readers.definitions import resolve_atof_requests
from hermes_pipeline.replay.recording import Recording
from hermes_pipeline.sinks.trajectory_store import store_files

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # the bench's session runner

import bench_bytes  # noqa: E402

HERMES = shutil.which("hermes")
pytestmark = pytest.mark.skipif(HERMES is None, reason="needs the hermes command (pip install '.[hermes]')")


def _atof_requests(path: Path, start: int) -> list[Any]:
    """The full requests of the ATOF lines from byte ``start``: definitions resolved, the history delta
    (``messages_offset``) rebuilt."""
    events = [json.loads(line) for line in path.read_bytes()[start:].decode().splitlines() if line.strip()]
    history: list[Any] = []
    out = []
    for event in resolve_atof_requests(events, path):
        if event.get("name") != "llm.call" or event.get("scope_category") != "start":
            continue
        request = event["data"]["request"]
        offset = event["data"].get("messages_offset", 0)
        history = history[:offset] + request["body"]["messages"]
        out.append({**request, "body": {**request["body"], "messages": history}})
    return out


def test_a_short_hermes_session_writes_a_fifth_of_its_request_bytes_and_reads_back_whole(tmp_path: Path) -> None:
    assert HERMES is not None
    paths = bench_bytes.setup_profile(tmp_path)
    out, store = paths["out"], paths["store"]
    bench_bytes.run_session(HERMES, paths, bench_bytes.ROOT, 1, "first")
    first_out, first_store = bench_bytes.sizes(out), bench_bytes.sizes(store)
    calls = 3
    received = bench_bytes.run_session(HERMES, paths, bench_bytes.ROOT, calls, "measured")
    then_out, then_store = bench_bytes.sizes(out), bench_bytes.sizes(store)

    full = sum(len(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()) for r in received) / calls
    atof = bench_bytes.grown(first_out, then_out, lambda n: n == "events.jsonl" or n.startswith("definitions/"))
    stored = bench_bytes.grown(first_store, then_store)
    assert atof / calls <= full / 5, (atof / calls, full)
    assert stored / calls <= full / 5, (stored / calls, full)

    atof_requests = _atof_requests(out / "events.jsonl", first_out["events.jsonl"])
    (measured,) = [p for p in store_files(store) if p.name not in first_store]
    recording = Recording.from_file(measured)
    assert len(atof_requests) == len(recording.calls) == calls
    for from_atof, call, body in zip(atof_requests, recording.calls, received, strict=True):
        assert from_atof == call.request  # both outputs give back the same whole request
        # every tool schema Hermes sent (the sanitizer's depth bound, applied before any sink, shortens the
        # deepest enum lists alike in the request replay compares with)
        assert [t["function"]["name"] for t in from_atof["body"]["tools"]] == [t["function"]["name"]
                                                                                for t in body["tools"]]
        system = from_atof["body"]["messages"][0]
        assert system["role"] == "system" and system == body["messages"][0]
        assert "$ref" not in json.dumps(from_atof)
