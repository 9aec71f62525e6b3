"""The worker-process protocol: the ``worker`` key, and the frames parent and child exchange.

A section's ``worker`` key (hermes_pipeline extension) is ``"thread"`` (the default), ``"process"``
(a child process of its own) or ``"process:NAME"`` (one child shared by every section naming
``NAME``). Parent and child speak length-prefixed pickled frames over the child's stdin/stdout:
first the list of sections to build (parent → child), then ``ready`` or ``error`` (child → parent),
then ``(kind, seq, *args)`` requests (``events``, ``flush``, ``stats``, ``close``) each answered by
``(seq, answer)``, except event batches (``seq`` 0, no answer). Frames only ever come from our own
parent or child process.
"""

from __future__ import annotations

import pickle
import re
import struct
from collections.abc import Mapping
from typing import IO, Any, Final

from ..errors import ExportConfigError
from ..events import ScopeEvent

__all__ = ["CLOSE", "EVENTS", "FLUSH", "STATS", "WORKERS", "WorkerDied", "check_worker", "event_fields",
           "event_from_fields", "receive", "send", "shared_worker_name", "split_worker"]

_LENGTH: Final = struct.Struct("<I")
WORKERS: Final = ("thread", "process")
"""Kinds of a section's ``worker`` key; ``process:NAME`` names a worker process shared by sections."""
_SHARED: Final = re.compile(r"process:([A-Za-z0-9_.-]{1,64})")
EVENTS, FLUSH, STATS, CLOSE = "events", "flush", "stats", "close"


class WorkerDied(Exception):
    """The worker process is gone (or did not answer in time)."""


def check_worker(value: Any) -> str | None:
    """``None`` for a valid ``worker`` value, else what was expected (a config check)."""
    if isinstance(value, str) and (value in WORKERS or _SHARED.fullmatch(value)):
        return None
    return "expected 'thread', 'process' or 'process:NAME' (NAME: letters, digits, '_', '-', '.')"


def split_worker(config: Mapping[str, Any], section: str) -> tuple[str, dict[str, Any]]:
    """``(worker, the section's table without the key)``; :class:`ExportConfigError` for a bad value.

    ``worker`` is ``"thread"``, ``"process"`` or ``"process:NAME"`` as written.
    """
    if not isinstance(config, Mapping):
        raise ExportConfigError(section, "expected a table")
    rest = dict(config)
    worker = rest.pop("worker", "thread")
    problem = check_worker(worker)
    if problem is not None:
        raise ExportConfigError(f"{section}.worker", problem)
    return worker, rest


def shared_worker_name(worker: str) -> str | None:
    """``NAME`` of ``"process:NAME"``, else ``None``."""
    match = _SHARED.fullmatch(worker)
    return match.group(1) if match else None


def send(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def receive(stream: IO[bytes]) -> Any:
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError("the other side closed the pipe")
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other side closed the pipe")
    return pickle.loads(data)  # noqa: S301 - frames come from our own parent or child process only


def event_fields(event: ScopeEvent) -> tuple[Any, ...]:
    """The event as the tuple that crosses the pipe; :func:`event_from_fields` makes it again (``start`` is
    restored by the child's own pairing; ``facts`` cross as they are)."""
    return (event.kind, event.phase, event.uuid, event.parent_uuid, event.timestamp_us, event.name, event.category,
            event.attributes, event.profile, event.data, event.metadata, event.session_uuid, event.root_uuid,
            event.facts)


def event_from_fields(fields: tuple[Any, ...]) -> ScopeEvent:
    """The event of :func:`event_fields`' tuple."""
    kind, phase, uuid, parent, timestamp, name, category, attributes, profile, data, metadata, session, root, \
        facts = fields
    return ScopeEvent(kind, phase, uuid, parent, timestamp, name, category, attributes, profile, data, metadata,
                      session, root, facts=facts)
