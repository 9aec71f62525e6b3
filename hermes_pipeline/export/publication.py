"""The publication queue: hook callbacks only enqueue; one thread runs the scope kinds (FMT-79, FMT-80).

With a deferred :class:`~hermes_pipeline.export.scope_hooks.ScopePlugin`, each ``@hookimpl`` made by
:func:`deferrable` captures the hook time (and, where needed, the caller's context) and appends one
record to a single bounded FIFO; the publication thread replays the records in order against the hooks
object (its scope kinds and their tracker), which emits the scope events to the listeners. The caller's
thread therefore pays a clock read and one queue extend per hook (the record's values: the queue keeps no tuple
per record, :class:`~hermes_pipeline.export.writer.RecordWriter`), whatever the number of
exporters. Each such hookimpl also offers a record lane (:data:`~hermes_pipeline.engine.callbacks.RECORD_LANE`): the same record from the
hook's fields passed positionally, which a host uses when every listener of the hook has one (the tool
path of :mod:`hermes_pipeline.host.tools`, the LLM call's and the turn's hooks), so that no payload dict is built
and nothing is dispatched.

The queue is bounded by records and by their estimated bytes (:mod:`~hermes_pipeline.export.sizes`: a look at
no more than a few dozen values of the record, on the caller's thread; a tool call's record costs a string
length, an LLM call's the text the host counted). When the queue is full the record is dropped and counted
(``pipeline.events_dropped``); a dropped record that would open a scope (tool call, provider attempt, turn,
subagent) also drops the record that would close it, so exporters never see half a pair because of
back-pressure (FMT-80).
"""

from __future__ import annotations

import functools
import inspect
import logging
from operator import attrgetter, itemgetter
from collections.abc import Callable, Mapping, Sequence
from time import time_ns
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from ..contract.hooks import OBSERVER_HOOKS
from ..contract.hookspecs import hookimpl
from ..engine.callbacks import LANE_READS, RECORD_LANE, TAKES_PAYLOAD, declared_method
from ..engine.tool_status import DERIVES_STATUS, resolve_status
from ..host.context import current as _context
from .sizes import (COUNTED_TEXT, ITEM_BYTES, SLOT_BYTES, arguments_bytes, counted_chars, fields_bytes, held_bytes,
                    payload_bytes, value_bytes)

if TYPE_CHECKING:
    from .scopes import ScopeTracker
    from .writer import BoundedWriter

logger: Final = logging.getLogger("hermes_pipeline.export")

F = TypeVar("F", bound=Callable[..., None])
KeyFn = Callable[[Mapping[str, Any]], Any]
Record = tuple[Callable[..., None], int, "tuple[str, str] | None", "Mapping[str, Any] | tuple[Any, ...]", Any]
"""``(hook method of the scope plugin, hook time in epoch µs, captured (session_id, tool_call_id) or None, the dispatch's
payload or the record lane's fields, copy of the snapshot field or None)``."""
RECORD_WIDTH: Final = 5
"""The values of a :data:`Record`: the publication queue (a :class:`~hermes_pipeline.export.writer.RecordWriter`)
queues each as that many entries."""


def capture_context() -> tuple[str, str] | None:
    """``(session_id, tool_call_id)`` of the caller's tool-call context, if it runs inside one."""
    ctx = _context.get()
    if ctx.tool_call_id and ctx.session is not None:
        return ctx.session.session_id, ctx.tool_call_id
    return None


def deferrable(*, opens: KeyFn | None = None, closes: KeyFn | None = None, context: bool = False,
               snapshot: str | None = None, kind: str | None = None) -> Callable[[F], F]:
    """Turn a method into a ``@hookimpl`` of the hooks object that runs it now or enqueues it (see the module
    docstring).

    Args:
        opens: key of the scope this hook opens; if its record is dropped, the key is remembered.
        closes: key of the scope this hook closes; its record is dropped when the key was remembered.
        context: capture the caller's tool-call context with the record (subagent parentage).
        snapshot: name of a dict field to copy at hook time (it may be mutated before replay).
        kind: the hooks object's attribute holding the scope kind the method belongs to: the method runs
            on that object (``None``: a method of the hooks object itself).
    """

    def wrap(method: F) -> F:
        names = _parameters(method)[1:]  # after ``self``
        call = declared_method(method, names)
        resolve = attrgetter(kind) if kind is not None else None

        def project(hooks: Any, payload: Mapping[str, Any], snap: Any) -> None:
            if snap is not None:
                payload = {**payload, snapshot: snap}  # type: ignore[dict-item]
            call(hooks if resolve is None else resolve(hooks), payload)

        project.__name__ = method.__name__

        @functools.wraps(method)
        def hook(self: Any, payload: Mapping[str, Any] | None = None, /, **fields: Any) -> None:
            if payload is None:  # called directly with keyword arguments
                payload = fields
            queue = self._publication
            if queue is None:
                call(self if resolve is None else resolve(self), payload)
                return
            snap = None
            if snapshot is not None:
                value = payload.get(snapshot)
                if type(value) is dict:
                    snap = value.copy()
            dropped = self._dropped_keys
            if closes is not None and dropped and _drops_closing(queue, dropped, closes(payload)):
                return
            if not queue.submit_sized((project, time_ns() // 1000, capture_context() if context else None, payload,
                                       snap), ITEM_BYTES + payload_bytes(payload)) and opens is not None:
                dropped.add(opens(payload))

        setattr(hook, TAKES_PAYLOAD, True)  # the engine passes its payload dict: no keyword re-packing
        lane = _lane(method, names, opens, closes, context, snapshot, resolve)
        if lane is not None:
            setattr(hook, RECORD_LANE, lane)
        return cast(F, hookimpl(hook))

    return wrap


