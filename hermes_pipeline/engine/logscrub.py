"""Credential scrubbing of every log record the package emits (spec 04 FMT-33a: log text is scrubbed like payloads).

Warnings quote what went wrong, and what went wrong often carries a payload: a plugin's exception
message that embeds its arguments, a destination's error that echoes a request. Every record of a
logger named ``hermes_pipeline`` or ``hermes_pipeline.<anything>`` (plugin and component loggers
included) is rewritten once, when it is created: its message is formatted, passed through the
engine's credential scrubber and stored without arguments, and an attached traceback is formatted
and scrubbed the same way. Records of other loggers are not touched.

Why a record factory and not a :class:`logging.Filter` on the ``hermes_pipeline`` logger: a logger's
filters see only the records logged on that very logger, never those its descendants propagate, and
the package logs on a dozen descendants (plus one per plugin, created at run time). The factory
installed here wraps whatever factory was current (so other customisations keep working) and costs
one string comparison for a foreign record. :class:`CredentialFilter` is the same rewrite as a
filter, for handlers or loggers an application wants to guard itself.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable
from typing import Any, Final

from .scrub import safe_scrub

__all__ = ["CredentialFilter", "PACKAGE_LOGGER", "install_log_scrubbing", "scrub_record"]

PACKAGE_LOGGER: Final = "hermes_pipeline"

_lock: Final = threading.Lock()
_installed: list[Callable[..., logging.LogRecord]] = []


def scrub_record(record: logging.LogRecord) -> logging.LogRecord:
    """Rewrite ``record`` in place: scrubbed message without arguments, scrubbed traceback text; returns it.

    Never raises: a message that cannot be formatted is rendered from its parts, then scrubbed.
    """
    try:
        text = record.getMessage()
    except Exception:
        try:
            text = f"{record.msg!s} {record.args!r}"
        except Exception:
            text = "<unprintable log message>"
    record.msg = safe_scrub(text)
    record.args = ()
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        try:
            record.exc_text = safe_scrub("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
        except Exception:
            record.exc_text = "<unprintable traceback>"
    if record.stack_info:
        record.stack_info = safe_scrub(record.stack_info)
    return record


def _ours(name: str) -> bool:
    return name == PACKAGE_LOGGER or name.startswith("hermes_pipeline.")


class CredentialFilter(logging.Filter):
    """A filter that scrubs every record it sees (see :func:`scrub_record`) and lets it through."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Scrub ``record``; always ``True``."""
        scrub_record(record)
        return True


def install_log_scrubbing() -> None:
    """Make every record of the package's loggers pass through the scrubber (idempotent; see the module docstring)."""
    with _lock:
        current = logging.getLogRecordFactory()
        if _installed and current is _installed[0]:
            return
        previous = current

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            if _ours(record.name):
                scrub_record(record)
            return record

        logging.setLogRecordFactory(factory)
        _installed[:] = [factory]
