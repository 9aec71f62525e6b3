"""What activating the ``observability`` component will do, worked out without starting anything.

``config validate`` and activation must agree: a file validate accepts must activate, and an
enabled exporter section must end up with somewhere to send its data. Activation builds each
enabled section with its sink's own parser (``parse_atof_config``, ``parse_atif_config``,
``parse_otel_config``: the one statement of each sink's keys), skipping invalid destination
entries. :func:`check_activation` runs those same parsers, with the same options, on the config
the component will receive, during validation:

- an entry the parser would skip is skipped now, with the WARNING ``observability.endpoint_skipped``
  (so activation never meets it again);
- anything the parser would raise for is an ERROR now;
- an enabled ``atof`` or ``opentelemetry`` section left with no usable destination is an ERROR
  (``observability.no_destination``) instead of a section that silently exports nothing. ``atif``
  always has one: its local trajectory files.

:func:`describe_activation` lists what the component will wire, so that a pipeline that exports
nothing at all can say so.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from ..config.keypath import KeyPath, parse_path
from ..config.policy import ValidationContext
from ..export.errors import ExportConfigError

SECTIONS: Final = ("atof", "atif", "opentelemetry")
DESTINATION_LISTS: Final = {"atof": "sinks", "opentelemetry": "endpoints"}
"""Sections that need at least one usable destination entry, and the list that holds them."""

_DRY_RUN: Final[contextvars.ContextVar[bool]] = contextvars.ContextVar("hermes_pipeline_preflight", default=False)
_QUIET_PREFIXES: Final = ("hermes_pipeline: observability.endpoint_skipped",
                          "hermes_pipeline: opentelemetry is enabled but has no usable")
_SINK_LOGGERS: Final = ("hermes_pipeline.sinks.atof", "hermes_pipeline.sinks.atif", "hermes_pipeline.sinks.otel")


class _DryRunFilter(logging.Filter):
    """Drops the parsers' own "entry skipped" log lines during a dry run (validation reports them)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_DRY_RUN.get() and isinstance(record.msg, str) and record.msg.startswith(_QUIET_PREFIXES))


_FILTER: Final = _DryRunFilter()
for _name in _SINK_LOGGERS:
    logging.getLogger(_name).addFilter(_FILTER)


@contextmanager
def _dry_run() -> Iterator[None]:
    token = _DRY_RUN.set(True)
    try:
        yield
    finally:
        _DRY_RUN.reset(token)


def _parsers(config: Mapping[str, Any]) -> dict[str, Callable[[Mapping[str, Any]], Any]]:
    """Section → a call of that sink's parser with the options activation uses (``observability_sinks``).

    Each parser's module is imported when its section is checked, so a file without an
    ``opentelemetry`` section never loads the OTLP configuration modules."""
    full = config.get("enable_full_payloads") is True
    base = Path.cwd()  # only used to resolve relative paths; nothing is touched

    def atof(section: Mapping[str, Any]) -> Any:
        from ..sinks.atof.config import parse_atof_config

        return parse_atof_config(section, base_dir=base, on_invalid="skip", ignore_unknown_keys=True)

    def atif(section: Mapping[str, Any]) -> Any:
        from ..sinks.atif.config import parse_atif_config

        return parse_atif_config(section, base_dir=base, enable_full_payloads=full, on_invalid="skip",
                                 ignore_unknown_keys=True)

    def opentelemetry(section: Mapping[str, Any]) -> Any:
        from ..sinks.otel.config import parse_otel_config

        return parse_otel_config(section, on_invalid="skip", ignore_unknown_keys=True)

    return {"atof": atof, "atif": atif, "opentelemetry": opentelemetry}


def _config_path(text: str) -> KeyPath | None:
    try:
        return parse_path(text)
    except ValueError:
        return None  # e.g. an environment variable name rather than a key path


def _entry_of(path: KeyPath) -> KeyPath:
    """The destination entry a skipped key belongs to (``atof.sinks[0].mode`` → ``atof.sinks[0]``)."""
    for end, segment in enumerate(path):
        if isinstance(segment, int):
            return path[:end + 1]
    return path


def check_activation(config: Mapping[str, Any], vctx: ValidationContext) -> None:
    """Report, through ``vctx``, what activating ``config`` (already validated and cleaned) would
    skip or refuse, and every enabled section that would have no destination (see the module text)."""
    from ..export.worker import split_worker

    parsers = _parsers(config)
    for name in SECTIONS:
        section = config.get(name)
        if not isinstance(section, Mapping) or section.get("enabled") is not True:
            continue
        try:
            with _dry_run():
                _, rest = split_worker(section, name)
                parsed = parsers[name](rest)
        except ExportConfigError as exc:
            refused = _config_path(exc.path) or (name,)
            if refused == (name, DESTINATION_LISTS.get(name)):  # every entry was skipped during validation
                _no_destination(vctx, name)
            else:
                vctx.error(refused, f"activation would refuse this: {exc.message}", code="observability.invalid")
            continue
        for where, reason in getattr(parsed, "skipped", ()):
            skipped = _config_path(where)
            if skipped is None or skipped[:1] != (name,):
                vctx.warning((name,), f"{where}: {reason}; it is not used", code="observability.endpoint_skipped")
            else:
                vctx.skip_entry(_entry_of(skipped), f"{where}: {reason}", at=skipped)
        key = DESTINATION_LISTS.get(name)
        if key is None or not getattr(parsed, "enabled", True):
            continue
        if not getattr(parsed, "sinks" if name == "atof" else "endpoints", ()):
            _no_destination(vctx, name)


def _no_destination(vctx: ValidationContext, name: str) -> None:
    key = DESTINATION_LISTS[name]
    vctx.error((name, key), f"the enabled {name} section has no usable destination (every entry in {name}.{key} is "
                            "missing or was skipped, see above): fix an entry or set enabled = false",
               code="observability.no_destination")


def describe_activation(config: Mapping[str, Any]) -> list[str]:
    """What activating ``config`` wires: one short text per enabled section; empty when none is."""
    from .observability_sinks import enabled_sections

    out: list[str] = []
    for name in enabled_sections(config):
        section = config[name]
        if name not in SECTIONS:
            out.append(f"{name}: the sink registered as {name!r} in the hermes_pipeline.sinks entry-point group")
            continue
        key = DESTINATION_LISTS.get(name)
        entries = section.get(key) if key else None
        if key is None:
            out.append(f"{name}: local trajectory files")
        else:
            count = len(entries) if isinstance(entries, list) else 0
            if count == 0 and name == "opentelemetry":  # validation passed, so the environment supplied it
                out.append(f"{name}: the endpoint of OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT")
            else:
                out.append(f"{name}: {count} {key[:-1] if count == 1 else key}")
    return out


__all__ = ["check_activation", "describe_activation"]
