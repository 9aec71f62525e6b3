"""The worker process's own side: ``python -m hermes_pipeline.export.worker.child``.

Started by :class:`~hermes_pipeline.export.worker.parent.WorkerProcess` (not by ``multiprocessing``,
so the host's ``__main__`` is never re-imported). It builds each section's sink from the same entry (the
sink class), table and context the parent was given, through the same
:func:`~hermes_pipeline.export.sink.build_sink` as the ``observability`` component, feeds every event to all of them, answers ``flush``, ``stats`` and ``close``
requests on its stdout, and exits once its last section is closed, or shuts every sink down when its
stdin closes. Anything printed by a sink goes to stderr: stdout carries the protocol only.
"""

from __future__ import annotations

import os
import sys
import time
from typing import IO, Any, Final

from ..errors import ExportConfigError
from ..events import END, START, ScopeEvent
from ..sink import SinkContext, build_sink
from .protocol import CLOSE, EVENTS, FLUSH, STATS, event_from_fields
from .protocol import receive as _receive
from .protocol import send as _send

__all__ = ["main"]

DEFAULT_QUEUE_SIZE: Final = 10_000
"""The forwarding queue's share for a sink that states no ``max_queue_size`` of its own."""


def _shutdown_all(sinks: dict[str, Any], deadline: float) -> None:
    for sink in sinks.values():
        try:
            sink.shutdown(deadline)
        except Exception:  # one sink never prevents the others' shutdown
            pass


def _counters(sink: Any) -> dict[str, int]:
    """The sink's FMT-81 counters when it keeps any (the sink shape only asks for ``stats``)."""
    counters = getattr(sink, "counters", None)
    return dict(counters()) if callable(counters) else {}


def _build(specs: list[tuple[str, str, dict[str, Any], SinkContext]]) -> dict[str, Any] | tuple[str, str]:
    """Every section's sink, or ``(key path, reason)`` of the first that cannot be built."""
    from ...engine.plugins import import_object

    sinks: dict[str, Any] = {}
    for entry, section, config, ctx in specs:
        try:
            sinks[section] = build_sink(import_object(entry), config, ctx)
        except Exception as exc:
            _shutdown_all(sinks, 1.0)
            if isinstance(exc, ExportConfigError):
                return exc.path, exc.message
            return section, f"the worker process could not build the sink ({type(exc).__name__}: {exc})"
    return sinks


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """The child: build the sinks, then answer frames until the last section is closed or input ends."""
    built = _build(_receive(stdin))
    if isinstance(built, tuple):
        _send(stdout, ("error", *built))
        return 1
    sinks = built
    started = time.process_time()  # CPU spent serving is measured from here (start-up excluded)

    def report(section: str) -> tuple[dict[str, Any], dict[str, int]]:
        return dict(sinks[section].stats()), _counters(sinks[section])

    _send(stdout, ("ready", {section: (getattr(sink, "enabled", True), sink.destinations(),
                                       getattr(sink, "max_queue_size", DEFAULT_QUEUE_SIZE), _counters(sink))
                             for section, sink in sinks.items()}))
    make = event_from_fields
    starts: dict[int, ScopeEvent] = {}
    received = 0
    try:
        while True:
            try:
                kind, seq, *args = _receive(stdin)
            except EOFError:  # the parent went away: export what we have
                _shutdown_all(sinks, 5.0)
                return 0
            if kind == EVENTS:
                feed = tuple(sinks.values())
                for fields in args[0]:
                    event = make(fields)
                    # ends cross the pipe without their start: give each back its closed scope (``event.start``)
                    if event.phase == START:
                        starts[event.uuid] = event
                    elif event.phase == END:
                        event.start = starts.pop(event.uuid, None)
                    for sink in feed:
                        sink(event)
                received += len(args[0])
            elif kind == FLUSH:
                end = time.monotonic() + args[0]
                ok = all([sink.flush(max(end - time.monotonic(), 0.0)) for sink in sinks.values()])
                _send(stdout, (seq, (ok, received)))
            elif kind == STATS:
                _send(stdout, (seq, ({section: report(section) for section in sinks},
                                     time.process_time() - started, received)))
            elif kind == CLOSE:
                section, deadline = args
                sink = sinks.get(section)
                ok = bool(sink.shutdown(deadline)) if sink is not None else True
                stats, counters = report(section) if sink is not None else ({}, {})
                sinks.pop(section, None)
                _send(stdout, (seq, (ok, stats, counters, time.process_time() - started, received)))
                if not sinks:
                    return 0
    except BrokenPipeError:
        _shutdown_all(sinks, 1.0)
        return 0


def main() -> int:
    """Entry point of the worker: frames on stdin/stdout; anything printed goes to stderr instead."""
    from ...engine.excepthook import install_thread_excepthook
    from ...engine.logscrub import install_log_scrubbing

    # the child's stderr is the agent's: its log records and thread tracebacks are scrubbed as in the parent
    install_log_scrubbing()
    install_thread_excepthook()
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return _serve(sys.stdin.buffer, protocol_out)


if __name__ == "__main__":
    sys.exit(main())
