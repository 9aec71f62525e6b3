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

from typing import Final

from ..base import KeywordBuilder
from . import config
from .sink import AtifPlugin, AtifSink, ExportConfigError, TrajectoryFile, build_atif_plugin, build_atif_sink

__all__ = ["AtifPlugin", "AtifSink", "ExportConfigError", "TrajectoryFile", "atif_builder",
           "build_atif_plugin", "build_atif_sink"]


atif_builder: Final = KeywordBuilder(build_atif_sink, config)
"""The ``atif`` entry point: :func:`build_atif_sink` with the section's statement from :mod:`.config`."""
