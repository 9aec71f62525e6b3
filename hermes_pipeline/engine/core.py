"""The engine: one ordered registry of observer callbacks and middleware, and fail-open dispatch.

``register_hook`` callbacks and pluggy hookimpls feed the same registry (OBS-11). Dispatch iterates
the entries itself rather than using pluggy's multi-call loop (OBS-12), isolates each callback
(OBS-15) and costs one dictionary lookup when nobody listens (OBS-22, OBS-66).
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

from ..contract.hooks import MIDDLEWARE_KINDS, OBSERVER_HOOKS
from ..contract.versions import TELEMETRY_SCHEMA_VERSION
from .awaitables import ASYNC_CALLBACK_TIMEOUT, AsyncCallbackTimeout, in_running_loop, submit, wait_result
from .callbacks import NORMAL, RECORD_LANE, Entry, adapt_callback, require_callable, takes_all
from .failures import FailureLog, FailureStats
from .hang import TIMED_OUT, HangGuard, parse_timeout
from .middleware import apply_request_middleware, run_execution_chain
from .plugins import PluginSet
from .reentry import in_hook
from .registry import Registry, add_entry
from .tool_route import tool_route

logger: Final = logging.getLogger("hermes_pipeline.engine")

TIMEOUT_BLOCK_MESSAGE: Final = "pre_tool_call plugin callback timed out or is still running"
"""The block message a timed-out ``pre_tool_call`` callback turns into (OBS-73)."""

_QUIET_HOOKS: Final = frozenset({"on_human_input_request", "on_human_input_resolved"})
_SCHEMA_KEY: Final = "telemetry_schema_version"


class Engine:
    """Process-wide registry and dispatcher for observer hooks and middleware.

    Most hosts use the process default from :func:`hermes_pipeline.get_engine`; tests and embedded
    uses can make their own. Plugins are added with :meth:`add_plugin` (pluggy hookimpls, a
    ``register(ctx)`` module or function, or a component class) or :meth:`load_plugin` /
    :meth:`load_entry_point`; single callbacks with :meth:`register_hook` and
    :meth:`register_middleware`.

    Args:
        hook_callback_timeout: seconds a callback may run before it is abandoned (spec 01 §11);
            ``0`` (the default) disables hang protection so callbacks run on the caller's thread.
            A child engine inherits its parent's value unless given one.
        parent: make this engine inherit ``parent``'s plugins (see :meth:`child`).
        async_callback_timeout: seconds an async callback (one returning an awaitable) may run before it is
            cancelled; on by default (:data:`~hermes_pipeline.engine.awaitables.ASYNC_CALLBACK_TIMEOUT`),
            ``0`` or junk keeps the default. Async callbacks never run on the host's event loop (see
            :mod:`hermes_pipeline.engine.awaitables`). A child engine inherits its parent's value.
    """

    def __init__(self, *, hook_callback_timeout: float | None = None, parent: Engine | None = None,
                 async_callback_timeout: float | None = None) -> None:
        self.parent = parent
        """The engine whose plugins this one inherits (a profile engine's process engine), or ``None``."""
        self.hooks: Registry = Registry(parent.hooks if parent is not None else None)
        """Observer callbacks per hook name (inherited ones included)."""
        self.middleware: Registry = Registry(parent.middleware if parent is not None else None)
        """Middleware callbacks per kind (inherited ones included)."""
        self.failures: FailureLog = parent.failures if parent is not None else FailureLog()
        self.hook_listeners: Mapping[str, tuple[Entry, ...]] = self.hooks.mapping
        """Read-only live view, observer hook name → its callbacks (only hooks someone listens on are keys).

        For hosts: ``"pre_tool_call" in engine.hook_listeners`` is the one-lookup "does anyone listen"
        check before building a payload (the same as :meth:`has_hook`, without the method call)."""
        self.middleware_listeners: Mapping[str, tuple[Entry, ...]] = self.middleware.mapping
        """Read-only live view, middleware kind → its callbacks (see :attr:`hook_listeners`)."""
        self._hook_map = self.hook_listeners
        self._mw_map = self.middleware_listeners
        self._lanes: dict[str, tuple[tuple[Entry, ...], tuple[Callable[[tuple[Any, ...]], None], ...] | None]] = {}
        self._guard: HangGuard | None = None
        self.tool_route: tuple[Any, ...] | None = None
        """The tool path's view of the listeners: the fields of a :class:`~hermes_pipeline.engine.tool_route.ToolRoute`
        as a plain tuple (which the interpreter unpacks fastest), or ``None`` when it must be recomputed; a host
        reads ``engine.tool_route or engine.route_tools()`` once per stage."""
        self._route_lock = threading.Lock()
        self.hooks.watch(self._forget_route)
        self.middleware.watch(self._forget_route)
        if hook_callback_timeout is None:
            hook_callback_timeout = parent.hook_callback_timeout if parent is not None else 0.0
        self.hook_callback_timeout = hook_callback_timeout
        if async_callback_timeout is None:
            async_callback_timeout = parent.async_callback_timeout if parent is not None else ASYNC_CALLBACK_TIMEOUT
        self.async_callback_timeout: float = parse_timeout(async_callback_timeout) or ASYNC_CALLBACK_TIMEOUT
        """Deadline in seconds of every async callback (always on)."""
        self._detached_warned: set[int] = set()
        self.plugins = PluginSet(self)
        """The loaded plugins (names, loading, removal)."""

    def child(self, *, hook_callback_timeout: float | None = None) -> Engine:
        """A derived engine that sees every plugin of this one plus plugins added to it alone.

        Used for per-profile consumers (spec 03 §11): process-wide plugins are shared, while a
        profile's first-party consumers (shared metrics, audit) see only that profile's events.
        Plugins added to or removed from this engine later are seen by the child at once.
        """
        return Engine(hook_callback_timeout=hook_callback_timeout, parent=self)

    # ------------------------------------------------------------------ options

    @property
    def hook_callback_timeout(self) -> float:
        """Hang-protection timeout in seconds; 0 when disabled."""
        return self._guard.timeout if self._guard is not None else 0.0

    @hook_callback_timeout.setter
    def hook_callback_timeout(self, value: object) -> None:
        seconds = parse_timeout(value)
        self._guard = HangGuard(seconds, on_timeout=self.failures.callback_timed_out) if seconds > 0 else None
        with self._route_lock:
            self._lanes.clear()  # lanes are offered only without hang protection
            self.tool_route = None

    def _forget_route(self) -> None:
        with self._route_lock:
            self.tool_route = None

    def route_tools(self) -> tuple[Any, ...]:
        """The current :class:`~hermes_pipeline.engine.tool_route.ToolRoute` as a plain tuple, computed and kept
        (see :attr:`tool_route`); a registry change or a hang-protection switch during the computation makes it
        forgotten again, never kept stale (both take the same lock)."""
        with self._route_lock:
            route = self.tool_route = tuple(tool_route(self, self._hook_map, self._mw_map))
        return route

    # ------------------------------------------------------------------ registration

    def register_hook(
        self, hook_name: str, callback: Callable[..., Any], *, plugin: str = "<host>", group: int = NORMAL
    ) -> Entry:
        """Append ``callback`` to the observer list of ``hook_name`` (OBS-3).

        The same callable registered twice runs twice. An unknown hook name is stored with one
        WARNING (OBS-4). A non-callable raises :class:`~hermes_pipeline.InvalidCallbackError`.
        """
        callback = require_callable(callback, plugin=plugin, target=hook_name)
        if hook_name not in OBSERVER_HOOKS:
            logger.warning(
                "hermes_pipeline: plugin %r registered unknown hook %r; it is stored and fires only if a host "
                "emits that name. Valid hooks: %s",
                plugin,
                hook_name,
                ", ".join(OBSERVER_HOOKS),
            )
        return add_entry(self.hooks, hook_name, callback, plugin, group, adapt_callback(callback),
                         takes_all(callback))

    def register_middleware(
        self, kind: str, callback: Callable[..., Any], *, plugin: str = "<host>", group: int = NORMAL
    ) -> Entry:
        """Append ``callback`` to the middleware list of ``kind`` (MW-2).

        An unknown kind is stored with a WARNING and never invoked (MW-3).
        """
        callback = require_callable(callback, plugin=plugin, target=kind)
        if kind not in MIDDLEWARE_KINDS:
            logger.warning(
                "hermes_pipeline: plugin %r registered middleware of unknown kind %r; it is stored but never "
                "invoked. Valid kinds: %s",
                plugin,
                kind,
                ", ".join(MIDDLEWARE_KINDS),
            )
        return add_entry(self.middleware, kind, callback, plugin, group, adapt_callback(callback))

    def add_plugin(self, plugin: object, *, name: str | None = None, config: Mapping[str, Any] | None = None) -> str:
        """Add a plugin in any supported style and return its registered name.

        See :meth:`hermes_pipeline.engine.plugins.PluginSet.add`.
        """
        return self.plugins.add(plugin, name=name, config=config)

    def load_plugin(self, target: str, *, config: Mapping[str, Any] | None = None) -> str:
        """Import ``"package.module"`` or ``"package.module:object"`` and add it as a plugin."""
        return self.plugins.load(target, config=config)

    def load_entry_point(self, name: str, *, config: Mapping[str, Any] | None = None) -> str:
        """Load the plugin published as ``name`` in the ``hermes_pipeline.components`` group."""
        return self.plugins.load_entry_point(name, config=config)

    def remove_plugin(self, name: str) -> bool:
        """Remove a plugin's callbacks and middleware and shut it down; ``False`` if unknown."""
        return self.plugins.remove(name)

    # ------------------------------------------------------------------ queries

    def has_hook(self, name: str) -> bool:
        """``True`` iff at least one consumer listens on observer hook ``name`` (OBS-22). O(1)."""
        return name in self._hook_map

    def has_middleware(self, kind: str) -> bool:
        """``True`` iff at least one middleware is registered for ``kind`` (MW-6). O(1)."""
        return kind in self._mw_map

    def failure_stats(self) -> FailureStats:
        """Counts of callback failures and timeouts, per plugin and per hook."""
        return self.failures.snapshot()

    # ------------------------------------------------------------------ dispatch

    def dispatch(self, hook: str, payload: dict[str, Any], entries: tuple[Entry, ...] | None = None) -> list[Any]:
        """Call every consumer of ``hook`` with ``payload`` (keyword arguments) and collect results.

        Injects ``telemetry_schema_version`` if absent (OBS-14) and passes the same payload object
        to every callback (OBS-19). A callback raising an ``Exception`` is logged (warn-once) and
        skipped (OBS-15, OBS-16); ``BaseException`` such as ``KeyboardInterrupt`` propagates
        (OBS-17). Awaitable results are awaited (OBS-20). Returns the non-``None`` results in
        dispatch order (OBS-18). With hang protection enabled, a timed-out callback's result is
        absent, except for ``pre_tool_call`` where it becomes a block directive (OBS-73).

        ``entries``: the non-empty ``hook_listeners[hook]`` a host has just read to decide whether
        to build ``payload`` at all, which then already carries ``telemetry_schema_version``: the
        lookup and the schema check are skipped (the tool path's two hooks save both).
        """
        if entries is None:
            entries = self._hook_map.get(hook)
            if not entries:
                return []
            if _SCHEMA_KEY not in payload:
                payload[_SCHEMA_KEY] = TELEMETRY_SCHEMA_VERSION
        mark = in_hook.set(hook)  # the host refuses call_tool from inside an observer (reentry.py)
        try:
            if self._guard is not None:
                return self._dispatch_guarded(hook, entries, payload)
            results: list[Any] = []
            for entry in entries:  # the hot loop: no guard, one try per callback
                try:
                    result = entry.callback(**payload) if entry.takes_all else entry.invoke(payload)
                    if result is not None and inspect.isawaitable(result):
                        result = self._awaited(hook, entry, result)
                except AsyncCallbackTimeout:
                    self._async_timed_out(hook, entry)
                    if hook == "pre_tool_call":  # fail-closed, as a hang-protection timeout (OBS-73)
                        results.append({"action": "block", "message": TIMEOUT_BLOCK_MESSAGE})
                    continue
                except Exception as exc:
                    self._failed(hook, entry, exc)
                    continue
                if result is not None:
                    results.append(result)
            return results
        finally:
            in_hook.reset(mark)

    def record_lanes(self, hook: str, entries: tuple[Entry, ...]) -> tuple[Callable[[tuple[Any, ...]], None], ...] | None:
        """The record lanes of ``entries`` (the ``hook_listeners[hook]`` just read), or ``None``.

        Not ``None`` only when every listener of ``hook`` is a recorder offering a lane
        (:data:`~hermes_pipeline.engine.callbacks.RECORD_LANE`) and hang protection is off: the host
        may then call ``lane(fields)`` for each, with the hookspec's fields in its parameter order,
        instead of building the payload and calling :meth:`dispatch` (the outcome is the same: these
        listeners return nothing). Cached per listener tuple.
        """
        cached = self._lanes.get(hook)
        if cached is not None and cached[0] is entries:
            return cached[1]
        found = None
        if entries and self._guard is None and all(hasattr(entry.callback, RECORD_LANE) for entry in entries):
            found = tuple(getattr(entry.callback, RECORD_LANE)(getattr(entry.callback, "__self__", None))
                          for entry in entries)
        self._lanes[hook] = (entries, found)
        return found

    def _dispatch_guarded(self, hook: str, entries: tuple[Entry, ...], payload: dict[str, Any]) -> list[Any]:
        """:meth:`dispatch` with hang protection: each callback on a bounded worker (spec 01 §11)."""
        guard = self._guard
        assert guard is not None
        results: list[Any] = []
        for entry in entries:
            try:
                result = guard.call(hook, entry, self._invoke_and_await(hook, entry), payload)
            except AsyncCallbackTimeout:
                self._async_timed_out(hook, entry)
                result = TIMED_OUT
            except Exception as exc:
                self._failed(hook, entry, exc)
                continue
            if result is TIMED_OUT:
                if hook != "pre_tool_call":
                    continue
                result = {"action": "block", "message": TIMEOUT_BLOCK_MESSAGE}
            if result is not None:
                results.append(result)
        return results

    def _invoke_and_await(self, hook: str, entry: Entry) -> Callable[[Mapping[str, Any]], Any]:
        def run(payload: Mapping[str, Any]) -> Any:
            result = entry.invoke(payload)
            if result is not None and inspect.isawaitable(result):
                result = self._awaited(hook, entry, result)
            return result

        return run

    def _awaited(self, hook: str, entry: Entry, awaitable: Any) -> Any:
        """The result of an async callback, run on the background loop (awaitables.py) under the async deadline.

        From a thread running an event loop nothing is waited for (that would freeze the host's
        coroutines): the callback completes in the background, its failures and timeouts are counted,
        and its return value is not used (said once per callback); ``None`` is returned.
        """
        future = submit(awaitable, self.async_callback_timeout)
        if not in_running_loop():
            return wait_result(future, self.async_callback_timeout)
        future.add_done_callback(lambda done: self._detached_done(hook, entry, done))
        key = id(entry)
        if key not in self._detached_warned:
            self._detached_warned.add(key)
            logger.warning(
                "hermes_pipeline: async %s callback %s of plugin %r was dispatched from a running event loop; it "
                "runs on the engine's own loop so that the host's loop is never blocked, and its return value "
                "is not used", hook, entry.qualname, entry.plugin)
        return None

    def _detached_done(self, hook: str, entry: Entry, future: Any) -> None:
        error = future.exception()
        if isinstance(error, AsyncCallbackTimeout):
            self._async_timed_out(hook, entry)
        elif isinstance(error, Exception):
            self._failed(hook, entry, error)

    def _async_timed_out(self, hook: str, entry: Entry) -> None:
        try:
            self.failures.callback_timed_out(hook, entry)
            key = -id(entry)  # warned once per callback, DEBUG afterwards (the counter counts every one)
            loud = key not in self._detached_warned
            self._detached_warned.add(key)
            logger.log(logging.WARNING if loud else logging.DEBUG, "hermes_pipeline: async %s callback %s of plugin %r did not complete within %g s; it was "
                           "cancelled and its result is ignored%s", hook, entry.qualname, entry.plugin,
                           self.async_callback_timeout,
                           " and the tool call is blocked" if hook == "pre_tool_call" else "")
        except Exception:  # noqa: BLE001 - reporting never reaches the host
            pass

    def _failed(self, hook: str, entry: Entry, exc: Exception) -> None:
        try:
            self.failures.callback_failed(hook, entry, exc, quiet=hook in _QUIET_HOOKS)
        except Exception:  # logging itself failed; never reach the host
            pass

    # ------------------------------------------------------------------ middleware (spec 02 §10)

    def apply_llm_request_middleware(self, request: dict[str, Any], **context: Any) -> Any:
        """Run ``llm_request`` middleware; returns a ``RequestMiddlewareResult`` (MW-11..MW-19)."""
        return apply_request_middleware(self.middleware.get("llm_request"), self.failures.callback_failed,
                                        "llm_request", "request", request, context)

    def apply_tool_request_middleware(self, tool_name: str, args: dict[str, Any], **context: Any) -> Any:
        """Run ``tool_request`` middleware; returns a ``RequestMiddlewareResult``."""
        context["tool_name"] = tool_name
        return apply_request_middleware(self.middleware.get("tool_request"), self.failures.callback_failed,
                                        "tool_request", "args", args, context)

    def run_llm_execution_middleware(
        self,
        request: dict[str, Any],
        next_call: Callable[[dict[str, Any]], Any],
        *,
        original_request: dict[str, Any] | None = None,
        middleware_trace: list[dict[str, str]] | None = None,
        **context: Any,
    ) -> Any:
        """Run the ``llm_execution`` chain around ``next_call`` (the provider call) (MW-25..MW-35)."""
        return run_execution_chain(
            self.middleware.get("llm_execution"), self.failures.callback_failed, "llm_execution", "request",
            request, next_call,
            original=request if original_request is None else original_request,
            trace=middleware_trace or [], context=context,
        )

    def run_tool_execution_middleware(
        self,
        tool_name: str,
        args: dict[str, Any],
        next_call: Callable[[dict[str, Any]], Any],
        *,
        original_args: dict[str, Any] | None = None,
        middleware_trace: list[dict[str, str]] | None = None,
        **context: Any,
    ) -> Any:
        """Run the ``tool_execution`` chain around ``next_call`` (the tool dispatch)."""
        context["tool_name"] = tool_name
        return run_execution_chain(
            self.middleware.get("tool_execution"), self.failures.callback_failed, "tool_execution", "args",
            args, next_call,
            original=args if original_args is None else original_args,
            trace=middleware_trace or [], context=context,
        )

