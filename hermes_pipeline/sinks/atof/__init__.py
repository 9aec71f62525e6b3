"""The ATOF 0.1 sink: JSON-Lines file sinks and HTTP stream sinks (spec 04 §2).

- :mod:`.config`: the one statement of the ``atof`` section's keys (checks, removed keys, list
  paths, defaults) and its parser (``parse_atof_config``);
- :mod:`.encoder`: :class:`AtofEncoder`, where a scope event becomes one ATOF line of a format;
- :mod:`.sink`: :class:`AtofSink` (the scope listener: one bounded writer per destination, whose
  thread encodes each event into that destination's line; ``AtofSink.from_config`` builds it from the
  section) and :func:`build_atof_sink` (the same with keyword options).

:class:`AtofSink` is the ``atof`` entry point of the ``hermes_pipeline.sinks`` group; stand-alone and
worker-process use are the generic :class:`~hermes_pipeline.export.standalone.SinkPlugin` and
:mod:`hermes_pipeline.export.worker`. ``atof_builder``, ``AtofPlugin`` and ``build_atof_plugin`` are
deprecated names kept for existing callers.
"""

from __future__ import annotations

from typing import Final

from .encoder import AtofEncoder, replace_dots
from .sink import AtofPlugin, AtofSink, ExportConfigError, build_atof_plugin, build_atof_sink

__all__ = ["AtofEncoder", "AtofPlugin", "AtofSink", "ExportConfigError", "atof_builder",
           "build_atof_plugin", "build_atof_sink", "replace_dots"]


atof_builder: Final = AtofSink
"""Deprecated: the ``atof`` entry point is :class:`AtofSink` (this name was the entry point before)."""
