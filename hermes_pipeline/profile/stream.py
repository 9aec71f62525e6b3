"""A profile's one shared event stream: the scope events every first-party consumer of the profile listens to.

A hook is enqueued once on the caller's thread and made into scope events once, whatever the number of consumers,
and they all see the same scope UUIDs (FMT-56). The stream is the pipeline's own scope plugin when the pipeline file
runs an ``observability`` component whose scope plugin fits, else one the profile makes on its own engine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from .._deprecated import renamed_attributes
from ..contract.hookspecs import hookimpl
from ..engine.core import Engine
from . import activation

if TYPE_CHECKING:
    from ..export.scope_hooks import ScopePlugin
    from .profiles import Profile

SHARED_QUEUE_SIZE: Final = 10_000
"""Capacity of a profile's own stream queue (hook records, FMT-80)."""
CLOSE_DEADLINE: Final = 5.0

Listener = Callable[[Any], None]


class SessionClaims:
    """The Hermes session ids hooked through one profile's engine (``tryfirst``, on the caller's thread, only on
    the hooks that name a new or first-seen session: never per tool call).

    A profile whose consumers listen to the pipeline's scope plugin (on the process engine, fed by every profile's
    hosts) passes them only the events of these sessions, so they still see that profile's events alone. Bounded:
    the oldest ids are forgotten past :attr:`LIMIT` (long-finished sessions)."""

    LIMIT: Final = 100_000

    def __init__(self) -> None:
        self.sessions: dict[str, None] = {}
        self._lock = threading.Lock()

    def claim(self, *session_ids: str | None) -> None:
        sessions = self.sessions
        for session_id in session_ids:
            if session_id and session_id not in sessions:
                with self._lock:
                    sessions[session_id] = None
                    if len(sessions) > self.LIMIT:
                        del sessions[next(iter(sessions))]

    def hookimpls(self) -> object:
        """The hookimpls that claim the sessions named by this profile's hooks."""
        claim = self.claim

        class Claims:
            @hookimpl(tryfirst=True)
            def on_session_start(self, session_id: str) -> None:
                claim(session_id)

            @hookimpl(tryfirst=True)
            def on_session_reset(self, session_id: str, new_session_id: str | None) -> None:
                claim(session_id, new_session_id)

            @hookimpl(tryfirst=True)
            def on_session_segment(self, session_id: str) -> None:
                claim(session_id)

            @hookimpl(tryfirst=True)
            def on_compaction(self, session_id: str, new_session_id: str) -> None:
                claim(session_id, new_session_id)

            @hookimpl(tryfirst=True)
            def pre_llm_call(self, session_id: str) -> None:  # one per turn: a session first seen mid-way
                claim(session_id)

            @hookimpl(tryfirst=True)
            def subagent_start(self, parent_session_id: str, child_session_id: str) -> None:
                claim(parent_session_id, child_session_id)

            @hookimpl(tryfirst=True)
            def pre_gateway_dispatch(self, session_id: str) -> None:
                claim(session_id)

        return Claims()


def pipeline_scope_plugin(engine: Engine) -> ScopePlugin | None:
    """The scope plugin of the pipeline's ``observability`` component, when one runs on ``engine``'s parent
    (the process engine a profile engine inherits from) and scrubs credentials; else ``None``.

    Read through the activation's and the component's documented views (``activation.PROCESS.engine``,
    ``activation.PROCESS.components()``, a component's ``scope_plugin``), never their private state."""
    parent = engine.parent
    if parent is None or activation.PROCESS.engine is not parent:
        return None
    from ..export.scope_hooks import ScopePlugin  # only a running pipeline gets here: the export layer is loaded

    for component in activation.PROCESS.components():
        plugin = getattr(component, "scope_plugin", None)
        if isinstance(plugin, ScopePlugin) and plugin.deferred and plugin.redact_credentials and not plugin.closed:
            return plugin
    return None


