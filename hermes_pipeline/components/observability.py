"""The built-in ``observability`` component (spec 03 §7; spec 04 is authoritative for its keys).

This module validates the Relay-compatible key set (``version``, ``enable_full_payloads``,
``content_summary``, ``atof``, ``atif``, ``opentelemetry``, ``policy``) under the pipeline's
policy. An invalid value inside one destination entry skips only that entry with
``observability.endpoint_skipped`` (CFG-32a); structural problems follow the policy.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from .._deprecated import renamed_attributes
from ..config.checks import check_keys
from ..config.keypath import KeyPath, format_path
from ..config.policy import ValidationContext
from ..engine.deadline import SHUTDOWN_DEADLINE as DEFAULT_SHUTDOWN_DEADLINE
from ..engine.plugins import ComponentContext
from ..export.errors import ExportConfigError
from ..export.paths import default_output_directory
from . import observability_keys as K
from . import observability_preflight as preflight
from ..sinks.base import SectionValidation
from ..sinks.registry import load_sink, sink_installed, unknown_sink_message
from .observability_sinks import AttachedSinks, attach_sinks, enabled_sections, sink_sections

SHUTDOWN_DEADLINE: Final = DEFAULT_SHUTDOWN_DEADLINE

class ObservabilityComponent:
    """Exporter component: ATOF sinks, ATIF trajectories and OTLP endpoints (spec 04).

    Validation and the activation-time checks (``header_env`` variables set and non-blank,
    process-global OTLP header variables ignored) live here; :mod:`.observability_sinks` attaches
    the enabled sinks to one shared scope plugin at activation.
    """

    kind: ClassVar[str] = "observability"
    requires_native: ClassVar[bool] = False
    check_activation: ClassVar = staticmethod(preflight.check_activation)
    """What activation would skip or refuse, checked during validation (:mod:`.observability_preflight`)."""
    describe_activation: ClassVar = staticmethod(preflight.describe_activation)

    def __init__(self, ctx: ComponentContext) -> None:
        self.ctx = ctx
        self.config: Mapping[str, Any] = ctx.config
        self.destinations: list[str] = []
        """Dotted paths of the destination entries that survived activation checks."""
        self.skipped: list[str] = []
        """Dotted paths of destination entries skipped at activation (CFG-32a)."""
        self.working_directory: str | None = None
        """The process working directory at activation, against which relative paths resolve (CFG-83)."""
        self.exporters: AttachedSinks | None = None
        """The scope plugin and sinks attached at activation (``None`` when no section is enabled)."""

    @classmethod
    def validate_config(cls, config: dict[str, Any], vctx: ValidationContext) -> None:
        """Check ``config`` against spec 03 §7 / spec 04; findings go through ``vctx``."""
        sections = sink_sections(config)
        check_keys(vctx, (), {k: v for k, v in config.items() if k not in sections}, K.TOP)
        version = config.get("version")
        if version is None:
            vctx.error(("version",), "'version' is required and must be 4", code="observability.version")
        elif isinstance(version, bool) or version != 4:
            vctx.error(("version",), "unsupported observability config version; only 4 is supported",
                       code="observability.version")
        if isinstance(config.get("policy"), dict):
            check_keys(vctx, ("policy",), config["policy"], K.POLICY)
        for name in sections:
            if not sink_installed(name):
                vctx.error((name,), unknown_sink_message(name), code="observability.unknown_sink")
            else:
                _sink_section(name, config[name], vctx, {k: v for k, v in config.items() if k not in sections})

    def activate(self) -> None:
        """Run the activation-time checks of 04 FMT-41 / FMT-72, then attach the enabled sinks."""
        self.working_directory = os.getcwd()
        config = self.config
        otel = config.get("opentelemetry")
        if isinstance(otel, Mapping) and otel.get("enabled") is True:
            # the header variables apply only to the endpoint taken from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT,
            # used when the file lists no trace endpoint; otherwise they are ignored with a warning
            from ..sinks.otel.config import GLOBAL_HEADER_VARS
            from ..sinks.otel.env import read_otlp_env

            env = read_otlp_env()
            from_env = env.endpoint is not None and not (otel.get("endpoints") or otel.get("traces"))
            ignored = [name for name in GLOBAL_HEADER_VARS if os.environ.get(name)
                       and not (from_env and name == env.header_variable)]
            if ignored:
                self._warn("otlp_headers_ignored", f"{', '.join(ignored)} set in the environment but never applied to "
                           "the endpoints of the pipeline file (only to the endpoint of OTEL_EXPORTER_OTLP_ENDPOINT "
                           "when the file lists none); use per-endpoint 'headers' or 'header_env' instead", None)
        for path, entry in _destinations(config):
            problem = _env_problem(entry)
            if problem:
                self.skipped.append(path)
                self._warn("endpoint_skipped", f"destination entry skipped: {problem}", path)
            else:
                self.destinations.append(path)
        self.exporters = attach_sinks(_without(config, self.skipped), base_dir=Path(self.working_directory),
                                      register=self.ctx.register_plugin, default_dir=self.output_directory())
        if config.get("redact_credentials") is False:  # the exporters' credential scrubber is off: say so every start
            self._warn("credentials_unredacted", "redact_credentials = false: credentials in prompts, tool arguments "
                       "and results, answers and approvals are exported unredacted to every destination (local "
                       "files, streams, OTLP); remove the key to scrub them again", "redact_credentials")

    def output_directory(self) -> Path:
        """Where local files go when a section names no ``output_directory``: the directory the
        activation hands every component (the activating profile's ``$HERMES_HOME/telemetry``),
        else the default profile's (FMT-35: never the working directory)."""
        given = getattr(self.ctx, "output_directory", None)
        return Path(given) if given is not None else default_output_directory()

    @classmethod
    def output_locations(cls, config: Mapping[str, Any], *, base_dir: Path | None = None,
                         default_dir: Path | None = None) -> list[tuple[KeyPath, str, bool]]:
        """Where the enabled file-writing sections write: ``(key path inside config, resolved value,
        is_default)``, for ``config explain``. Each sink package states its own defaults."""
        out: list[tuple[KeyPath, str, bool]] = []
        for name in enabled_sections(config):
            try:
                locate = getattr(load_sink(name), "output_locations", None)
            except ExportConfigError:
                continue  # validation reports an unknown sink
            if callable(locate):
                out += [((name, *path), value, is_default) for path, value, is_default
                        in locate(config[name], base_dir=base_dir, default_dir=default_dir)]
        return out

    @property
    def scope_plugin(self) -> Any:
        """The scope plugin the enabled sinks listen to (``None`` when no section is enabled): a profile's
        own consumers may listen to it too, so that a hook becomes scope events once for all of them."""
        return self.exporters.scope_plugin if self.exporters is not None else None

    __getattr__ = renamed_attributes("ObservabilityComponent", {"projection": "scope_plugin"})

    def flush(self, timeout: float) -> bool:
        """Write what the sinks have queued, within ``timeout`` seconds."""
        return self.exporters.flush(timeout) if self.exporters is not None else True

    def stats(self) -> dict[str, Any]:
        """Queue, drop and error counters of the scope plugin and of every sink."""
        return self.exporters.stats() if self.exporters is not None else {}

    def _warn(self, code: str, message: str, field: str | None) -> None:
        if self.ctx.diagnostics is not None:
            self.ctx.diagnostics.warning(code, message, field=field)
        else:
            self.ctx.logger.warning("hermes_pipeline: %s: %s", field or self.kind, message)

    def shutdown(self, deadline: float = SHUTDOWN_DEADLINE) -> None:
        """Close open scopes (partial trajectories are written) and stop every sink, within ``deadline``
        seconds in all."""
        if self.exporters is not None:
            self.exporters.shutdown(deadline)


# --------------------------------------------------------------------------- activation helpers


def _without(config: Mapping[str, Any], skipped: list[str]) -> dict[str, Any]:
    """A copy of ``config`` without the destination entries skipped at activation (CFG-32a)."""
    out = copy.deepcopy(dict(config))
    targets: list[tuple[list[Any], int]] = []
    for path in skipped:  # e.g. "opentelemetry.logs.endpoints[1]"
        parts = path.replace("]", "").replace("[", ".").split(".")
        node: Any = out
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node[part]
        targets.append((node, int(parts[-1])))
    for node, index in sorted(targets, key=lambda t: t[1], reverse=True):  # later indexes first
        del node[index]
    return out


def _destinations(config: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    out: list[tuple[str, Mapping[str, Any]]] = []
    sections = (("atof", ("sinks",)), ("atif", ("storage",)),
                ("opentelemetry", ("endpoints",)), ("opentelemetry", ("logs", "endpoints")),
                ("opentelemetry", ("metrics", "endpoints")))
    for section, path in sections:
        node: Any = config.get(section)
        if not isinstance(node, Mapping) or node.get("enabled") is not True:
            continue
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        for index, entry in enumerate(node if isinstance(node, list) else []):
            if isinstance(entry, Mapping):
                out.append((format_path((section, *path, index)), entry))
    return out


def _env_problem(entry: Mapping[str, Any]) -> str | None:
    names = list((entry.get("header_env") or {}).values()) + list((entry.get("basic_auth_env") or {}).values())
    missing = [name for name in names if not (os.environ.get(name) or "").strip()]
    if missing:
        return f"environment variable(s) {', '.join(missing)} unset or blank"
    return None


# --------------------------------------------------------------------------- validation


def _sink_section(name: str, section: dict[str, Any], vctx: ValidationContext, shared: Mapping[str, Any]) -> None:
    """A sink's section: the sink's own config statement (``validate_config``), else only ``enabled``."""
    try:
        builder = load_sink(name)
    except ExportConfigError as exc:
        vctx.error((name,), exc.message, code="observability.sink_unavailable")
        return
    statement = getattr(builder, "validate_config", None)
    if not callable(statement):
        if "enabled" in section and not isinstance(section["enabled"], bool):
            vctx.unsupported_value((name, "enabled"), "expected true or false")
    else:
        try:
            statement(section, SectionValidation(vctx, name, shared=shared))
        except Exception as exc:  # a broken statement is the sink's bug: say so, never a traceback
            vctx.error((name,), f"the sink's validate_config() raised {type(exc).__name__}: {exc}",
                       code="observability.sink_invalid")
