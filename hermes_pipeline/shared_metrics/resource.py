"""The bounded client resource of a package (SM-45) and the random ``install_id`` (SM-66..68).

Raw platform strings, hostnames and paths never leave this module: each field is normalised to a
closed value (or a short version string) before it is stored.
"""

from __future__ import annotations

import platform
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..engine.scrub import safe_scrub
from .vocab import ARCHITECTURES, INSTALL_METHODS, OS_FAMILIES

_VERSION_RE: Final = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+\-_]{0,63}$")


@dataclass(frozen=True, slots=True)
class Resource:
    """One client resource tuple (SM-45): the four package ``resource`` keys."""

    hermes_version: str
    os_family: str
    architecture: str
    install_method: str

    def as_dict(self) -> dict[str, str]:
        """The package ``resource`` object."""
        return {"architecture": self.architecture, "hermes_version": self.hermes_version,
                "install_method": self.install_method, "os_family": self.os_family}

    def as_row(self) -> tuple[str, str, str, str]:
        """The column order of ``counter_aggregates``."""
        return self.hermes_version, self.os_family, self.architecture, self.install_method

    def is_valid(self) -> bool:
        """Every field is in its closed vocabulary (the tampering check of SM-45 uses the schema too)."""
        return (_VERSION_RE.match(self.hermes_version) is not None and self.os_family in OS_FAMILIES
                and self.architecture in ARCHITECTURES and self.install_method in INSTALL_METHODS)


def normalise_version(value: object) -> str:
    """Host version string of 1-64 characters (version characters only, so never a path), else ``unknown``.

    A value the credential scrubber would change (a key passed as the version) is ``unknown`` too: the
    pattern alone accepts an ``AKIA...`` or ``ghp_...`` string."""
    text = value.strip() if isinstance(value, str) else ""
    return text if _VERSION_RE.match(text) and safe_scrub(text) == text else "unknown"


def normalise_os(value: object) -> str:
    """``linux`` → linux; ``darwin`` → macos; ``win32``/``windows``/``cygwin`` → windows; else unknown."""
    name = value.strip().lower() if isinstance(value, str) else ""
    if name.startswith("linux"):
        return "linux"
    if name == "darwin":
        return "macos"
    if name in ("win32", "windows", "cygwin"):
        return "windows"
    return "unknown"


def normalise_architecture(value: object) -> str:
    """Machine name → ``x86_64`` / ``arm64`` / ``x86`` / ``arm`` / ``unknown`` (SM-45)."""
    name = value.strip().lower() if isinstance(value, str) else ""
    if name in ("x86_64", "amd64", "x64"):
        return "x86_64"
    if name in ("aarch64", "arm64"):
        return "arm64"
    if name in ("i386", "i486", "i586", "i686", "x86"):
        return "x86"
    if name.startswith("armv"):
        return "arm"
    return "unknown"


def normalise_install_method(value: object) -> str:
    """Host install detection result → closed enum (``nix`` → ``nixos``), else ``unknown``."""
    name = value.strip().lower() if isinstance(value, str) else ""
    if name == "nix":
        return "nixos"
    return name if name in INSTALL_METHODS else "unknown"


def detect_install_method() -> str:
    """Best-effort detection of how this Python package was installed (closed values only)."""
    try:
        if Path("/.dockerenv").exists():
            return "docker"
        prefix = sys.prefix
        if prefix.startswith("/nix/store"):
            return "nixos"
        if "/Cellar/" in prefix or prefix.startswith(("/opt/homebrew", "/home/linuxbrew")):
            return "homebrew"
        if (Path(__file__).resolve().parents[2] / ".git").exists():
            return "git"
        if prefix.startswith("/usr") and sys.prefix == sys.base_prefix and "dist-packages" in __file__:
            return "apt"
        return "pip"
    except OSError:
        return "unknown"


def detect_resource(*, hermes_version: str | None = None, install_method: str | None = None) -> Resource:
    """The current client resource, every field normalised (SM-45)."""
    if hermes_version is None:
        from ..contract.versions import PACKAGE_VERSION as hermes_version
    return Resource(
        hermes_version=normalise_version(hermes_version),
        os_family=normalise_os(sys.platform),
        architecture=normalise_architecture(platform.machine()),
        install_method=normalise_install_method(install_method if install_method is not None
                                                else detect_install_method()),
    )
