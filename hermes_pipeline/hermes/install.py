"""Enable the bridge in a Hermes profile: add ``hermes_pipeline`` to ``plugins.enabled`` in ``config.yaml``.

The file is edited in ruamel.yaml round-trip mode, so comments, key order, quoting and indentation
survive; only the list entry is added (and the name removed from ``plugins.disabled``, where it would
win over ``enabled``). A missing file is created with just that setting. The write is atomic.
"""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .facts import BRIDGE_PLUGIN, hermes_home

__all__ = ["InstallError", "InstallResult", "enable_bridge"]


class InstallError(Exception):
    """``config.yaml`` cannot be edited: the message says which file and why."""


@dataclass
class InstallResult:
    """What :func:`enable_bridge` did."""

    config_path: Path
    changes: list[str] = field(default_factory=list)
    """One line per change; empty when the bridge was already enabled."""
    created: bool = False


def _yaml(text: str) -> Any:
    from ruamel.yaml import YAML

    from ..config.profile_edit import guess_indent

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    mapping, offset = guess_indent(text)
    yaml.indent(mapping=mapping or 2, sequence=offset + 2, offset=offset)
    yaml.width = 4096
    return yaml


def enable_bridge(home: str | Path | None = None) -> InstallResult:
    """List the bridge under ``plugins.enabled`` of ``<home>/config.yaml`` (default ``$HERMES_HOME``)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    from ..config.errors import ConfigError
    from ..config.files import read_config_text
    from ..config.yaml_text import check_depth

    root = hermes_home(home)
    path = root / "config.yaml"
    result = InstallResult(path)
    try:  # the package's safe reader: a FIFO or a device is refused at once, never waited for
        text = read_config_text(path, code="config.invalid_file")
        check_depth(text, path)  # ruamel.yaml recurses per nested collection: a deep file is refused first
    except ConfigError as exc:
        if exc.code != "pipeline.file_missing":
            raise InstallError(f"cannot read {path}: {exc.message}") from None
        text, result.created = "", True
    yaml = _yaml(text)
    try:
        data = yaml.load(text) if text.strip() else CommentedMap()
    except Exception as exc:
        raise InstallError(f"{path} is not valid YAML ({type(exc).__name__}); fix it, then run this again") from None
    if data is None:
        data = CommentedMap()
    if not isinstance(data, dict):
        raise InstallError(f"{path} must be a YAML mapping at the top level")
    plugins = data.get("plugins")
    if plugins is None:
        plugins = data["plugins"] = CommentedMap()
    if not isinstance(plugins, dict):
        raise InstallError(f"{path}: 'plugins' must be a mapping, not {type(plugins).__name__}")
    enabled = plugins.get("enabled")
    if enabled is None:
        enabled = plugins["enabled"] = CommentedSeq()
    if not isinstance(enabled, list):
        raise InstallError(f"{path}: 'plugins.enabled' must be a list, not {type(enabled).__name__}")
    if BRIDGE_PLUGIN not in enabled:
        enabled.append(BRIDGE_PLUGIN)
        result.changes.append(f"added {BRIDGE_PLUGIN} to plugins.enabled")
    disabled = plugins.get("disabled")
    if isinstance(disabled, list) and BRIDGE_PLUGIN in disabled:
        while BRIDGE_PLUGIN in disabled:
            disabled.remove(BRIDGE_PLUGIN)
        result.changes.append(f"removed {BRIDGE_PLUGIN} from plugins.disabled (it overrides plugins.enabled)")
    if result.changes:
        buffer = io.StringIO()
        yaml.dump(data, buffer)
        _write(path, buffer.getvalue())
    return result


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config.yaml.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o7777)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InstallError(f"cannot write {path}: {exc.strerror or exc}") from None
