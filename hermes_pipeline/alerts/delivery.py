"""Messages, notifier plugins and delivery with retries (spec 06 BOOK-42, BOOK-45).

A notifier is any object with a ``name`` and a ``send(message)`` that raises on failure. The
built-in ones and those of other packages are found in the ``hermes_pipeline.notifiers``
entry-point group; each entry point is a factory ``(settings, environ) -> notifier``. Secrets come
from ``environ`` (the process environment) only.

Delivery is at most once per state change: each send runs under a deadline (connect, request and the
whole answer), on its own thread so that no plugin can hold a run past it. A request that surely did
not go out is retried with backoff within the deadline; one that went out without an answer in time
is *unconfirmed* and never sent again, since a slow endpoint may well have processed it (a copy per
run was the alternative). When every attempt failed the message is reported as not delivered and its
alerts stay pending.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Final, Protocol

from ..config.alert_settings import AlertSettings
from ..engine.scrub import safe_scrub
from ..engine.walk_context import context_entries, context_items

logger = logging.getLogger("hermes_pipeline.alerts")

GROUP: Final = "hermes_pipeline.notifiers"
ATTEMPTS: Final = 3
BACKOFF_S: Final = (1.0, 4.0)
"""Waits before the second and third attempt, within the message's deadline."""
SEND_TIMEOUT_S: Final = 10.0
"""Default deadline of one message to one notifier (``observability.alerts.send_timeout_seconds``)."""


class NotifierError(Exception):
    """A notifier could not deliver, or is not configured."""


@dataclass(frozen=True)
class Message:
    """One notification: ``kind`` is ``alert``, ``batch``, ``resolved``, ``digest`` or ``test``."""

    kind: str
    severity: str
    title: str
    text: str
    items: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def scrubbed(self) -> Message:
        """This message with every string of its title, text and items through the credential scrubber.

        The texts quote store rows (skill names, file paths, error texts) and a notifier plugin may send
        any of them anywhere: :func:`deliver` hands notifiers only the scrubbed message."""
        return Message(safe_scrub(self.kind), safe_scrub(self.severity), safe_scrub(self.title),
                       safe_scrub(self.text), tuple(_scrub_all(item) for item in self.items))

    def as_json(self) -> dict[str, Any]:
        """The JSON body of the webhook notifier."""
        return {"source": "hermes_pipeline", "kind": self.kind, "severity": self.severity, "title": self.title,
                "text": self.text, "alerts": list(self.items)}


def _scrub_all(value: Any) -> Any:
    """``value`` with every string (mapping keys included) scrubbed, each value judged with the context the text
    rules read (its key, a command line's neighbours, a naming sibling: the payload sanitizer's rule,
    :mod:`hermes_pipeline.engine.walk_context`; a token breakdown under a ``*_tokens`` key is walked, not hidden)."""
    if isinstance(value, str):
        return safe_scrub(value)
    if isinstance(value, dict):
        return {(safe_scrub(k) if isinstance(k, str) else k): _scrub_all(v) for k, v in context_entries(value, False)}
    if isinstance(value, (list, tuple)):
        return [_scrub_all(v) for v in context_items(value)]
    return value


class Notifier(Protocol):
    """What a notifier plugin provides."""

    name: str

    def send(self, message: Message) -> None:
        """Deliver ``message`` or raise."""


NotifierFactory = Callable[[AlertSettings, Mapping[str, str]], Notifier]


def available() -> dict[str, NotifierFactory]:
    """The notifier factories of the entry-point group, by name."""
    found: dict[str, NotifierFactory] = {}
    for ep in entry_points(group=GROUP):
        try:
            found[ep.name] = ep.load()
        except Exception as exc:  # a broken plugin is reported, never fatal
            logger.warning("hermes_pipeline: notifier plugin %s cannot be loaded: %s", ep.name, exc,
                           extra={"event": "alerts_notifier_broken"})
    return found


def build(cfg: AlertSettings, environ: Mapping[str, str],
          factories: Mapping[str, NotifierFactory] | None = None) -> tuple[list[Notifier], list[str]]:
    """The configured notifiers, and one problem text per notifier that could not be built."""
    table = available() if factories is None else factories
    built: list[Notifier] = []
    problems: list[str] = []
    for name in cfg.notifiers:
        factory = table.get(name)
        if factory is None:
            problems.append(f"{name}: no such notifier (known: {', '.join(sorted(table)) or 'none'})")
            continue
        try:
            built.append(factory(cfg, environ))
        except NotifierError as exc:
            problems.append(f"{name}: {exc}")
    return built, problems


@dataclass
class Outcome:
    """The result of delivering one message to every notifier."""

    delivered: bool
    errors: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    """Names of the notifiers that accepted the message (or had already, see ``skip``), the unconfirmed included."""
    unconfirmed: list[str] = field(default_factory=list)
    """``name: why`` of the notifiers whose request went out without an answer in time (never sent again)."""


class DeliveryUnknown(NotifierError):
    """The request went out but no answer came back in time (a slow, trickling or black-holing endpoint).

    It may well have been delivered, so it is never sent again: delivery is at most once per state change.
    A notifier plugin raises this (rather than :class:`NotifierError`) once its request may have reached
    the other side.
    """


@dataclass
class SendLimits:
    """What bounds one send: ``deadline`` (``time.monotonic()``) and ``cancel`` (set on SIGTERM).

    :func:`send_limits` hands them to the notifier running on its sending thread (the HTTP notifiers enforce
    them on their socket); ``progress`` is where such a notifier says how far it got (``started``, then
    ``sent`` once the request may have left), so an abandoned send is judged "not sent" or "unconfirmed".
    """

    deadline: float
    cancel: threading.Event | None = None
    progress: dict[str, bool] = field(default_factory=dict)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()


