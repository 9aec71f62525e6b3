"""Where pipeline files come from: the selector, discovery paths and legacy variables (spec 03 §3, §9.1).

All locations are read through :class:`PipelineSettings` (from the environment or keyword arguments), so tests and
embedders can override them without touching the real home directory or ``/etc``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

SELECTOR_ENV: Final = "HERMES_NEMO_RELAY_PLUGINS_TOML"
"""The only switch for pipeline-file processing (CFG-2)."""

LEGACY_PREFIXES: Final = ("HERMES_NEMO_RELAY_ATOF_", "HERMES_NEMO_RELAY_ATIF_")
"""Prefixes of the removed exporter variables (CFG-8)."""

SYSTEM_OVERRIDE_ENV: Final = "HERMES_PIPELINE_SYSTEM_PLUGINS_TOML"
"""Overrides the system discovery path (packaging and tests)."""

_FIELDS: Final[dict[str, tuple[str, str]]] = {
    "plugins_toml": (SELECTOR_ENV, "plugins_toml"),
    "xdg_config_home": ("XDG_CONFIG_HOME", "xdg_config_home"),
    "home": ("HOME", "home"),
    "userprofile": ("USERPROFILE", "userprofile"),
    "program_data": ("ProgramData", "program_data"),
    "system_plugins_toml": (SYSTEM_OVERRIDE_ENV, "system_plugins_toml"),
    "hermes_home": ("HERMES_HOME", "hermes_home"),
    "managed_config": ("HERMES_MANAGED_CONFIG", "managed_config"),
}
"""Each field and the names it is read under, first match wins: the environment variable, then the field name
(both as keyword arguments and, case-sensitively, in the environment)."""

_UNSET: Final = object()


class PipelineSettings:
    """Process environment that decides pipeline activation and discovery.

    Every field can be given by its name (``PipelineSettings(plugins_toml=...)``) or its variable's name, or
    comes from the environment variable in parentheses (read when the object is made; unknown keyword
    arguments are ignored). A field is a string or ``None`` (unset).
    """

    __slots__ = ("hermes_home", "home", "managed_config", "plugins_toml", "program_data", "system_plugins_toml",
                 "userprofile", "xdg_config_home")

    plugins_toml: str | None
    """The selector (``HERMES_NEMO_RELAY_PLUGINS_TOML``)."""
    xdg_config_home: str | None
    home: str | None
    userprofile: str | None
    program_data: str | None
    system_plugins_toml: str | None
    """Overrides ``/etc/nemo-relay/plugins.toml`` (``HERMES_PIPELINE_SYSTEM_PLUGINS_TOML``)."""
    hermes_home: str | None
    managed_config: str | None
    """A machine-managed ``config.yaml`` overlay (``HERMES_MANAGED_CONFIG``), see CFG-64."""

    def __init__(self, **values: str | None) -> None:
        environ = os.environ
        for name, keys in _FIELDS.items():
            value: object = next((values[key] for key in keys if key in values), _UNSET)
            if value is _UNSET:
                value = next((environ[key] for key in keys if key in environ), None)
            elif value is not None and not isinstance(value, str):
                raise ValueError(f"PipelineSettings: {name} must be a string or None, not {type(value).__name__}")
            object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PipelineSettings):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PipelineSettings({', '.join(f'{name}={getattr(self, name)!r}' for name in _FIELDS)})"

    # ----------------------------------------------------------------- derived paths

    def selector(self) -> str | None:
        """The selector value with surrounding whitespace stripped; ``None`` when unset or blank."""
        value = (self.plugins_toml or "").strip()
        return value or None

    def selected_path(self, cwd: Path | None = None) -> Path | None:
        """The selected file: ``~`` expanded, relative paths against ``cwd`` (CFG-2)."""
        value = self.selector()
        if value is None:
            return None
        path = self._expand(value)
        return path if path.is_absolute() else (cwd or Path.cwd()) / path

    def _home_dir(self) -> Path | None:
        base = self.home or (self.userprofile if sys.platform == "win32" else None)
        return Path(base) if base else None

    def _expand(self, value: str) -> Path:
        if value == "~" or value.startswith(("~/", "~" + os.sep)):
            home = self._home_dir()
            if home is not None:
                return home / value[2:] if len(value) > 1 else home
        return Path(value).expanduser()

    def user_path(self) -> tuple[Path | None, str]:
        """The user ``plugins.toml`` and the variable that located it (§9.1 row 1)."""
        if self.xdg_config_home:
            return Path(self.xdg_config_home) / "nemo-relay" / "plugins.toml", "XDG_CONFIG_HOME"
        home = self._home_dir()
        if home is None:
            return None, "HOME unset"
        return home / ".config" / "nemo-relay" / "plugins.toml", "HOME" if self.home else "USERPROFILE"

    def system_path(self) -> tuple[Path, str]:
        """The system ``plugins.toml`` and what located it (§9.1 row 2)."""
        if self.system_plugins_toml:
            return Path(self.system_plugins_toml), SYSTEM_OVERRIDE_ENV
        if sys.platform == "win32":
            return Path(self.program_data or r"C:\ProgramData") / "nemo-relay" / "plugins.toml", "ProgramData"
        return Path("/etc/nemo-relay/plugins.toml"), "default"

    def hermes_home_path(self) -> Path:
        """``$HERMES_HOME``, defaulting to ``~/.hermes``."""
        if self.hermes_home and self.hermes_home.strip():
            return self._expand(self.hermes_home.strip())
        home = self._home_dir() or Path.home()
        return home / ".hermes"


@dataclass(frozen=True, slots=True)
class Candidate:
    """One pipeline file taking part (or not) in the layering."""

    role: Literal["user", "system", "selected"]
    path: Path
    located_by: str
    """The variable (or rule) that produced the path, for ``config explain``."""
    status: Literal["layered", "missing", "duplicate", "not_searched"] = "layered"


def canonical(path: Path) -> Path:
    """The canonical form used for physical de-duplication (symlinks resolved, CFG-40)."""
    try:
        return path.resolve(strict=False)
    except (OSError, RuntimeError):
        return path.absolute()


def plan_layers(settings: PipelineSettings, selected: Path, *, discover: bool = True) -> list[Candidate]:
    """User, system and selected candidates with their status, lowest precedence first.

    Missing discovered files are skipped silently; a physical file is layered once, at its
    highest-precedence position (CFG-39, CFG-40). Only files named ``plugins.toml`` at the two
    discovery paths are considered; nothing is searched for relative to the working directory.
    """
    user, user_why = settings.user_path()
    system, system_why = settings.system_path()
    raw: list[Candidate] = []
    if user is not None:
        raw.append(Candidate("user", user, user_why, "layered" if discover else "not_searched"))
    raw.append(Candidate("system", system, system_why, "layered" if discover else "not_searched"))
    raw.append(Candidate("selected", selected, SELECTOR_ENV))
    seen: set[Path] = set()
    planned: list[Candidate] = []
    for candidate in reversed(raw):
        status = candidate.status
        if status == "layered" and candidate.role != "selected" and not candidate.path.is_file() \
                and not candidate.path.exists():
            status = "missing"
        if status == "layered":
            key = canonical(candidate.path)
            if key in seen:
                status = "duplicate"
            seen.add(key)
        planned.append(Candidate(candidate.role, candidate.path, candidate.located_by, status))
    return list(reversed(planned))


def legacy_env_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """Names (never values) of set ``HERMES_NEMO_RELAY_ATOF_*`` / ``..._ATIF_*`` variables (CFG-8)."""
    env = os.environ if environ is None else environ
    return sorted(name for name in env if name.startswith(LEGACY_PREFIXES))
