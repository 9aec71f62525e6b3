"""Messages, notifier plugins and delivery with retries (spec 06 BOOK-42, BOOK-45).

A notifier is any object with a ``name`` and a ``send(message)`` that raises on failure. The
built-in ones and those of other packages are found in the ``hermes_pipeline.notifiers``
entry-point group; each entry point is a factory ``(settings, environ) -> notifier``. Secrets come
from ``environ`` (the process environment) only. A failing notifier is retried with backoff; when
it still fails the message is reported as not delivered and its alerts stay pending.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Final, Protocol

from ..config.alert_settings import AlertSettings
from ..engine.scrub import safe_scrub

logger = logging.getLogger("hermes_pipeline.alerts")

GROUP: Final = "hermes_pipeline.notifiers"
ATTEMPTS: Final = 3
BACKOFF_S: Final = (1.0, 4.0)
"""Waits before the second and third attempt (critical messages still go out within 60 s)."""


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
    """``value`` with every string (mapping keys included) scrubbed."""
    if isinstance(value, str):
        return safe_scrub(value)
    if isinstance(value, dict):
        return {(safe_scrub(k) if isinstance(k, str) else k): _scrub_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub_all(v) for v in value]
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
    """Names of the notifiers that accepted the message (or had already, see ``skip``)."""


def deliver(message: Message, notifiers: Sequence[Notifier], sleep: Callable[[float], None] = time.sleep,
            attempts: int = ATTEMPTS, skip: frozenset[str] = frozenset()) -> Outcome:
    """Send ``message`` through every notifier, retrying each with backoff; never raises.

    The message counts as delivered only when every notifier accepted it (with none configured it
    is not delivered, so its alerts wait for a notifier instead of being dropped). Notifiers named
    in ``skip`` already accepted this message in an earlier, partly failed attempt and are not sent
    it again.
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
        for attempt in range(attempts):
            try:
                notifier.send(message)
                outcome.accepted.append(name)
                break
            except Exception as exc:  # any failure of a plugin is contained here
                if attempt + 1 < attempts:
                    sleep(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])
                    continue
                outcome.delivered = False
                outcome.errors.append(safe_scrub(f"{getattr(notifier, 'name', notifier)}: {exc}"))
                logger.warning("hermes_pipeline: alert notifier %s failed after %d attempts: %s",
                               getattr(notifier, "name", notifier), attempts, exc,
                               extra={"event": "alerts_notifier_failed"})
    return outcome