def _drops_closing(queue: BoundedWriter, dropped: set[Any], key: Any) -> bool:
    """FMT-80: whether the record closing the scope ``key`` is dropped because its opening record was
    (then it is counted, and the key forgotten)."""
    if key not in dropped:
        return False
    dropped.discard(key)
    queue.record_dropped()
    return True


def _parameters(function: Callable[..., Any]) -> tuple[str, ...]:
    """Parameter names of a plain function from its code object (``inspect.signature`` costs about 100 us
    per call, paid for every hookimpl while a host starts); the signature for anything else."""
    code = getattr(function, "__code__", None)
    if code is None or hasattr(function, "__wrapped__") or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return tuple(inspect.signature(function).parameters)
    return tuple(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])


def _lane(method: Callable[..., None], names: tuple[str, ...], opens: KeyFn | None, closes: KeyFn | None,
          context: bool, snapshot: str | None,
          resolve: Callable[[Any], Any] | None) -> Callable[[Any], Callable[[tuple[Any, ...]], None]] | None:
    """The hook's record lane (:data:`~hermes_pipeline.engine.callbacks.RECORD_LANE`): the same record as the
    hookimpl, from the fields given positionally in hookspec order, so a host skips the payload dict and the
    dispatch. The method receives the fields it names (a prefix of the hookspec's is passed as a slice, any
    other selection picked by position, as the hookimpl picks them from the payload by name). ``None`` when the
    method names a field the hookspec does not have (then only the hookimpl exists)."""
    info = OBSERVER_HOOKS.get(method.__name__)
    if info is None or not set(names) <= set(info.fields):
        return None
    spec = info.fields
    count = len(names)
    pick: Callable[[Sequence[Any]], tuple[Any, ...]] | None = None
    if spec[:count] != names:
        positions = [spec.index(name) for name in names]
        pick = itemgetter(*positions) if count > 1 else lambda fields: tuple(fields[i] for i in positions)
    at = spec.index(snapshot) if snapshot is not None and snapshot in names else -1
    # A host may hand over ``DEFERRED_STATUS`` for a tool call's status (engine.tool_status): derived here,
    # on the publication thread, when the method reads the status and does not derive it itself.
    result_at, status_at = (spec.index("result"), spec.index("status")) \
        if "status" in names and "result" in names else (-1, -1)
    resolves = status_at >= 0 and not getattr(method, DERIVES_STATUS, False)
    # The text the host counted (an LLM call's request or response, sizes.COUNTED_TEXT): the fields holding it are
    # sized by that count (held_bytes) instead of a look, the others by fields_bytes.
    counted_name, held_names = COUNTED_TEXT.get(method.__name__, ("", ()))
    counted_at = spec.index(counted_name) if counted_name in spec else -1
    held_at = tuple(spec.index(name) for name in held_names if name in spec) if counted_at >= 0 else ()
    others = [i for i in range(len(spec)) if i not in held_at]
    rest: Callable[[tuple[Any, ...]], tuple[Any, ...]] = itemgetter(*others) if held_at and len(others) > 1 \
        else (lambda fields: fields)

    whole = pick is None and count == len(spec)  # the method takes every field: passed as they are, no slice
    reads = frozenset(names)  # what the method reads (the status's derivation reads ``result`` and ``status``, both
    # named then); sizes also look at the other fields, whatever they hold (LANE_READS)

    def project(hooks: Any, fields: Any, snap: Any) -> None:
        if snap is not None:  # one copy of the fields, a list, with the snapshot in its place
            fields = list(fields)
            fields[at] = snap
        if resolves:
            fields = resolve_status(fields, result_at, status_at)
        method(hooks if resolve is None else resolve(hooks),
               *(fields if whole else fields[:count] if pick is None else pick(fields)))

    project.__name__ = method.__name__

    def bind(self: Any) -> Callable[[tuple[Any, ...]], None]:
        queue = self._publication  # set once, when the hooks object is made
        if queue is None:
            owner = self if resolve is None else resolve(self)  # the kinds are made with the hooks object

            def direct(fields: Sequence[Any]) -> None:
                if resolves:
                    fields = resolve_status(fields, result_at, status_at)
                method(owner, *(fields[:count] if pick is None else pick(fields)))

            setattr(direct, LANE_READS, reads)
            return direct
        dropped = self._dropped_keys
        offer = queue.submit_sized
        # The two shapes of the tool path get lanes of their own, which read fewer closure cells: on real
        # payloads each one is a cold memory access on the agent's thread (the LLM call in between evicts them).
        # The record's estimated bytes (the byte bound of the queue): the copied field (a tool call's arguments,
        # which its end shares) on the shape that copies one, the result's length on a tool call's end.
        if not context and closes is None and at >= 0:  # opens a scope, copies a field (``pre_tool_call``)
            def lane(fields: tuple[Any, ...]) -> None:
                value = fields[at]
                if type(value) is dict:  # arguments_bytes(value), its loop here: no call per string argument
                    copy = value.copy()
                    size = ITEM_BYTES + len(value) * SLOT_BYTES
                    for item in value.values():
                        size += len(item) if type(item) is str else fields_bytes((item,), 8)
                else:
                    copy, size = None, ITEM_BYTES + arguments_bytes(value)
                if not offer((project, time_ns() // 1000, None, fields, copy), size) and opens is not None:
                    dropped.add(opens(dict(zip(spec, fields))))
        elif not context and opens is None and at < 0 and result_at >= 0:  # closes a scope (``post_tool_call``)
            def lane(fields: tuple[Any, ...]) -> None:
                if dropped and closes is not None and _drops_closing(queue, dropped, closes(dict(zip(spec, fields)))):
                    return
                result = fields[result_at]
                offer((project, time_ns() // 1000, None, fields, None),
                      ITEM_BYTES + (len(result) if type(result) is str else value_bytes(result, 8)))
        elif held_at:  # an LLM call's request or response: its text is sized by the host's count
            def lane(fields: tuple[Any, ...]) -> None:
                if closes is not None and dropped and _drops_closing(queue, dropped, closes(dict(zip(spec, fields)))):
                    return
                chars = counted_chars(fields[counted_at])
                size = ITEM_BYTES + fields_bytes(rest(fields)) + chars  # the text once, and once more per holder
                for i in held_at:
                    size += held_bytes(fields[i], chars)
                value = fields[at] if at >= 0 else None
                if not offer((project, time_ns() // 1000, capture_context() if context else None, fields,
                              value.copy() if type(value) is dict else None), size) \
                        and opens is not None:
                    dropped.add(opens(dict(zip(spec, fields))))
        else:
            def lane(fields: tuple[Any, ...]) -> None:
                if closes is not None and dropped and _drops_closing(queue, dropped, closes(dict(zip(spec, fields)))):
                    return
                value = fields[at] if at >= 0 else None
                size = ITEM_BYTES + fields_bytes(fields)
                if not offer((project, time_ns() // 1000, capture_context() if context else None, fields,
                              value.copy() if type(value) is dict else None), size) \
                        and opens is not None:
                    dropped.add(opens(dict(zip(spec, fields))))

        lane.__name__ = method.__name__
        setattr(lane, LANE_READS, reads)
        return lane

    return bind


class TrackerDestination:
    """The publication thread's destination: applies the queued hook records to the scope tracker, in order.

    Each record runs its hook method on ``target`` (the hooks object whose ``@hookimpl`` made it) with the
    ``tracker``'s clock set to the hook's time. (Not :class:`hermes_pipeline.replay.Replay`, which replays a
    recorded trajectory.)"""

    def __init__(self, tracker: ScopeTracker, target: Any) -> None:
        self.tracker = tracker
        self.target = target
        self.failures = 0
        self._warned: set[tuple[str, str]] = set()

    def describe(self) -> str:
        return "scope tracker"

    def write(self, batch: list[Record]) -> None:
        tracker = self.tracker
        target = self.target
        tracker.collect()  # the batch's events reach each sink in one hand-over (ScopeTracker.hand_over)
        try:
            for project, ts, ambient, payload, snap in batch:
                tracker._ts = ts
                tracker._ambient = ambient
                try:
                    project(target, payload, snap)
                except Exception as exc:  # FMT-83: a broken record never stops the others
                    self.failures += 1
                    key = (project.__name__, type(exc).__name__)
                    if key not in self._warned:
                        self._warned.add(key)
                        logger.warning("hermes_pipeline: scope kind hook %s failed (%s); later failures of "
                                       "this kind are counted silently", project.__name__, type(exc).__name__)
                finally:
                    tracker._ts = 0
                    tracker._ambient = None
        finally:
            tracker.hand_over()


def tool_key(fields: Mapping[str, Any]) -> Any:
    return ("tool", fields.get("session_id"), fields.get("tool_call_id") or
            f"{fields.get('turn_id')}:{fields.get('tool_name')}")


def attempt_key(fields: Mapping[str, Any]) -> Any:
    return ("llm", fields.get("session_id"), fields.get("api_request_id"))


def turn_key(fields: Mapping[str, Any]) -> Any:
    return ("turn", fields.get("session_id"), fields.get("turn_id"))


def child_key(fields: Mapping[str, Any]) -> Any:
    return ("child", fields.get("child_session_id"))
