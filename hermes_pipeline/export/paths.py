"""Where exporter files go when a configuration names no directory (spec 04 FMT-35).

The default is the ``telemetry`` directory of the profile that activated the pipeline,
``$HERMES_HOME/telemetry`` — never the process working directory, which would litter whatever
directory the host happens to run in. An explicit relative ``output_directory`` is still resolved
against the working directory (CFG-83: relative paths in a component's config are relative to
the working directory at activation, as in NeMo Relay).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

TELEMETRY_DIR: Final = "telemetry"
"""The name of the output directory under a profile's home."""


def default_output_directory(hermes_home: Path | str | None = None) -> Path:
    """``<hermes_home>/telemetry`` as an absolute path.

    Without ``hermes_home``: the default profile, ``$HERMES_HOME`` (a blank value counts as unset),
    else ``~/.hermes``.
    """
    from ..config.discovery import PipelineSettings, canonical

    home = Path(hermes_home).expanduser() if hermes_home is not None else PipelineSettings().hermes_home_path()
    return canonical(home) / TELEMETRY_DIR


def resolve_directory(value: str | None, *, base_dir: Path | None, default_dir: Path | None) -> tuple[Path, bool]:
    """``(absolute directory, is_default)`` for an ``output_directory`` value.

    ``None`` (the key is absent) gives ``default_dir``, else :func:`default_output_directory`;
    a relative value is joined to ``base_dir``, else to the working directory now (CFG-83).
    """
    if value is None:
        return (default_dir if default_dir is not None else default_output_directory()), True
    path = Path(value).expanduser() if value else Path()
    if path.is_absolute():
        return path, False
    return (base_dir if base_dir is not None else Path.cwd()) / path, False


__all__ = ["TELEMETRY_DIR", "default_output_directory", "resolve_directory"]