class SharedStream:
    """The one stream of scope events every first-party consumer of a profile listens to (trajectory store,
    observability store, quick OTel endpoint).

    It is the pipeline's own scope plugin when the pipeline file runs an ``observability`` component whose
    scope plugin fits (credentials scrubbed; the profile sets no ``observability.memory_tools``, which would
    classify tools differently, and its ``observability.max_value_chars`` is the component's
    ``max_value_chars``): the profile's consumers are then more listeners of it, given only the events of the
    sessions hooked through this profile's engine (:class:`SessionClaims`). Otherwise the profile makes one
    deferred scope plugin on its own engine, created when the first consumer attaches and removed when the last
    one detaches.

    Each consumer's listener is called on its own: one that raises never keeps an event from the others
    (FMT-83). :meth:`close` (the profile's close) ends every open scope of an own scope plugin first, so every
    consumer writes its partial runs, then the consumers detach.
    """

    __getattr__ = renamed_attributes("SharedStream", {"projection": "scope_plugin"})

    def __init__(self, profile: Profile, *, is_only_profile: Callable[[], bool]) -> None:
        self._profile = profile
        self._is_only_profile = is_only_profile
        self._lock = threading.RLock()
        self.scope_plugin: ScopePlugin | None = None
        """The scope plugin listened to (``None`` until a consumer attaches)."""
        self.borrowed = False
        """Whether :attr:`scope_plugin` is the pipeline's (else the profile's own)."""
        self._plugin_name: str | None = None
        self._claims: SessionClaims | None = None
        self._claims_name: str | None = None
        self._listeners: dict[int, tuple[Listener, Listener]] = {}
        self._closed = False

    def _memory_tools(self) -> dict[str, str]:
        tools = self._profile.settings.observability.memory_tools
        return dict(tools) if isinstance(tools, Mapping) else {}

    def _max_value_chars(self) -> int | None:
        value = self._profile.settings.observability.max_value_chars
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def _open(self) -> ScopePlugin:
        engine = self._profile.engine
        memory_tools = self._memory_tools()
        max_chars = self._max_value_chars()
        borrowed = pipeline_scope_plugin(engine)
        if borrowed is not None and dict(borrowed.memory_tools or {}) == memory_tools \
                and (max_chars is None or borrowed.max_value_chars == max_chars):
            claims = SessionClaims()
            self._claims_name = engine.add_plugin(claims.hookimpls(), name=f"hermes.profile.sessions.{id(self):x}")
            self._claims, self.scope_plugin, self.borrowed = claims, borrowed, True
            return borrowed
        from ..export.scope_hooks import ScopePlugin  # imported when the first consumer attaches (import cost)

        plugin = ScopePlugin(deferred=True, max_queue_size=SHARED_QUEUE_SIZE, memory_tools=memory_tools,
                             max_value_chars=max_chars,
                             max_queue_bytes=self._profile.settings.observability.max_queue_bytes)
        self._plugin_name = engine.add_plugin(plugin, name=f"hermes.profile.stream.{id(self):x}")
        self.scope_plugin, self.borrowed = plugin, False
        return plugin

    def _filtered(self, listener: Listener) -> Listener:
        from ..export.scopes import SESSION_KEY

        assert self._claims is not None
        sessions = self._claims.sessions
        only_profile = self._is_only_profile

        def deliver(event: Any) -> None:
            session_id = event.metadata.get(SESSION_KEY)
            if session_id in sessions or (not session_id and only_profile()):
                listener(event)

        deliver.__qualname__ = getattr(listener, "__qualname__", type(listener).__qualname__)
        return deliver

    def add_listener(self, listener: Listener, *, facts: bool = False, content: bool = True) -> None:
        """Deliver every later event of this profile to ``listener`` (a consumer's sink); with ``facts`` also the
        scope tracker's first-party notices, and ``content=False`` when it never reads content payloads
        (``ScopeTracker.add_listener``: shared metrics)."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"profile {self._profile.home} is closed")
            plugin = self.scope_plugin if self.scope_plugin is not None else self._open()
            registered = self._filtered(listener) if self.borrowed else listener
            self._listeners[id(listener)] = (listener, registered)
            plugin.add_listener(registered, facts=facts, content=content)

    def remove_listener(self, listener: Listener) -> None:
        """Stop delivering to ``listener``; the last one out removes an own scope plugin (the hooks then cost
        nothing until a consumer attaches again). The pipeline's stays listened to with the profile's session
        claims until the profile closes, so a consumer restarted on it still knows the sessions already open."""
        with self._lock:
            entry = self._listeners.pop(id(listener), None)
            if entry is None or self.scope_plugin is None:
                return
            self.scope_plugin.remove_listener(entry[1])
            if not self._listeners and not self._closed and not self.borrowed:
                self._release(CLOSE_DEADLINE)

    def listeners(self) -> int:
        """How many consumers listen."""
        return len(self._listeners)

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier: every hook received before the call has become scope events handed to the consumers."""
        plugin = self.scope_plugin
        if plugin is None or plugin.closed:
            return True
        return bool(plugin.flush(timeout))

    def publication_stats(self) -> dict[str, int]:
        """The scope plugin's queue counters (the pipeline's when borrowed)."""
        plugin = self.scope_plugin
        return dict(plugin.publication_stats()) if plugin is not None else {"pipeline.events_dropped": 0}

    def _release(self, deadline: float) -> bool:
        engine = self._profile.engine
        plugin, self.scope_plugin = self.scope_plugin, None
        assert plugin is not None
        ok = True
        try:
            if self.borrowed:
                ok = bool(plugin.flush(deadline))
                for _, registered in self._listeners.values():
                    plugin.remove_listener(registered)
                if self._claims_name is not None:
                    engine.remove_plugin(self._claims_name)
            else:
                if self._plugin_name is not None:
                    engine.remove_plugin(self._plugin_name)
                ok = bool(plugin.shutdown(deadline))  # open scopes end: consumers write their partial runs
        finally:
            self._plugin_name = self._claims_name = None
            self._claims = None
            self.borrowed = False
        return ok

    def close(self, deadline: float = CLOSE_DEADLINE) -> bool:
        """The profile closes: no hook reaches the consumers any more, what was queued is delivered, and an own
        scope plugin ends its open scopes (``close_reason = "shutdown"``); the consumers detach afterwards."""
        with self._lock:
            if self._closed:
                return True
            self._closed = True
            if self.scope_plugin is None:
                return True
            plugin = self.scope_plugin
            ok = self._release(deadline)
            self.scope_plugin = plugin  # the consumers still detach from it (a no-op now)
            return ok
