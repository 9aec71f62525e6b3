"""The ATOF 0.1 sink: JSON-Lines file sinks and HTTP stream sinks (spec 04 §2).

- :mod:`.config`: the one statement of the ``atof`` section's keys (checks, removed keys, list
  paths, defaults) and its parser (``parse_atof_config``);
- :mod:`.sink`: :class:`AtofSink` (the scope listener: one bounded writer per destination, where
  each event becomes one ATOF line), :class:`AtofPlugin` (stand-alone use), the builders.

:data:`atof_builder` is the ``atof`` entry point of the ``hermes_pipeline.sinks`` group.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..base import Sink, SinkContext
from . import config
from .sink import AtofEncoder, AtofPlugin, AtofSink, ExportConfigError, build_atof_plugin, build_atof_sink, replace_dots

__all__ = ["AtofBuilder", "AtofEncoder", "AtofPlugin", "AtofSink", "ExportConfigError", "atof_builder",
           "build_atof_plugin", "build_atof_sink", "replace_dots"]


class AtofBuilder:
    """Builds the ``atof`` section's sink from the section and the shared :class:`SinkContext`, and carries
    the section's config statement (:func:`.config.validate_config`), its merge lists and output locations."""

    validate_config = staticmethod(config.validate_config)
    list_paths = config.LIST_PATHS
    output_locations = staticmethod(config.output_locations)

    def __call__(self, section: Mapping[str, Any], ctx: SinkContext) -> Sink:
        sink: Sink = build_atof_sink(section, default_dir=ctx.default_dir, **ctx.builder_options())
        return sink


atof_builder: Final = AtofBuilder()
"""The ``atof`` entry point."""
