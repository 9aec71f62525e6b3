"""Registered callbacks and the adaptation of a payload to a callback's signature (OBS-6, OBS-8, OBS-10).

Adaptation is decided once, at registration, so that dispatch is a plain call.
"""

from __future__ import annotations

import inspect
import keyword
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MethodType
from typing import Any, Final

from ..contract.errors import InvalidCallbackError

Invoker = Callable[[Mapping[str, Any]], Any]
"""Calls one callback with a payload mapping, keyword arguments only."""

TAKES_PAYLOAD: Final = "hermes_pipeline_takes_payload"
"""Attribute marking a hookimpl that is called with the payload mapping itself (one positional
argument) instead of keyword arguments: the dispatch's own dict, shared, never to be mutated.
For recorders that keep the payload for later (the exporters' publication queue); pluggy still
validates the hookimpl against the signature it wraps (``functools.wraps``). ``True`` marks the
hookimpl itself; a function as the value is called instead, with the plugin object first when
the hookimpl is a method: ``record(self, payload)`` (the hookimpl may then keep a keyword
signature for direct calls without the dispatch paying for it)."""

RECORD_LANE: Final = "hermes_pipeline_record_lane"
"""Attribute of a hookimpl that only records the hook for later (never blocks, never returns a value):
a function ``bind(plugin) -> lane`` (``plugin``: the hookimpl's object, ``None`` for a function), where
``lane(fields)`` makes the same record from the hook's fields, one tuple in the hookspec's parameter
order without ``telemetry_schema_version``. When every listener of a hook has one, a host may call
the lanes (:meth:`~hermes_pipeline.engine.core.Engine.record_lanes`) instead of building the payload
and dispatching it; the tuple is then shared and its values must not be mutated."""

LANE_READS: Final = "hermes_pipeline_lane_reads"
"""Optional attribute of a lane (what a :data:`RECORD_LANE` ``bind`` returned): the frozenset of the hookspec's
field names the lane reads. A host may hand ``None`` in the place of a field that no lane of the hook reads, when
that field exists only for listeners (``assistant_message``, a view the host builds for them): see
:func:`lanes_read`. A lane without the attribute reads every field."""


def lanes_read(lanes: tuple[Callable[..., Any], ...], name: str) -> bool:
    """Whether any of ``lanes`` reads the hook field ``name`` (see :data:`LANE_READS`)."""
    for lane in lanes:  # a loop, not any() over a generator: this runs for each LLM call on the agent's thread
        if name in getattr(lane, LANE_READS, (name,)):
            return True
    return False


TRYFIRST, NORMAL, TRYLAST = 0, 1, 2


@dataclass(frozen=True, slots=True, eq=False)
class Entry:
    """One callback registered for one hook or middleware kind."""

    name: str
    """Hook name or middleware kind."""
    callback: Callable[..., Any]
    plugin: str
    """Name of the plugin that registered it (OBS-5)."""
    invoke: Invoker
    group: int = NORMAL
    """``TRYFIRST``, ``NORMAL`` or ``TRYLAST`` (OBS-11)."""
    seq: int = 0
    """Registration sequence number; ordering within a group."""
    qualname: str = field(default="")
    """``module.qualname`` of the callback, for diagnostics."""
    takes_all: bool = False
    """The callback accepts ``**kwargs``: dispatch calls ``callback(**payload)`` directly."""

    @property
    def sort_key(self) -> tuple[int, int]:
        return (self.group, self.seq)


def describe(callback: Callable[..., Any]) -> str:
    """``module.qualname`` of a callable, for log messages and warn-once keys."""
    func = getattr(callback, "__func__", callback)
    module = getattr(func, "__module__", None) or type(callback).__module__
    qual = getattr(func, "__qualname__", None) or type(callback).__qualname__
    return f"{module}.{qual}"


def require_callable(callback: object, *, plugin: str, target: str) -> Callable[..., Any]:
    """Reject a non-callable at registration with a typed error that names plugin and hook."""
    if not callable(callback):
        raise InvalidCallbackError(
            f"plugin {plugin!r}: the callback registered for {target!r} is a "
            f"{type(callback).__name__}, not a callable; pass a function that accepts **kwargs"
        )
    return callback


def takes_all(callback: Callable[..., Any]) -> bool:
    """Whether ``callback`` has a ``**kwargs`` parameter (or an unknown signature)."""
    try:
        params = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is p.VAR_KEYWORD for p in params)


