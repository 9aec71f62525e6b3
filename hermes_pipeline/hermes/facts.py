"""Facts about the Hermes Agent installation and profile the bridge runs in.

Read without importing Hermes where possible (the version from package metadata, the profile's
``config.yaml`` with ruamel.yaml), so that ``hermes-pipeline hermes doctor`` works outside Hermes;
the tool registry is read lazily from inside the Hermes process.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Final

from ..config.errors import ConfigError
from ..config.files import read_config_text
from ..config.yaml_text import load_yaml_text

__all__ = [
    "BRIDGE_PLUGIN",
    "RELAY_PLUGIN",
    "PIPELINE_VARIABLE",
    "RegistryToolsets",
    "HermesProfile",
    "hermes_home",
    "hermes_version",
    "in_oneshot_run",
    "read_profile",
]

BRIDGE_PLUGIN: Final = "hermes_pipeline"
"""The bridge's name in Hermes' ``plugins.enabled`` (its ``hermes_agent.plugins`` entry point)."""
RELAY_PLUGIN: Final = "observability/nemo_relay"
"""Hermes' bundled NeMo Relay plugin, by its registry key (Hermes also accepts the bare name)."""
_RELAY_NAMES: Final = frozenset({RELAY_PLUGIN, "nemo_relay"})
_OTHER_OBSERVABILITY: Final = ("observability/langfuse", "langfuse")
PIPELINE_VARIABLE: Final = "HERMES_NEMO_RELAY_PLUGINS_TOML"
"""The variable both this engine and the NeMo Relay plugin read their pipeline file from."""
DEFAULT_APPROVAL_TIMEOUT: Final = 60.0
"""Hermes' default ``approvals.timeout`` in seconds (``hermes_cli/config.py``)."""
ONESHOT_MODULE: Final = "hermes_cli.oneshot"
"""Hermes' one-shot mode (``hermes -z``): its ``run_oneshot`` runs the one conversation of the process."""
_STACK_LIMIT: Final = 256


def in_oneshot_run() -> bool:
    """Whether the caller runs inside Hermes' one-shot mode (``hermes -z``), on the thread of its conversation.

    Hermes ends that mode with ``os._exit`` as soon as its conversation returns (``hermes_cli/main.py``
    ``_exit_after_oneshot``): ``atexit`` handlers never run. Recognised by a frame of
    :data:`ONESHOT_MODULE` on the caller's stack (cheap: nothing is walked unless that module is loaded).
    """
    import sys

    if ONESHOT_MODULE not in sys.modules:
        return False
    frame: FrameType | None = sys._getframe(1)
    for _ in range(_STACK_LIMIT):
        if frame is None:
            return False
        if frame.f_globals.get("__name__") == ONESHOT_MODULE:
            return True
        frame = frame.f_back
    return False


def hermes_version() -> str | None:
    """The installed ``hermes-agent`` version, or ``None`` when it is not installed.

    Inside a Hermes process its own ``hermes_cli.__version__`` is read (already imported, no
    package-metadata scan); elsewhere the package metadata.
    """
    import sys

    running = getattr(sys.modules.get("hermes_cli"), "__version__", None)
    if isinstance(running, str) and running:
        return running
    try:
        return importlib.metadata.version("hermes-agent")
    except importlib.metadata.PackageNotFoundError:
        return None


