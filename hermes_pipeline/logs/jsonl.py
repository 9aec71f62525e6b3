"""Everything the package logs, also as JSON Lines (spec 06 BOOK-47).

Each record of a ``hermes_pipeline`` logger becomes one JSON object per line with ``ts`` (RFC 3339
UTC, milliseconds), ``level``, ``logger``, ``event`` (a stable snake_case id: the record's own
``event`` when the code gave one with ``extra={"event": ...}``, else derived from the message's
format string, which does not change from one call to the next), ``msg``, and the correlation ids
when known: from the record's extras, else from the calling code's session, turn and tool call.
Other extras given by the code become top-level keys. Messages are the already credential-scrubbed
text of the record (:mod:`hermes_pipeline.engine.logscrub`); the package never logs raw content. Extras and
correlation ids (a path, a skill name, an id a host chose) are scrubbed here (an extra's value is judged by its
name and, inside a list or a mapping, with the context the text rules read, as the payload sanitizer judges it:
:mod:`hermes_pipeline.engine.walk_context`), and every string value of a
line is cut to ``max_value_chars`` (default 1,000,000) with ``...[truncated N chars]``, so one record can
never become an unbounded line.

The file rotates at 10 MiB keeping 5 older files. It is added beside whatever handlers the host
has (interactive CLIs keep their human-readable stderr); the records it sees are those the
``hermes_pipeline`` logger lets through (WARNING and above unless the host lowers the level).
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import re
import threading
import time
from pathlib import Path
from typing import Any, Final

from ..engine.scrub import safe_scrub, truncate
from ..engine.walk_context import context_entries, contextual_copy

logger: Final = logging.getLogger("hermes_pipeline.logs")

MAX_BYTES: Final = 10 * 1024 * 1024
BACKUPS: Final = 5
DEFAULT_MAX_VALUE_CHARS: Final = 1_000_000
"""The longest string value of one line (the profile's ``observability.max_value_chars``)."""
CORRELATION: Final = ("session_id", "turn_id", "trajectory_id", "api_request_id", "tool_call_id", "trace_id",
                      "span_id")
_STANDARD: Final = frozenset(vars(logging.LogRecord("x", 0, "", 0, "", (), None))) | {"message", "asctime", "event"}
_WORDS: Final = re.compile(r"[a-z0-9]+")
_PLACEHOLDER: Final = re.compile(r"%(\([^)]*\))?[-#0 +]*\d*(\.\d+)?[sdrifgexXoc%]|\{[^}]*\}")
_lock = threading.Lock()
_handlers: dict[str, tuple[logging.Handler, int]] = {}


def event_id(template: object, logger_name: str = "") -> str:
    """A stable snake_case event id from a message format string (placeholders and the prefix dropped)."""
    from ..engine.scrub import safe_scrub

    text = safe_scrub(str(template))  # a format string is code, but never let a credential into an id
    if text.startswith("hermes_pipeline:"):
        text = text[len("hermes_pipeline:"):]
    words = _WORDS.findall(_PLACEHOLDER.sub(" ", text.lower()))[:6]
    if not words:
        words = _WORDS.findall(logger_name.lower())[-2:] or ["log"]
    return "_".join(words)[:64]


TEMPLATE: Final = "_hermes_event_template"
_factory_installed: list[Any] = []


def _remember_templates() -> None:
    """Keep each package record's format string (before it is formatted and scrubbed) for its event id."""
    with _lock:
        if _factory_installed and logging.getLogRecordFactory() is _factory_installed[0]:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            name = args[0] if args else kwargs.get("name")
            if isinstance(name, str) and name.startswith("hermes_pipeline"):
                template = args[4] if len(args) > 4 else kwargs.get("msg")
                setattr(record, TEMPLATE, template if isinstance(template, str) else record.msg)
            return record

        logging.setLogRecordFactory(factory)
        _factory_installed[:] = [factory]


def _context_ids() -> dict[str, str]:
    from ..host.context import current_context

    ctx = current_context()
    out: dict[str, str] = {}
    if ctx.session is not None:
        out["session_id"] = ctx.session.session_id
    if ctx.turn is not None:
        out["turn_id"] = ctx.turn.turn_id
    if ctx.tool_call_id:
        out["tool_call_id"] = ctx.tool_call_id
    return out


class JsonLinesFormatter(logging.Formatter):
    """One JSON object per record (see the module docstring)."""

    def __init__(self, max_value_chars: int = DEFAULT_MAX_VALUE_CHARS) -> None:
        super().__init__()
        self.max_value_chars = max_value_chars

    def _text(self, value: str) -> str:
        return truncate(safe_scrub(value), self.max_value_chars)

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        event = getattr(record, "event", None)
        doc: dict[str, Any] = {"ts": ts, "level": record.levelname, "logger": record.name,
                               "event": event if isinstance(event, str) and event else
                               event_id(getattr(record, TEMPLATE, record.msg), record.name),
                               "msg": truncate(record.getMessage(), self.max_value_chars)}
        ids = _context_ids()
        for key in CORRELATION:
            value = getattr(record, key, None) or ids.get(key)
            if value:
                doc[key] = self._text(str(value))
        extras = {key: value for key, value in vars(record).items()
                  if key not in _STANDARD and key not in doc and not key.startswith("_")}
        # judged as the payload sanitizer judges a mapping: a credential name's value, a command line's password, a
        # name/value pair's value are hidden (a number so hidden becomes the marker string)
        for key, value in context_entries(extras):
            if isinstance(value, dict | list | tuple):
                value = contextual_copy(value)
            doc[key] = value if isinstance(value, int | float | bool) or value is None else self._text(str(value))
        if record.exc_info and record.exc_info[0] is not None:
            doc["error_type"] = record.exc_info[0].__name__  # the type only: a traceback may quote content
        return json.dumps(doc, ensure_ascii=False, default=str)


class _Handler(logging.handlers.RotatingFileHandler):
    """A rotating file handler creating its directory (0700) and file (0600) at the first record; a file that
    cannot be written (a read-only profile) is reported once by :mod:`logging` and the host's handlers go on."""

    def __init__(self, path: Path, max_value_chars: int = DEFAULT_MAX_VALUE_CHARS) -> None:
        super().__init__(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True)
        self.setFormatter(JsonLinesFormatter(max_value_chars))

    broken = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.broken:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        import sys

        if not self.broken:
            self.broken = True  # once: then the file is left alone, the host's handlers go on
            exc = sys.exc_info()[1]
            print(f"hermes_pipeline: the JSON Lines log {self.baseFilename} cannot be written "
                  f"({type(exc).__name__}: {exc}); it is switched off for this process", file=sys.stderr)

    def _open(self) -> Any:
        Path(self.baseFilename).parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # at the first record
        stream = super()._open()
        try:
            Path(self.baseFilename).chmod(0o600)
        except OSError:
            pass
        return stream


class LogHandle:
    """The JSON Lines handler of one log file on the ``hermes_pipeline`` logger; :meth:`close` removes it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._closed = False

    def close(self) -> None:
        """Detach (the last holder of a file closes it)."""
        if self._closed:
            return
        self._closed = True
        key = str(self.path)
        with _lock:
            handler, count = _handlers.get(key, (None, 0))
            if handler is None:
                return
            if count > 1:
                _handlers[key] = (handler, count - 1)
                return
            del _handlers[key]
        logging.getLogger("hermes_pipeline").removeHandler(handler)
        handler.close()


def attach_jsonl_log(path: Path, max_value_chars: int = DEFAULT_MAX_VALUE_CHARS) -> LogHandle:
    """Write the package's log records to ``path`` as JSON Lines (one handler per file, shared; the first
    attachment's ``max_value_chars`` bounds every string value of a line)."""
    _remember_templates()
    key = str(path)
    with _lock:
        if key in _handlers:
            handler, count = _handlers[key]
            _handlers[key] = (handler, count + 1)
            return LogHandle(path)
        handler = _Handler(path, max(int(max_value_chars), 1000))
        _handlers[key] = (handler, 1)
    logging.getLogger("hermes_pipeline").addHandler(handler)
    return LogHandle(path)


def attach_for_profile(profile: Any) -> LogHandle | None:
    """The first-party consumer entry: the profile's ``observability.logs.path`` (relative to its home)."""
    from ..config.observability_settings import ObservabilitySettings, read_observability

    settings = getattr(profile.settings, "observability", None)
    if not isinstance(settings, ObservabilitySettings):
        settings = read_observability(profile.home)
    raw = Path(settings.log_path).expanduser()
    path = raw if raw.is_absolute() else Path(profile.home) / raw
    handle = attach_jsonl_log(path, settings.max_value_chars or DEFAULT_MAX_VALUE_CHARS)
    from .clock import warn_if_unsynchronized

    threading.Thread(target=warn_if_unsynchronized, name="hermes-clock-check", daemon=True).start()  # BOOK-49
    return handle
