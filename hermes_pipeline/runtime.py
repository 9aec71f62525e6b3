"""The process-wide default engine."""

from __future__ import annotations

import threading

from .engine.core import Engine

_lock = threading.Lock()
_engine: Engine | None = None


def get_engine() -> Engine:
    """The process-wide :class:`Engine`, created on first use and shared by every profile host."""
    global _engine
    if _engine is None:
        with _lock:
            if _engine is None:
                _engine = Engine()
    return _engine


def set_engine(engine: Engine | None) -> Engine | None:
    """Replace the process-wide engine (tests, embedding); returns the previous one."""
    global _engine
    with _lock:
        previous, _engine = _engine, engine
    return previous
