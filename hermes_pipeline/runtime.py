"""The process-wide default engine.

The engine :func:`get_engine` creates decides the process-wide pipeline activation when it is
created: with ``HERMES_NEMO_RELAY_PLUGINS_TOML`` set, the selected pipeline file is activated on
it (once per process engine, thread-safe, fail-open) on behalf of the default profile
(``$HERMES_HOME``), so a host built as ``Host(get_engine(), ...)`` exports what the file says.
This module sits below the configuration layer and never imports it: the package root, which sits above
every layer, hands it the activation (:func:`set_activation`) when the package is first imported.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .engine.core import Engine

logger: Final = logging.getLogger("hermes_pipeline")

Activation = Callable[["Engine"], object]
"""Takes the new process engine and decides the pipeline activation on it."""

_activation: Activation | None = None

_lock = threading.Lock()
_activation_lock = threading.RLock()
_engine: Engine | None = None
_decided = False
"""Whether the activation of the current process engine has been decided (or is owned elsewhere)."""
_activating = False
"""Set while :func:`get_engine` activates (other threads wait on the lock; the activating one passes)."""


def get_engine() -> Engine:
    """The process-wide :class:`Engine`, created on first use and shared by every profile host.

    The first call also decides the pipeline activation (see the module docstring); other threads
    calling meanwhile wait for it, so none of them sees the engine half-configured. A bad pipeline
    file never raises here: the process runs without pipeline plugins and the reason is logged.
    """
    global _decided, _activating
    engine = _engine
    if engine is not None and _decided:
        return engine
    engine = _process_engine()
    with _activation_lock:  # re-entrant: a component activated here may call get_engine() itself
        if not _decided and not _activating and engine is _engine:
            _activating = True
            try:
                _activate(engine)
            finally:
                _activating = False
                _decided = True
    return engine


def profile_engine() -> Engine:
    """The process engine for a profile host that decides the activation itself
    (:func:`hermes_pipeline.profile.open_profile`): the implicit activation of :func:`get_engine`
    is skipped from then on."""
    global _decided
    engine = _process_engine()
    _decided = True
    return engine


def set_engine(engine: Engine | None) -> Engine | None:
    """Replace the process-wide engine (tests, embedding); returns the previous one.

    An engine installed here is used as it is (its owner decides what is active on it). After
    ``set_engine(None)`` the next :func:`get_engine` creates a new engine and decides its activation
    again, which joins nothing while an earlier activation is still held: release that one first
    (:func:`hermes_pipeline.profile.release_all`).
    """
    global _engine, _decided
    with _lock:
        previous, _engine = _engine, engine
        _decided = engine is not None
    return previous


def set_activation(activation: Activation | None) -> Activation | None:
    """Hand :func:`get_engine` the function that decides the activation of a new process engine (the package
    root hands it :func:`hermes_pipeline.profile.activate_default`); returns the previous one. ``None``: new
    process engines are not activated."""
    global _activation
    previous, _activation = _activation, activation
    return previous


def _process_engine() -> Engine:
    global _engine
    engine = _engine
    if engine is None:
        from .engine.core import Engine  # here, so that handing over the activation loads no engine

        with _lock:
            if _engine is None:
                _engine = Engine()
            engine = _engine
    return engine


def _activate(engine: Engine) -> None:
    activate = _activation
    if activate is None:
        return
    try:
        activate(engine)
    except Exception as exc:  # fail-open: the host keeps running without pipeline plugins
        logger.error("hermes_pipeline: the pipeline could not be activated (%s: %s); continuing without "
                     "pipeline plugins", type(exc).__name__, str(exc)[:200])
