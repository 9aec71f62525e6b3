"""What the ATOF and ATIF writers make of the fixed streams of ``tests/data/writer_golden`` (their golden bytes).

The inputs (``<name>.events.json``) are :func:`tests.sinks._streams.build_stream` with a seeded choice; the
expected outputs beside them were written by :func:`write_fixtures` with the ``hermes_pipeline`` package of
commit 8dd3b8f, before the writer-thread work of issue #29 (this module and ``_streams.py`` beside that
package on ``PYTHONPATH``; ``python -m tests.sinks._golden <directory>``), so the test compares today's writers
with those earlier ones. Regenerate them only for an intended change of the output format.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from hermes_pipeline.export.events import ScopeEvent
from hermes_pipeline.sinks.atif.config import parse_atif_config
from hermes_pipeline.sinks.atif.trajectory import TrajectoryAssembler, TrajectoryFile
from hermes_pipeline.sinks.atof.encoder import AtofEncoder

from tests.sinks._streams import build_stream, stream_from_json, stream_json

DIRECTORY = Path(__file__).resolve().parents[1] / "data" / "writer_golden"
SEEDS = (3, 11)
ATIF_CONFIGS: dict[str, dict[str, Any]] = {
    "atif": {},  # the defaults: one file per session
    "atif-turns": {"group_by": "turn", "llm_history": "delta", "include_system_prompt": True,
                   "include_observed_events": False},
}


def streams() -> dict[str, list[ScopeEvent]]:
    """The fixed streams, by name (what :func:`write_fixtures` stores as inputs)."""
    out = {}
    for seed in SEEDS:
        rng = random.Random(seed)
        out[f"seed{seed}"] = build_stream(lambda choices: rng.choice(list(choices)), session_id=f"session-{seed}")
    return out


def outputs(events: list[ScopeEvent]) -> dict[str, bytes]:
    """``{"atof.jsonl": lines, "<config>.json": trajectory files one after the other}`` of ``events``."""
    encoder = AtofEncoder()
    out = {"atof.jsonl": b"".join(encoder(event) for event in events)}
    for name, options in ATIF_CONFIGS.items():
        files: list[TrajectoryFile] = []
        config = parse_atif_config({"enabled": True, "output_directory": "/nonexistent/atif", **options})
        assembler = TrajectoryAssembler(config, files.append, version="0.0-golden")
        for event in events:
            assembler.add(event)
        assembler.close()
        out[f"{name}.json"] = b"".join(f.name.encode() + b"\n" + f.content for f in files)
    return out


def load(name: str) -> list[ScopeEvent]:
    """The input stream ``name`` of the fixtures directory."""
    return stream_from_json(json.loads((DIRECTORY / f"{name}.events.json").read_text(encoding="utf-8")))


def write_fixtures(directory: Path) -> None:
    """Write each stream and what the writers of the code being run make of it into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, events in streams().items():
        (directory / f"{name}.events.json").write_text(json.dumps(stream_json(events), ensure_ascii=False) + "\n",
                                                      encoding="utf-8")
        for suffix, content in outputs(stream_from_json(json.loads(json.dumps(stream_json(events))))).items():
            (directory / f"{name}.{suffix}").write_bytes(content)


if __name__ == "__main__":
    write_fixtures(Path(sys.argv[1]))
