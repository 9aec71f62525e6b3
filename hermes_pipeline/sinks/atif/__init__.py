"""The ATIF v1.7 sink: one trajectory document per top-level agent scope (spec 04 §3).

- :mod:`.config`: the one statement of the ``atif`` section's keys (checks, merge lists, defaults),
  its config statement (:func:`.config.validate_config`) and its parser (``parse_atif_config``);
- :mod:`.sink`: :class:`AtifSink` (the scope listener and its bounded writer; ``AtifSink.from_config``
  builds it from the section) and :func:`build_atif_sink` (the same with keyword options);
- :mod:`.trajectory`: events grouped into trajectories, documents built when a root scope ends;
- :mod:`.steps` (with :mod:`.values`): the ATIF step mapping of LLM calls, tool calls and marks;
- :mod:`.files`: the local trajectory directory and the HTTP storage destination.

:class:`AtifSink` is the ``atif`` entry point of the ``hermes_pipeline.sinks`` group; stand-alone and
worker-process use are the generic :class:`~hermes_pipeline.export.standalone.SinkPlugin` and
:mod:`hermes_pipeline.export.worker`. ``atif_builder``, ``AtifPlugin`` and ``build_atif_plugin`` are
deprecated names kept for existing callers.
"""

from __future__ import annotations

from typing import Final

from .sink import AtifPlugin, AtifSink, ExportConfigError, TrajectoryFile, build_atif_plugin, build_atif_sink

__all__ = ["AtifPlugin", "AtifSink", "ExportConfigError", "TrajectoryFile", "atif_builder",
           "build_atif_plugin", "build_atif_sink"]


atif_builder: Final = AtifSink
"""Deprecated: the ``atif`` entry point is :class:`AtifSink` (this name was the entry point before)."""
