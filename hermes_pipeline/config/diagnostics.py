"""Diagnostics (spec 03 §16, CFG-86): level, code, component, field, message.

Messages name files, keys and components only, never destination values, header values or
credentials. A :class:`Diagnostics` collector also logs each entry at its level.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any, Final, Literal

from .errors import ConfigError

Level = Literal["info", "warning", "error"]

logger: Final = logging.getLogger("hermes_pipeline.config")

_LOG_LEVELS: Final = {"info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding of loading, validation or activation."""

    level: Level
    code: str
    message: str
    component: str | None = None
    """The component kind, or ``None``."""
    field: str | None = None
    """Dotted key path (relative to the component's ``config`` when ``component`` is set)."""
    source: str | None = None
    """The file the finding is about, when known."""
    line: int | None = None
    count: int = 1
    key: str | None = None
    """The full dotted key path in the document (``components[0].config.atof.sinks[1].mode``), when known."""
    suggestion: str | None = None
    """The valid kind, key or value closest to what was written ("did you mean"), when there is one."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form (the report of CFG-87 / 04 FMT-82)."""
        return asdict(self)

    def __str__(self) -> str:
        where = self.source + (f":{self.line}" if self.line is not None else "") if self.source else ""
        subject = ".".join(p for p in (f"[{self.component}]" if self.component else "", self.field or "") if p)
        head = f"{self.level.upper()} {self.code}"
        return " ".join(p for p in (head, where, subject) if p) + f": {self.message}"


class Diagnostics:
    """An ordered collector of :class:`Diagnostic` entries.

    Args:
        log: log each entry on ``hermes_pipeline.config`` as it is added (the CLI turns this off
            and prints the entries itself).
    """

    def __init__(self, *, log: bool = True) -> None:
        self.items: list[Diagnostic] = []
        self.log = log
        self.failures: list[ConfigError] = []
        """Errors that fail the load, in order; each also has an ERROR entry in :attr:`items`."""

    def add(
        self,
        level: Level,
        code: str,
        message: str,
        *,
        component: str | None = None,
        field: str | None = None,
        source: str | None = None,
        line: int | None = None,
        log: bool = True,
        key: str | None = None,
        suggestion: str | None = None,
    ) -> Diagnostic:
        """Record (and unless told otherwise, log) one diagnostic."""
        diag = Diagnostic(level, code, message, component, field, source, line, key=key, suggestion=suggestion)
        self.items.append(diag)
        if self.log and log:
            logger.log(_LOG_LEVELS[level], "hermes_pipeline: %s", diag)
        return diag

    def info(self, code: str, message: str, **where: Any) -> Diagnostic:
        """Record an INFO diagnostic."""
        return self.add("info", code, message, **where)

    def warning(self, code: str, message: str, **where: Any) -> Diagnostic:
        """Record a WARNING diagnostic."""
        return self.add("warning", code, message, **where)

    def error(self, code: str, message: str, **where: Any) -> Diagnostic:
        """Record an ERROR diagnostic."""
        return self.add("error", code, message, **where)

    def fail(self, error: ConfigError, *, component: str | None = None, field: str | None = None) -> ConfigError:
        """Record ``error`` as a load failure: an ERROR diagnostic plus the typed error itself."""
        self.failures.append(error)
        self.add("error", error.code, error.message, component=component,
                 field=field if field is not None else error.key, source=error.path, line=error.line,
                 key=error.key, suggestion=error.suggestion)
        return error

    def raise_if_failed(self) -> None:
        """Raise the first recorded failure (mentioning how many more there are), if any."""
        if not self.failures:
            return
        first = self.failures[0]
        if len(self.failures) == 1:
            raise first
        more = len(self.failures) - 1
        raise ConfigError(f"{first.message} (and {more} more error{'s' if more > 1 else ''})",
                          path=first.path, line=first.line, key=first.key, code=first.code)

    @property
    def errors(self) -> list[Diagnostic]:
        """The ERROR entries, in order."""
        return [d for d in self.items if d.level == "error"]

    def codes(self) -> list[str]:
        """The codes of all entries, in order (handy in tests)."""
        return [d.code for d in self.items]


class ComponentDiagnostics:
    """The ``ctx.diagnostics`` reporter of one component (spec 03 §15.2).

    A code without a dot is prefixed with the component kind (``endpoint_skipped`` →
    ``observability.endpoint_skipped``).
    """

    def __init__(self, kind: str, sink: Diagnostics) -> None:
        self.kind = kind
        self._sink = sink

    def _code(self, code: str) -> str:
        return code if "." in code else f"{self.kind}.{code}"

    def info(self, code: str, message: str, *, field: str | None = None) -> None:
        """Report an INFO finding about this component."""
        self._sink.info(self._code(code), message, component=self.kind, field=field)

    def warning(self, code: str, message: str, *, field: str | None = None) -> None:
        """Report a WARNING finding about this component."""
        self._sink.warning(self._code(code), message, component=self.kind, field=field)

    def error(self, code: str, message: str, *, field: str | None = None) -> None:
        """Report an ERROR finding about this component (it does not by itself fail activation)."""
        self._sink.error(self._code(code), message, component=self.kind, field=field)
