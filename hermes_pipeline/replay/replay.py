"""Replay a recorded run on any host loop: two execution middlewares (spec 06 BOOK-31, BOOK-33).

    replay = Replay(Recording.from_file(path), mode="strict", live_from=None)
    replay.install(engine)            # before the host runs its turn on this engine
    ...                               # run the agent loop (any host: the reference agent, Hermes, yours)
    replay.uninstall()
    replay.steps, replay.divergences, replay.diverged_at_step

- ``llm_execution``: the k-th LLM call is served the k-th recorded call (the run's and its
  subagents' calls in the order they happened), rebuilt in the provider shape of the recorded
  ``api_mode``, without calling ``next_call``. Before serving, the SHA-256 of the canonical request
  history is compared with the recording: a mismatch is a divergence at step k. ``strict`` raises
  :class:`~.errors.ReplayDivergence` (an ``LLMExecutionBlocked``, so the engine never falls back to
  the real provider); ``lenient`` records it and serves the recorded response anyway. A call past
  the end of the recording, or one whose recorded payload the sanitizer truncated, cannot be served
  and always raises.
- ``tool_execution``: served by ``tool_call_id`` from the recorded observations, without calling
  ``next_call``; an unknown id is a divergence (the tool is still not run: the call gets an error
  result, and in strict mode the next LLM call raises). A tool call that delegated to a subagent
  runs (the subagent's own calls are served from the recording); with ``subagents="served"`` it is
  served its recorded result instead and only the top-level run's LLM calls are served (a host such
  as Hermes whose delegation runs in the background, or in another agent instance, cannot be matched
  call by call against the interleaved child calls).
- ``pre_llm_call``: a turn whose user message had plugin context in the recording gets the same
  context again (the demo's hint plugin, say), so the model sees the recorded user content.
- ``live_from=N``: from the N-th LLM call on, calls and the tool calls after them go through to the
  real provider and tools (``next_call``); the recording is then only used for the diff.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..engine.callbacks import TRYFIRST
from ..engine.core import Engine
from .codec import canonical_history, history_of, provider_response, raw_history_hash, request_hash, \
    sanitized_request, scrubbed_history_hash
from ..export.redaction import redact_value
from .errors import ReplayDivergence
from .recording import RecordedCall, Recording

__all__ = ["Divergence", "Mode", "Replay", "ServedStep", "Subagents", "first_difference"]

Mode = Literal["strict", "lenient"]
Subagents = Literal["run", "served"]
PLUGIN: Final = "hermes.replay"


def first_difference(request: Any, call: RecordedCall) -> str:
    """``"; first difference: message i (role)"`` naming where a live request's history (credentials scrubbed,
    nothing cut) leaves the recorded one
    (``""`` when it cannot say), so a user sees at once whether the system prompt, the user message or a tool
    result changed."""
    try:
        key = "input" if call.api_mode == "codex_responses" else "messages"
        body = {key: redact_value(request.get(key))} if isinstance(request, dict) else {}
        live = canonical_history(history_of({"body": body}, call.api_mode))
        recorded = canonical_history(history_of(call.request, call.api_mode))
        if not isinstance(live, list) or not isinstance(recorded, list):
            return ""
        for index in range(max(len(live), len(recorded))):
            a = live[index] if index < len(live) else None
            b = recorded[index] if index < len(recorded) else None
            if a != b:
                role = (b or a or {}).get("role") if isinstance(b or a, dict) else None
                if a is None or b is None:
                    return f"; message {index} ({role}) is only in the {'recording' if a is None else 'new request'}"
                return f"; first difference: message {index} ({role})"
    except Exception:
        return ""
    return ""


@dataclass(frozen=True)
class Divergence:
    """Where and how the replay left the recording."""

    step: int
    """1-based LLM call index (for a tool call: the LLM call that issued it)."""
    reason: str


@dataclass(frozen=True)
class ServedStep:
    """One call the replay answered: ``kind`` ``llm`` or ``tool``, ``source`` ``recorded`` or ``live``."""

    kind: str
    step: int
    source: str
    tool_call_id: str | None = None
    request_sha256: str | None = None


class Replay:
    """Serves a :class:`~.recording.Recording` to a host loop through execution middleware.

    Args:
        recording: the recorded run.
        mode: ``"strict"`` stops at the first divergence, ``"lenient"`` records it and goes on.
        live_from: the 1-based LLM call from which provider and tools are called for real (``None``:
            everything is served from the recording).
        subagents: ``"run"`` lets a delegating tool call run its subagent (whose calls are served in
            recorded order); ``"served"`` serves the delegating call its recorded result and serves only
            the top-level run's LLM calls.
    """

    def __init__(self, recording: Recording, *, mode: Mode = "strict", live_from: int | None = None,
                 subagents: Subagents = "run") -> None:
        if subagents not in ("run", "served"):
            raise ValueError(f"subagents must be 'run' or 'served', not {subagents!r}")
        if mode not in ("strict", "lenient"):
            raise ValueError(f"mode must be 'strict' or 'lenient', not {mode!r}")
        if live_from is not None and live_from < 1:
            raise ValueError("live_from counts LLM calls from 1")
        self.recording = recording
        self.mode: Mode = mode
        self.live_from = live_from
        self.subagents: Subagents = subagents
        self.calls = recording.calls if subagents == "run" else \
            [call for call in recording.calls if call.trajectory_id == recording.trajectory_id]
        """The recorded LLM calls this replay serves, in order."""
        self.steps: list[ServedStep] = []
        self.divergences: list[Divergence] = []
        self._lock = threading.Lock()
        self._count = 0
        self._live = False
        self._stopped: Divergence | None = None
        self._engine: Engine | None = None
        self._name = f"{PLUGIN}.{id(self):x}"
        self._contexts: dict[str, str] = {}

    # ------------------------------------------------------------------ installation

    def install(self, engine: Engine) -> Replay:
        """Register the two middlewares on ``engine``, outermost (before any other execution middleware)."""
        engine.register_middleware("llm_execution", self.llm_execution, plugin=self._name, group=TRYFIRST)
        engine.register_middleware("tool_execution", self.tool_execution, plugin=self._name, group=TRYFIRST)
        self._contexts = self.recording.turn_contexts()
        if self._contexts:
            engine.register_hook("pre_llm_call", self.pre_llm_call, plugin=self._name)
        self._engine = engine
        return self

    def uninstall(self) -> None:
        """Remove the middlewares again (idempotent)."""
        if self._engine is not None:
            self._engine.middleware.remove_where(lambda entry: entry.plugin == self._name)
            self._engine.hooks.remove_where(lambda entry: entry.plugin == self._name)
            self._engine = None

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    # ------------------------------------------------------------------ results

    @property
    def diverged_at_step(self) -> int | None:
        """The first divergence's step, or ``None``."""
        return self.divergences[0].step if self.divergences else None

    @property
    def llm_calls(self) -> int:
        """LLM calls seen so far."""
        return self._count

    def _diverge(self, step: int, reason: str) -> Divergence:
        divergence = Divergence(step, reason)
        self.divergences.append(divergence)
        return divergence

    # ------------------------------------------------------------------ the middlewares

    def pre_llm_call(self, **kwargs: Any) -> dict[str, str] | None:
        """Give a turn the context plugins added to the same user message in the recording."""
        context = self._contexts.get(str(kwargs.get("user_message")))
        return {"context": context} if context else None

    def llm_execution(self, **kwargs: Any) -> Any:
        """Serve the next recorded LLM response, or call through when live (see the module docstring)."""
        with self._lock:
            self._count += 1
            k = self._count
            stopped = self._stopped
            live = self._live = self._live or (self.live_from is not None and k >= self.live_from)
        if stopped is not None:
            raise ReplayDivergence(stopped.step, stopped.reason)
        calls = self.calls
        if live:
            self.steps.append(ServedStep("llm", k, "live"))
            return kwargs["next_call"](None)
        if k > len(calls):
            divergence = self._diverge(k, f"the run made more LLM calls than the {len(calls)} recorded")
            raise ReplayDivergence(k, divergence.reason)
        call = calls[k - 1]
        if call.truncated:
            divergence = self._diverge(k, f"the recorded response of step {call.step_id} was truncated by the "
                                          "sanitizer and cannot be served")
            raise ReplayDivergence(k, divergence.reason)
        request = kwargs.get("request") or {}
        live_hash = raw_history_hash(request, call.api_mode)
        if live_hash != call.request_hash:  # credentials scrubbed, nothing cut (a full recording)
            live_hash = scrubbed_history_hash(request, call.api_mode) or live_hash
        if live_hash != call.request_hash:  # the history as a sanitized recording holds it: cut and scrubbed
            live_hash = request_hash(sanitized_request(request), call.api_mode)
        if live_hash != call.request_hash:
            divergence = self._diverge(k, "the request history differs from the recording "
                                          f"(sha256 {live_hash[:12]} != {call.request_hash[:12]}"
                                          f"{first_difference(request, call)})")
            if self.mode == "strict":
                raise ReplayDivergence(k, divergence.reason)
        self.steps.append(ServedStep("llm", k, "recorded", request_sha256=live_hash))
        return provider_response(call.response, call.api_mode)

    def tool_execution(self, **kwargs: Any) -> Any:
        """Serve the recorded tool result by ``tool_call_id``, or run the tool when live."""
        call_id = kwargs.get("tool_call_id")
        step = self._count
        if self._live:
            self.steps.append(ServedStep("tool", step, "live", tool_call_id=call_id))
            return kwargs["next_call"](None)
        if isinstance(call_id, str) and call_id in self.recording.delegating and self.subagents == "run":
            self.steps.append(ServedStep("tool", step, "recorded", tool_call_id=call_id))
            return kwargs["next_call"](None)  # the subagent runs; its own calls are served
        if isinstance(call_id, str) and call_id in self.recording.tool_results:
            self.steps.append(ServedStep("tool", step, "recorded", tool_call_id=call_id))
            return self.recording.tool_results[call_id]
        reason = f"tool call {call_id!r} ({kwargs.get('tool_name')}) is not in the recording"
        divergence = self._diverge(step, reason)
        if self.mode == "strict":
            with self._lock:
                self._stopped = self._stopped or divergence
        self.steps.append(ServedStep("tool", step, "missing", tool_call_id=call_id))
        return {"error": f"replay: {reason}"}
