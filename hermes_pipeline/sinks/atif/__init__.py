"""The ATIF v1.7 sink: one trajectory document per top-level agent scope (spec 04 §3).

- :mod:`.config`: the one statement of the ``atif`` section's keys (checks, merge lists, defaults),
  its config statement (:func:`.config.validate_config`) and its parser (``parse_atif_config``);
- :mod:`.sink`: :class:`AtifSink` (the scope listener and its bounded writer), :class:`AtifPlugin`
  (stand-alone use), the builders;
- :mod:`.trajectory`: events grouped into trajectories, documents built when a root scope ends;
- :mod:`.steps` (with :mod:`.values`): the ATIF step mapping of LLM calls, tool calls and marks;
- :mod:`.files`: the local trajectory directory and the HTTP storage destination.

:data:`atif_builder` is the ``atif`` entry point of the ``hermes_pipeline.sinks`` group.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..base import Sink, SinkContext
from . import config
from .sink import AtifPlugin, AtifSink, ExportConfigError, TrajectoryFile, build_atif_plugin, build_atif_sink

__all__ = ["AtifBuilder", "AtifPlugin", "AtifSink", "ExportConfigError", "TrajectoryFile", "atif_builder",
           "build_atif_plugin", "build_atif_sink"]


class AtifBuilder:
    """Builds the ``atif`` section's sink from the section and the shared :class:`SinkContext`, and carries
    the section's config statement (:func:`.config.validate_config`), its merge lists and output locations."""

    validate_config = staticmethod(config.validate_config)
    list_paths = config.LIST_PATHS
    output_locations = staticmethod(config.output_locations)

    def __call__(self, section: Mapping[str, Any], ctx: SinkContext) -> Sink:
        sink: Sink = build_atif_sink(section, default_dir=ctx.default_dir, **ctx.builder_options())
        return sink


atif_builder: Final = AtifBuilder()
"""The ``atif`` entry point."""