def hermes_home(home: str | Path | None = None) -> Path:
    """The Hermes profile directory: ``home``, else ``$HERMES_HOME``, else ``~/.hermes`` (as Hermes does)."""
    if home is not None:
        return Path(home).expanduser()
    env = os.environ.get("HERMES_HOME", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".hermes"


@dataclass(frozen=True)
class HermesProfile:
    """What a Hermes profile's ``config.yaml`` says that matters to the bridge."""

    home: Path
    config_path: Path
    exists: bool
    enabled: tuple[str, ...]
    """``plugins.enabled`` (empty when absent: Hermes then loads no opt-in plugin)."""
    disabled: tuple[str, ...]
    approval_timeout: float
    shared_metrics: bool = False
    """``telemetry.shared_metrics.enabled`` is true (a first-party consumer would listen)."""
    trajectories: bool = False
    """``observability.trajectories.enabled`` is true (the trajectory store would record every run)."""
    audit: bool = False
    """``observability.audit.enabled`` is true (the observability store would record runs and changes)."""
    quick_otel: bool = False
    """``observability.otel_enabled`` is true (the OTLP shorthand would export every run)."""
    error: str | None = None
    """Why ``config.yaml`` could not be read, if it could not."""

    def is_enabled(self, *names: str) -> bool:
        """Whether any of ``names`` is enabled and none is disabled (Hermes' rule: disabled wins)."""
        return any(n in self.enabled for n in names) and not any(n in self.disabled for n in names)

    def profile_consumers(self) -> list[str]:
        """The profile's own consumers that would record without a pipeline file, by the key that turns each on.

        The bridge starts when the pipeline file is selected or one of these is on, and registers nothing
        at all otherwise (Hermes then runs exactly as without it).
        """
        keys = (("telemetry.shared_metrics.enabled", self.shared_metrics),
                ("observability.trajectories.enabled", self.trajectories),
                ("observability.audit.enabled", self.audit), ("observability.otel_enabled", self.quick_otel))
        return [key for key, on in keys if on]

    @property
    def bridge_enabled(self) -> bool:
        """The bridge is listed in ``plugins.enabled``."""
        return self.is_enabled(BRIDGE_PLUGIN)

    @property
    def relay_enabled(self) -> bool:
        """Hermes' bundled NeMo Relay plugin is enabled."""
        return self.is_enabled(*_RELAY_NAMES)

    def other_observability(self) -> list[str]:
        """Other observability plugins enabled beside the bridge (NeMo Relay, Langfuse)."""
        found = [RELAY_PLUGIN] if self.relay_enabled else []
        if self.is_enabled(*_OTHER_OBSERVABILITY):
            found.append(_OTHER_OBSERVABILITY[0])
        return found


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def read_profile(home: str | Path | None = None) -> HermesProfile:
    """Read the bridge-relevant parts of ``<home>/config.yaml``; never raises, never blocks.

    The file is read with the package's safe reader (:func:`~hermes_pipeline.config.files.read_config_text`): a
    FIFO (a hung NFS home), a device, a directory or a file over 1 MiB is refused at once, and a document nested
    deeper than 200 collections before libyaml composes it; ``error`` then says why, naming the file.
    """
    root = hermes_home(home)
    path = root / "config.yaml"
    data: Any = {}
    error = None
    try:
        data = load_yaml_text(read_config_text(path, code="config.invalid_file"), path) or {}
    except ConfigError as exc:
        if exc.code != "pipeline.file_missing":
            error = str(exc)[:300]
        data = {}
    except Exception as exc:  # unreadable or invalid YAML
        error = f"{type(exc).__name__}: {str(exc)[:200]}"
        data = {}
    if not isinstance(data, dict):
        error, data = error or "config.yaml is not a mapping", {}
    plugins = data.get("plugins") if isinstance(data.get("plugins"), dict) else {}
    approvals = data.get("approvals") if isinstance(data.get("approvals"), dict) else {}
    try:
        timeout = float(approvals.get("timeout", DEFAULT_APPROVAL_TIMEOUT))
    except (TypeError, ValueError):
        timeout = DEFAULT_APPROVAL_TIMEOUT
    telemetry = data.get("telemetry")
    metrics = telemetry.get("shared_metrics") if isinstance(telemetry, dict) else None
    return HermesProfile(home=root, config_path=path, exists=path.is_file(), enabled=_strings(plugins.get("enabled")),
                         disabled=_strings(plugins.get("disabled")), approval_timeout=timeout,
                         shared_metrics=isinstance(metrics, dict) and metrics.get("enabled") is True,
                         trajectories=_enabled(data, "observability", "trajectories"),
                         audit=_enabled(data, "observability", "audit"), quick_otel=_flag(data, "otel_enabled"),
                         error=error)


def _flag(data: dict[str, Any], key: str) -> bool:
    """Whether ``observability.<key>`` is ``true`` (nested, or written as one dotted key)."""
    section = data.get("observability")
    if isinstance(section, dict) and section.get(key) is True:
        return True
    return data.get(f"observability.{key}") is True


def _enabled(data: dict[str, Any], *path: str) -> bool:
    """Whether ``<path>.enabled`` is ``true`` in the profile's ``config.yaml``."""
    node: Any = data
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict) and node.get("enabled") is True:
        return True
    return data.get(".".join((*path, "enabled"))) is True  # the same key written flat


class RegistryToolsets(Mapping[str, str]):
    """Tool name → toolset, read from Hermes' tool registry (``tools.registry``) at lookup time.

    Tools register while Hermes starts, after plugins are loaded, so the registry is consulted on
    every lookup rather than copied once. Outside a Hermes process it is empty.
    """

    def _registry(self) -> Any:
        try:
            from tools.registry import registry  # type: ignore[import-not-found,import-untyped,unused-ignore]
        except Exception:
            return None
        return registry

    def __getitem__(self, tool_name: str) -> str:
        registry = self._registry()
        toolset = registry.get_toolset_for_tool(tool_name) if registry is not None else None
        if not isinstance(toolset, str) or not toolset:
            raise KeyError(tool_name)
        return toolset

    def get(self, tool_name: str, default: Any = None) -> Any:  # cheaper than KeyError on a miss
        try:
            return self[tool_name]
        except Exception:
            return default

    def definition(self, tool_name: str) -> dict[str, Any] | None:
        """The tool's whole schema as Hermes builds it for the model (``{"type": "function", "function": ...}``):
        the registry's definition with its runtime overrides, then Hermes' own schema clean-up
        (``tools.schema_sanitizer.sanitize_tool_schemas``, as ``model_tools.get_tool_definitions`` applies it);
        ``None`` when there is none. A caller checks it against what Hermes sent (a schema rebuilt later, such
        as ``execute_code``'s, differs)."""
        registry = self._registry()
        try:
            from tools.schema_sanitizer import sanitize_tool_schemas  # type: ignore[import-not-found,import-untyped,unused-ignore]

            found = registry.get_definitions({tool_name}, quiet=True) if registry is not None else []
            if isinstance(found, list) and found:
                found = sanitize_tool_schemas(found[:1])
        except Exception:
            return None
        return found[0] if isinstance(found, list) and found and isinstance(found[0], dict) else None

    def generation(self) -> int | None:
        """The registry's change counter (bumped at every registration), ``None`` when it has none."""
        value = getattr(self._registry(), "_generation", None)
        return value if type(value) is int else None

    def _snapshot(self) -> dict[str, str]:
        registry = self._registry()
        try:
            table = registry.get_tool_to_toolset_map() if registry is not None else {}
        except Exception:
            table = {}
        return dict(table) if isinstance(table, dict) else {}

    def __iter__(self) -> Iterator[str]:
        return iter(self._snapshot())

    def __len__(self) -> int:
        return len(self._snapshot())