_LIMITS: ContextVar[SendLimits | None] = ContextVar("hermes_alerts_send_limits", default=None)
GRACE_S: Final = 0.5
"""How long past its deadline (or a stop) a send may take to report before it is abandoned."""


def send_limits() -> SendLimits | None:
    """The limits of the send running on this thread (``None`` outside :func:`deliver`)."""
    return _LIMITS.get()


def _send_bounded(notifier: Notifier, message: Message, limits: SendLimits) -> tuple[str, str]:
    """Run one ``send`` on its own thread within ``limits``: ``("ok", "")``, ``("failed", why)`` (it did not
    go out: may be retried) or ``("unconfirmed", why)`` (it may have gone out: never retried)."""
    box: dict[str, BaseException] = {}
    done = threading.Event()

    def run() -> None:
        _LIMITS.set(limits)
        try:
            notifier.send(message)
        except BaseException as exc:  # a plugin's failure, whatever it is, is reported, never raised
            box["exc"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="hermes-alerts-send", daemon=True).start()
    stopped_at: float | None = None
    while not done.is_set():
        now = time.monotonic()
        if limits.cancelled and stopped_at is None:
            stopped_at = now
        end = min(limits.deadline, stopped_at if stopped_at is not None else limits.deadline) + GRACE_S
        if now >= end:
            why = "stopped" if stopped_at is not None else "no answer within the deadline"
            if limits.progress.get("started") and not limits.progress.get("sent"):
                return "failed", f"not sent ({why})"
            return "unconfirmed", f"{why}; the request may have been delivered and is not sent again"
        done.wait(min(end - now, 0.05) if limits.cancel is not None else end - now)
    exc = box.get("exc")
    if exc is None:
        return "ok", ""
    return ("unconfirmed" if isinstance(exc, DeliveryUnknown) else "failed"), str(exc) or type(exc).__name__


def _pause(seconds: float, limits: SendLimits, sleep: Callable[[float], None] | None) -> None:
    seconds = max(0.0, min(seconds, limits.remaining()))
    if sleep is not None:
        sleep(seconds)
    elif limits.cancel is not None:
        limits.cancel.wait(seconds)
    else:
        time.sleep(seconds)


def deliver(message: Message, notifiers: Sequence[Notifier], sleep: Callable[[float], None] | None = None,
            attempts: int = ATTEMPTS, skip: frozenset[str] = frozenset(), *, timeout: float = SEND_TIMEOUT_S,
            deadline: float | None = None, cancel: threading.Event | None = None,
            before_send: Callable[[str], None] | None = None,
            not_sent: Callable[[str], None] | None = None) -> Outcome:
    """Send ``message`` through every notifier, at most once each; never raises.

    The message counts as delivered when every notifier accepted it or took the request without
    answering in time (``unconfirmed``: it may have arrived, so it is not sent again). With none
    configured it is not delivered, so its alerts wait for a notifier instead of being dropped.
    Notifiers named in ``skip`` already took this message in an earlier attempt and are not sent it again.

    Each notifier gets ``timeout`` seconds (connect, send and the whole answer), cut to ``deadline`` (a
    ``time.monotonic()`` value: the run's); a request that surely did not go out (refused connection, an
    HTTP error answer, a plugin's plain exception) is retried with backoff within that time, up to
    ``attempts``. ``before_send(name)`` is called before every request leaves (the caller records the
    attempt there, so that a crash mid-send never leads to a copy; if it raises, nothing is sent) and
    ``not_sent(name)`` after a request that did not go out. ``cancel`` (set on SIGTERM) ends every wait
    at once.
    """
    if not notifiers:
        return Outcome(False, ["no notifier is configured (observability.alerts.notifiers)"])
    message = message.scrubbed()  # the one door every alert body leaves through, whatever the notifier
    outcome = Outcome(True)
    for notifier in notifiers:
        name = str(getattr(notifier, "name", notifier))
        if name in skip:
            outcome.accepted.append(name)
            continue
        until = time.monotonic() + timeout
        limits = SendLimits(until if deadline is None else min(until, deadline), cancel)
        error = ""
        for attempt in range(attempts):
            if limits.cancelled or limits.remaining() <= 0:
                error = error or f"not sent: {'stopped' if limits.cancelled else 'the run deadline passed'}"
                break
            if before_send is not None:
                try:
                    before_send(name)
                except Exception as exc:
                    error = f"not sent: the delivery state could not be recorded ({exc})"
                    break
            limits.progress = {}
            result, why = _send_bounded(notifier, message, limits)
            if result == "ok":
                outcome.accepted.append(name)
                error = ""
                break
            if result == "unconfirmed":
                outcome.accepted.append(name)
                outcome.unconfirmed.append(f"{name}: {why}")
                logger.warning("hermes_pipeline: alert notifier %s: %s", name, why,
                               extra={"event": "alerts_notifier_unconfirmed"})
                error = ""
                break
            error = why
            if not_sent is not None:
                try:
                    not_sent(name)
                except Exception:  # the mark stays: the message will not go to this notifier again (no copy)
                    pass
            if attempt + 1 < attempts:
                _pause(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)], limits, sleep)
        if error:
            outcome.delivered = False
            outcome.errors.append(safe_scrub(f"{name}: {error}"))
            logger.warning("hermes_pipeline: alert notifier %s failed: %s", name, error,
                           extra={"event": "alerts_notifier_failed"})
    return outcome
