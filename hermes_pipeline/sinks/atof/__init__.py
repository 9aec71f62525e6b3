"""The ATOF 0.1 sink: JSON-Lines file sinks and HTTP stream sinks (spec 04 §2).

- :mod:`.config`: the one statement of the ``atof`` section's keys (checks, removed keys, list
  paths, defaults) and its parser (``parse_atof_config``);
- :mod:`.encoder`: :class:`AtofEncoder`, where a scope event becomes one ATOF line of a format;
- :mod:`.sink`: :class:`AtofSink` (the scope listener: one bounded writer per destination, whose
  thread encodes each event into that destination's line), :class:`AtofPlugin` (stand-alone use),
  the builders.

:data:`atof_builder` is the ``atof`` entry point of the ``hermes_pipeline.sinks`` group.
"""

from __future__ import annotations

from typing import Final

from ..base import KeywordBuilder
from . import config
from .encoder import AtofEncoder, replace_dots
from .sink import AtofPlugin, AtofSink, ExportConfigError, build_atof_plugin, build_atof_sink

__all__ = ["AtofEncoder", "AtofPlugin", "AtofSink", "ExportConfigError", "atof_builder",
           "build_atof_plugin", "build_atof_sink", "replace_dots"]


atof_builder: Final = KeywordBuilder(build_atof_sink, config)
"""The ``atof`` entry point: :func:`build_atof_sink` with the section's statement from :mod:`.config`."""
