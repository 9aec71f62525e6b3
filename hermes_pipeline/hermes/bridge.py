"""The bridge: Hermes' observer hooks and middleware, forwarded into this engine.

:class:`Bridge` holds a hermes_pipeline profile opened on the Hermes profile directory (the same
``HERMES_HOME``) and the :class:`~.normalise.HermesNormaliser`. :meth:`Bridge.attach` registers one
callback per Hermes hook and one per middleware kind this engine has middleware for, with the
``ctx`` Hermes gives ``register(ctx)``.

- Observer callbacks: normalise, dispatch every resulting event into the profile's engine, and
  return this engine's behaviour-affecting results folded into the one value the Hermes call site
  reads (:mod:`.returns`).
- Request middleware: this engine's ``llm_request`` / ``tool_request`` chain runs on Hermes' copy;
  a change is returned as ``{"request": ...}`` / ``{"args": ...}`` with a trace entry naming the
  bridge, which the normaliser later replaces by this engine's own trace entries.
- Execution middleware: this engine's chain wraps Hermes' ``next_call``; a downstream failure
  reaches this engine's middleware as the original exception and goes back to Hermes in the wrapper
  Hermes raised, so Hermes sees exactly what it would have seen.

Nothing here raises into Hermes: a bridge failure is logged once per hook and the call goes on as
if the bridge were not there (``KeyboardInterrupt`` and the like still propagate).

One-shot mode (``hermes -z``) leaves the process with ``os._exit`` right after its one conversation,
so ``atexit`` never closes the profile. There the conversation's own ``on_session_end`` is the last
hook: the bridge then ends the session as ``hermes chat -q`` does (``on_session_finalize``), ends what
is still open, and calls :attr:`Bridge.on_exit` (the profile close: exporters flushed and shut down,
bounded by their deadlines). Other modes pay one string comparison per hook.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

from ..engine import trace_parent
from ..engine.core import Engine
from .facts import in_oneshot_run
from .normalise import BRIDGE_TRACE_NAME, HermesNormaliser
from .pairing import CHILD_PLATFORM
from .returns import fold

__all__ = ["HERMES_HOOKS", "Bridge", "HermesContext"]

logger: Final = logging.getLogger("hermes_pipeline.hermes")

HERMES_HOOKS: Final = (
    "on_session_start", "on_session_end", "on_session_finalize", "on_session_reset",
    "pre_llm_call", "post_llm_call", "transform_llm_output",
    "pre_api_request", "post_api_request", "api_request_error",
    "pre_tool_call", "post_tool_call", "transform_tool_result", "transform_terminal_output",
    "pre_approval_request", "post_approval_response", "subagent_start", "subagent_stop",
    "pre_verify", "pre_gateway_dispatch", "kanban_task_claimed", "kanban_task_completed", "kanban_task_blocked",
)
"""The observer hooks Hermes Agent 0.19 fires (its ``VALID_HOOKS``) that the bridge forwards."""
_STATEFUL: Final = frozenset({"on_session_start", "on_session_end", "on_session_finalize", "on_session_reset",
                              "pre_llm_call", "pre_api_request", "post_api_request", "api_request_error",
                              "pre_tool_call", "post_tool_call", "pre_approval_request", "post_approval_response",
                              "subagent_start", "subagent_stop", "pre_gateway_dispatch"})
"""Hooks the normaliser must see even when nobody in this engine listens to them."""
_SCHEMA_KEYS: Final = ("telemetry_schema_version", "middleware_schema_version")
_DOWNSTREAM: Final = "_DownstreamExecutionError"


def _gateway_outcome(payload: dict[str, Any], folded: Any) -> dict[str, Any]:
    decision = folded if isinstance(folded, dict) else {}
    return {key: payload.get(key, "") for key in ("platform", "event_type", "session_key", "session_id")} | {
        "action": str(decision.get("action") or "allow"), "reason": decision.get("reason")}


class HermesContext(Protocol):
    """The part of Hermes' ``PluginContext`` the bridge uses."""

    def register_hook(self, hook_name: str, callback: Callable[..., Any]) -> None: ...

    def register_middleware(self, kind: str, callback: Callable[..., Any]) -> None: ...


