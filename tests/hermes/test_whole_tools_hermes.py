"""With the real Hermes Agent, a recording holds the tool schemas the model received, whole (issue #28 item 2).

Hermes' sanitizer cuts what lies deeper than 8 in its ``request`` (spec 01 §8.2.3 rule 1: its tool schemas'
``parameters.properties.X.items.enum`` ... become ``<str depth limit>``); that limit stays for arbitrary payload
objects (OBS-51), but the bridge's recorded request (BOOK-29, BOOK-31a) keeps the whole schemas. The reference
is what the scripted model server received.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.engine.sanitize import PASS1_MAX_ITEMS, PASS1_MAX_STR, jsonable
from hermes_pipeline.replay.recording import Recording
from hermes_pipeline.sinks.trajectory_store import store_files

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # the bench's session runner

import bench_bytes  # noqa: E402

HERMES = shutil.which("hermes")
pytestmark = pytest.mark.skipif(HERMES is None, reason="needs the hermes command (pip install '.[hermes]')")


def _cut(tool: Any) -> bool:
    """Whether the sanitizer's depth limit changes this schema (at a tool's depth in the request)."""
    return jsonable(tool, max_str=PASS1_MAX_STR, max_items=PASS1_MAX_ITEMS, depth=3) != tool


def test_recorded_tools_equal_what_the_model_received(tmp_path: Path) -> None:
    """BOOK-31a: every tool schema of every recorded request equals the model server's, the deep ones included."""
    assert HERMES is not None
    paths = bench_bytes.setup_profile(tmp_path)
    received = bench_bytes.run_session(HERMES, paths, bench_bytes.ROOT, 2, "tools")
    (path,) = store_files(paths["store"])
    recording = Recording.from_file(path)
    assert len(recording.calls) == len(received) == 2
    for call, body in zip(recording.calls, received, strict=True):
        assert any(_cut(tool) for tool in body["tools"])  # the case at stake: Hermes' copy was cut
        assert call.request["body"]["tools"] == body["tools"]