def _full(callback: Callable[..., Any]) -> Invoker:
    def invoke(payload: Mapping[str, Any]) -> Any:
        return callback(**payload)

    return invoke


def _selected(callback: Callable[..., Any], names: tuple[str, ...]) -> Invoker:
    def invoke(payload: Mapping[str, Any]) -> Any:
        return callback(**{k: payload[k] for k in names if k in payload})

    return invoke


def _positional(callback: Callable[..., Any], names: tuple[str, ...], skip: int = 0) -> bool:
    """Whether ``names`` are the leading parameters of ``callback`` (after ``skip`` of them), in order,
    each positional-or-keyword: passing them by position then binds exactly as passing them by name (the
    callable's own signature, not one a decorator copied onto it)."""
    try:
        params = list(inspect.signature(callback, follow_wrapped=False).parameters.values())[skip:]
    except (TypeError, ValueError):
        return False
    return len(params) >= len(names) and all(
        p.name == n and p.kind is p.POSITIONAL_OR_KEYWORD for p, n in zip(params, names, strict=False))


def _compiled(target: str, head: str, callback: Callable[..., Any], names: tuple[str, ...],
              positional: bool) -> Callable[..., Any]:
    """``def invoke(<head>payload): return <target>(<head>get("a"), ...)``, compiled once per callback.

    A generated call with constant argument names costs about a quarter of building a keyword
    dictionary per call, and by position (when that binds the same, :func:`_positional`) a little
    less again; parameter names are identifiers taken from the callback's signature.
    """
    arguments = ", ".join(f"get({n!r})" if positional else f"{n}=get({n!r})" for n in names)
    namespace: dict[str, Any] = {target: callback}
    exec(f"def invoke({head}payload):\n    get = payload.get\n    return {target}({head}{arguments})\n", namespace)
    return namespace["invoke"]  # type: ignore[no-any-return]


def _identifiers(names: tuple[str, ...]) -> bool:
    return all(n.isidentifier() and not keyword.iskeyword(n) for n in names)


def _declared(callback: Callable[..., Any], names: tuple[str, ...]) -> Invoker:
    """``callback(a=payload.get("a"), b=payload.get("b"), ...)`` (see :func:`_compiled`)."""
    if not _identifiers(names):
        def invoke(payload: Mapping[str, Any]) -> Any:
            get = payload.get
            return callback(**{k: get(k) for k in names})

        return invoke
    return _compiled("callback", "", callback, names, _positional(callback, names))


def adapt_callback(callback: Callable[..., Any]) -> Invoker:
    """Invoker for a ``register_hook`` / ``register_middleware`` callback (OBS-8).

    A callable with ``**kwargs`` receives the whole payload; any other callable receives only the
    payload keys matching its named parameters, so absent optional parameters keep their defaults
    and a missing required one raises ``TypeError`` at dispatch (handled fail-open, OBS-15).
    """
    try:
        sig = inspect.signature(callback)
    except (TypeError, ValueError):
        return _full(callback)
    names: list[str] = []
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return _full(callback)
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            names.append(p.name)
    return _selected(callback, tuple(names))


def adapt_hookimpl(function: Callable[..., Any], argnames: tuple[str, ...]) -> Invoker:
    """Invoker for a pluggy hookimpl: every declared field is passed, absent ones as ``None`` (OBS-10).

    A hookimpl marked with :data:`TAKES_PAYLOAD` is its own invoker, or names it.
    """
    marker = getattr(function, TAKES_PAYLOAD, False)
    if marker is True:
        return function
    if callable(marker):
        owner = getattr(function, "__self__", None)
        return marker if owner is None else MethodType(marker, owner)
    return _declared(function, argnames)


def declared_method(method: Callable[..., Any], names: tuple[str, ...]) -> Callable[[Any, Mapping[str, Any]], Any]:
    """``(obj, payload) -> method(obj, a=payload.get("a"), ...)``: an unbound method's :func:`adapt_hookimpl`."""
    if not _identifiers(names):
        def call_slow(obj: Any, payload: Mapping[str, Any]) -> Any:
            return method(obj, **{k: payload.get(k) for k in names})

        return call_slow
    return _compiled("method", "obj, ", method, names, _positional(method, names, skip=1))