class Bridge:
    """Forwarding from Hermes into ``engine`` (see the module docstring).

    Args:
        engine: the profile's engine (:attr:`hermes_pipeline.profile.Profile.engine`).
        normaliser: the Hermes adapter; a fresh one by default.
    """

    def __init__(self, engine: Engine, normaliser: HermesNormaliser | None = None, *,
                 snapshot: Callable[[dict[str, Any]], Mapping[str, Any] | None] | None = None) -> None:
        self.engine = engine
        self.normaliser = normaliser or HermesNormaliser()
        self.snapshot = snapshot
        """Builds a turn's context snapshot from its ``pre_llm_call`` event (``hermes.context``: the skills,
        memory and persona the turn starts with, by hash), emitted as ``on_context_snapshot`` when someone
        listens (the trajectory store keeps it, so a replay rebuilds that state)."""
        self._failed: set[str] = set()
        self.on_exit: Callable[[], object] | None = None
        """Closes the profile; called (once) when Hermes is about to leave without ``atexit`` (one-shot mode)."""

    # ------------------------------------------------------------------ registration

    def hooks_to_register(self) -> list[str]:
        """Every Hermes hook someone in this engine listens to, plus those the normaliser needs.

        Nothing at all when this engine has no observer and no middleware: then Hermes runs exactly
        as without the bridge.
        """
        if not self.engine.hooks.mapping and not self.engine.middleware.mapping:
            return []
        return [h for h in HERMES_HOOKS if h in _STATEFUL or self.engine.has_hook(h)]

    def middleware_to_register(self) -> list[str]:
        """The middleware kinds this engine has callbacks for."""
        return [k for k in ("llm_request", "tool_request", "llm_execution", "tool_execution")
                if self.engine.has_middleware(k)]

    def attach(self, ctx: HermesContext) -> list[str]:
        """Register the bridge's callbacks with Hermes; returns what was registered."""
        names = []
        for hook in self.hooks_to_register():
            ctx.register_hook(hook, self.observer(hook))
            names.append(hook)
        return names + self.attach_middleware(ctx)

    def attach_middleware(self, ctx: HermesContext) -> list[str]:
        """Register only the middleware callbacks (the observer hooks are already registered)."""
        names = []
        for kind in self.middleware_to_register():
            ctx.register_middleware(kind, self.middleware(kind))
            names.append(f"middleware:{kind}")
        return names

    def _fail(self, where: str, exc: Exception) -> None:
        key = f"{where}:{type(exc).__name__}"
        if key in self._failed:
            logger.debug("hermes_pipeline bridge: %s failed again: %r", where, exc)
            return
        self._failed.add(key)
        logger.warning("hermes_pipeline bridge: %s failed (%s: %s); Hermes continues without it",
                       where, type(exc).__name__, str(exc)[:200])

    # ------------------------------------------------------------------ observer hooks

    def dispatch(self, hook: str, payload: dict[str, Any]) -> Any:
        """Normalise one Hermes call, dispatch the resulting events, fold the results for Hermes."""
        results: list[Any] = []
        engine = self.engine
        for name, event in self.normaliser.adapt(hook, payload):
            if name == "pre_llm_call" and trace_parent.enabled():  # the turn joins Hermes' active OTel span
                trace_parent.turn_started(str(event.get("session_id") or ""), str(event.get("turn_id") or ""))
            if engine.has_hook(name):
                out = engine.dispatch(name, event)
                if name == hook and event is payload:
                    results = out
            if name == "pre_llm_call" and self.snapshot is not None and engine.has_hook("on_context_snapshot"):
                self._context_snapshot(event)
        folded = fold(hook, results)
        if hook == "pre_gateway_dispatch" and engine.has_hook("post_gateway_dispatch"):
            engine.dispatch("post_gateway_dispatch", _gateway_outcome(payload, folded))
        return folded

    def _context_snapshot(self, event: dict[str, Any]) -> None:
        """Emit the turn's context snapshot (fail-open: a snapshot that fails leaves the turn as it is)."""
        try:
            context = self.snapshot(event) if self.snapshot is not None else None
        except Exception as exc:
            self._fail("context snapshot", exc)
            return
        if context:
            self.engine.dispatch("on_context_snapshot", {
                "session_id": str(event.get("session_id") or ""), "task_id": str(event.get("task_id") or ""),
                "turn_id": str(event.get("turn_id") or ""), "context": dict(context)})

    def forward(self, hook: str, kwargs: dict[str, Any]) -> Any:
        """:meth:`dispatch`, fail-open: a bridge failure is logged once and Hermes gets ``None``."""
        try:
            result = self.dispatch(hook, kwargs)
        except Exception as exc:
            self._fail(hook, exc)
            result = None
        if hook == "on_session_end" and self.on_exit is not None:
            self._finish_before_hard_exit(kwargs)
        return result

    def _finish_before_hard_exit(self, payload: dict[str, Any]) -> None:
        """One-shot mode: the top-level conversation ended and Hermes exits next, skipping ``atexit``."""
        try:
            sid = str(payload.get("session_id") or "")
            if payload.get("platform") == CHILD_PLATFORM or self.normaliser.subagents.is_child(sid):
                return  # a synchronous child's turn inside the conversation
            if not in_oneshot_run():
                return
            on_exit, self.on_exit = self.on_exit, None
            if sid:
                self.dispatch("on_session_finalize", {"session_id": sid, "platform": payload.get("platform") or "cli",
                                                      "reason": "shutdown"})
            self.close("shutdown")
            if on_exit is not None:
                on_exit()
        except Exception as exc:
            self._fail("one-shot exit", exc)

    def observer(self, hook: str) -> Callable[..., Any]:
        """The callback registered with Hermes for observer hook ``hook``."""

        def forward(**kwargs: Any) -> Any:
            return self.forward(hook, kwargs)

        forward.__name__ = f"hermes_pipeline_{hook}"
        return forward

    def close(self, reason: str = "shutdown") -> None:
        """End what Hermes left open (turns, subagents, approvals); call before the profile closes."""
        try:
            for name, event in self.normaliser.close_all(reason):
                if self.engine.has_hook(name):
                    self.engine.dispatch(name, event)
        except Exception as exc:
            self._fail("close", exc)

    # ------------------------------------------------------------------ middleware

    def middleware(self, kind: str) -> Callable[..., Any]:
        """The callback registered with Hermes for middleware ``kind``."""
        handler = {"llm_request": self._llm_request, "tool_request": self._tool_request,
                   "llm_execution": self._llm_execution, "tool_execution": self._tool_execution}[kind]

        def forward(**kwargs: Any) -> Any:
            return handler(kwargs)

        forward.__name__ = f"hermes_pipeline_{kind}"
        return forward

    @staticmethod
    def _context(kwargs: dict[str, Any], *drop: str) -> dict[str, Any]:
        return {k: v for k, v in kwargs.items() if k not in _SCHEMA_KEYS and k not in drop}

    @staticmethod
    def _trace_result(key: str, payload: Any, trace: list[dict[str, str]]) -> dict[str, Any]:
        reasons = [e["reason"] for e in trace if e.get("reason")]
        result: dict[str, Any] = {key: payload, "source": "hermes_pipeline", "name": BRIDGE_TRACE_NAME}
        if reasons:
            result["reason"] = "; ".join(reasons)
        return result

    def _llm_request(self, kwargs: dict[str, Any]) -> Any:
        try:
            request = kwargs.get("request")
            if not isinstance(request, dict):
                return None
            context = self._context(kwargs, "request", "original_request")
            result = self.engine.apply_llm_request_middleware(request, **context)
            if not result.changed:
                return None
            self.normaliser.remember_llm_trace(str(kwargs.get("api_request_id") or ""), list(result.trace))
            return self._trace_result("request", result.payload, result.trace)
        except Exception as exc:
            self._fail("llm_request middleware", exc)
            return None

    def _tool_request(self, kwargs: dict[str, Any]) -> Any:
        try:
            args, tool_name = kwargs.get("args"), kwargs.get("tool_name")
            if not isinstance(args, dict) or not isinstance(tool_name, str):
                return None
            context = self._context(kwargs, "args", "original_args", "tool_name")
            for key, value in self.normaliser.tool_context(str(kwargs.get("session_id") or "")).items():
                context.setdefault(key, value)
            result = self.engine.apply_tool_request_middleware(tool_name, args, **context)
            if not result.changed:
                return None
            self.normaliser.remember_tool_trace(str(kwargs.get("tool_call_id") or ""), list(result.trace))
            return self._trace_result("args", result.payload, result.trace)
        except Exception as exc:
            self._fail("tool_request middleware", exc)
            return None

    def _llm_execution(self, kwargs: dict[str, Any]) -> Any:
        rid = str(kwargs.get("api_request_id") or "")
        return self._execute(kwargs, "request", "original_request",
                             lambda: self.normaliser.llm_trace(rid, kwargs.get("middleware_trace")),
                             lambda payload, terminal, original, trace, context:
                             self.engine.run_llm_execution_middleware(payload, terminal, original_request=original,
                                                                      middleware_trace=trace, **context))

    def _tool_execution(self, kwargs: dict[str, Any]) -> Any:
        call_id = str(kwargs.get("tool_call_id") or "")
        tool_name = str(kwargs.get("tool_name") or "")

        def run(payload: Any, terminal: Any, original: Any, trace: Any, context: dict[str, Any]) -> Any:
            for key, value in self.normaliser.tool_context(str(kwargs.get("session_id") or "")).items():
                context.setdefault(key, value)
            context.pop("tool_name", None)
            return self.engine.run_tool_execution_middleware(tool_name, payload, terminal, original_args=original,
                                                             middleware_trace=trace, **context)

        return self._execute(kwargs, "args", "original_args",
                             lambda: self.normaliser.tool_trace(call_id, kwargs.get("middleware_trace")), run)

    def _execute(self, kwargs: dict[str, Any], key: str, original_key: str, trace: Callable[[], Any],
                 run: Callable[..., Any]) -> Any:
        """Run this engine's execution chain around Hermes' ``next_call`` (see the module docstring)."""
        hermes_next = kwargs.get("next_call")
        if not callable(hermes_next):
            return None
        state: dict[str, Any] = {"called": False, "ok": False}

        def terminal(payload: Any) -> Any:
            state["called"] = True
            try:
                result = hermes_next(payload)
            except Exception as exc:
                original = getattr(exc, "original", None)
                if type(exc).__name__ != _DOWNSTREAM or not isinstance(original, Exception):
                    raise
                state["wrapper"], state["original"] = exc, original
                error = original
            else:
                state["ok"], state["result"] = True, result
                return result
            raise error

        try:
            payload = kwargs.get(key)
            original = kwargs.get(original_key, payload)
            context = self._context(kwargs, key, original_key, "next_call", "middleware_trace")
            return run(payload, terminal, original, trace(), context)
        except Exception as exc:
            if state.get("original") is exc:  # the downstream failure: back to Hermes as Hermes raised it
                raise state["wrapper"]  # noqa: B904 - Hermes unwraps it itself
            if not state["called"]:  # the bridge failed before anything ran: run it as if absent
                self._fail(f"{key} execution middleware", exc)
                return hermes_next(None)
            if state["ok"]:  # it failed after a successful call: keep that result
                self._fail(f"{key} execution middleware", exc)
                return state["result"]
            raise
