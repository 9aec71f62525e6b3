"""The "one hand-off" row of ``bench_exporters.py``: the engine's own parts with the writer threads taken out.

The scope plugin (``ScopePlugin``, deferred: the caller's thread only timestamps and enqueues) feeds
one listener on its publication thread that encodes each event once per format and writes it: the
ATOF line through the engine's ``AtofEncoder`` into one buffered file, and the event into the ATIF
``TrajectoryAssembler``, whose finished trajectories go to the engine's ``TrajectoryDirectory``. So
a tool call reaches its ATOF line through exactly one thread hand-off, with the same scope plugin,
credential scrubbing, encoders and outputs as the shipped sinks, but without their per-destination
bounded queues and writer threads (and so without their fault handling: drop counters, retries,
deadlines). It measures what the lean data path of issue #13 would cost, not a shipped configuration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_pipeline.contract.versions import PACKAGE_VERSION
from hermes_pipeline.export.events import ScopeEvent
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.sinks.atif.config import parse_atif_config
from hermes_pipeline.sinks.atif.files import TrajectoryDirectory
from hermes_pipeline.sinks.atif.trajectory import TrajectoryAssembler, TrajectoryFile
from hermes_pipeline.sinks.atof.encoder import AtofEncoder


class OneHandOff:
    """The scope plugin plus the inline ATOF + ATIF listener; ``scope_plugin`` goes to ``engine.add_plugin``."""

    def __init__(self, directory: Path, atif: dict[str, Any]) -> None:
        self.out = open(directory / "events.jsonl", "wb", buffering=1 << 16)  # noqa: SIM115 - closed in close()
        self.encode = AtofEncoder()
        config = parse_atif_config(atif, base_dir=directory)
        self.files = TrajectoryDirectory(config.directory, config.template)
        self.files.open()
        self.assembler = TrajectoryAssembler(config, self._trajectory, version=PACKAGE_VERSION)
        self.scope_plugin = ScopePlugin(deferred=True)
        self.scope_plugin.add_listener(self)

    def _trajectory(self, item: TrajectoryFile) -> None:
        self.files.write([item])

    def __call__(self, event: ScopeEvent) -> None:
        self.out.write(self.encode(event))
        self.assembler.add(event)

    def close(self, timeout: float) -> None:
        self.scope_plugin.shutdown(timeout)
        self.assembler.close()
        self.out.close()
