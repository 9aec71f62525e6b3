"""The opt-in package sender (spec 05 §12, seed Appendix A).

A pass runs only when ``enabled`` and ``send`` are both true and the endpoint is ``https`` (or
loopback ``http``). It first runs the consent reconciler (the heartbeat), then claims one package
at a time, re-reading consent before each one, and POSTs the byte-identical wire body (install id
frozen in ``sent_install_id`` at the first claim). Outcomes are compare-and-set on the claim
token, so a lapsed claimant can neither transmit nor overwrite. Package files are never touched.
"""

from __future__ import annotations

import email.utils
import gzip
import json
import logging
import random
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final
from urllib.parse import urlsplit

from .clock import Clock, SystemClock, stamp
from .consent import GATE_SQL, reconcile
from .schemas import package_errors
from .store import MetricsStore, StoreBusy, transaction
from .transport import TIMEOUT_S, HttpxTransport, Response, Transport

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")

Consent = Callable[[], Sequence[object]]
"""Re-reads the profile's consent: ``(enabled, send)`` or ``(enabled, send, endpoint)``."""

MAX_PER_PASS: Final = 20
MAX_ATTEMPTS_PER_PASS: Final = 3
MAX_CLAIMS: Final = 25
LEASE: Final = timedelta(seconds=300)
DEFER: Final = timedelta(seconds=900)
GZIP_ABOVE: Final = 4096
USER_AGENT: Final = "hermes-agent-shared-metrics/1"
THREAD_NAME: Final = "hermes-shared-metrics-send"
LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})

_warned: set[str] = set()
_warn_lock = threading.Lock()


def warn_once(key: str, level: int, message: str) -> None:
    """Log ``message`` at ``level`` once per process for ``key`` (SM-11, SM-74)."""
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    logger.log(level, message)


def endpoint_problem(url: object) -> str | None:
    """Why ``url`` may not be used as the endpoint (SM-74); ``None`` when it is acceptable."""
    if not isinstance(url, str) or not url.strip():
        return "no endpoint is configured (telemetry.shared_metrics.endpoint)"
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
    except ValueError:
        return "the endpoint is not a valid URL"
    if parts.scheme == "https" and host:
        return None
    if parts.scheme == "http" and host in LOOPBACK_HOSTS:
        return None
    return "the endpoint must use https (http only on localhost, 127.0.0.1 or ::1)"


def wire_body(payload_json: str, sent_install_id: str) -> tuple[bytes, dict[str, str]]:
    """SM-78/79: the stored payload with the frozen install id, 2-space indent, sorted keys, ASCII,
    gzip (mtime 0) above 4 096 bytes; returns ``(body, headers)``. Deterministic for a package."""
    payload = json.loads(payload_json)
    payload["install_id"] = sent_install_id
    body = json.dumps(payload, indent=2, sort_keys=True).encode("utf-8")
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
    if len(body) > GZIP_ABOVE:
        body = gzip.compress(body, mtime=0)
        headers["Content-Encoding"] = "gzip"
    return body, headers


def retry_after(value: str | None, now: datetime) -> float:
    """SM-80: ``Retry-After`` (delta-seconds or HTTP-date) clamped to [1, 86 400] s; 900 s if absent or bad."""
    if value is None:
        return DEFER.total_seconds()
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return DEFER.total_seconds()
        if when is None:
            return DEFER.total_seconds()
        if when.tzinfo is None:
            when = when.replace(tzinfo=now.tzinfo)
        seconds = (when - now).total_seconds()
    if seconds != seconds:  # NaN
        return DEFER.total_seconds()
    return min(max(seconds, 1.0), 86_400.0)


@dataclass(frozen=True, slots=True)
class Claim:
    """One claimed package (SM-75)."""

    package_id: str
    token: str
    payload_json: str
    sent_install_id: str


class Sender:
    """Sends exported packages of one profile (see the module docstring).

    Args:
        store: the profile's store.
        endpoint: ``telemetry.shared_metrics.endpoint`` as read at pass start.
        consent: re-reads ``(enabled, send[, endpoint])`` from the profile's own file (SM-72).
        clock, transport, rng, sleep: seams for tests (``sleep`` is the retry back-off, SM-81).
    """

    def __init__(self, store: MetricsStore, *, endpoint: str | None, consent: Consent,
                 clock: Clock | None = None, transport: Transport | None = None,
                 rng: random.Random | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.store = store
        self.endpoint = endpoint.strip() if isinstance(endpoint, str) else None
        self.consent = consent
        self.clock = clock or SystemClock()
        self._transport = transport
        self.rng = rng or random.Random()
        self.sleep = sleep
        problem = endpoint_problem(self.endpoint)
        self.usable = problem is None
        if problem is not None and self.endpoint:
            warn_once(f"endpoint:{self.endpoint}", logging.ERROR,
                      f"hermes_pipeline: shared metrics: {problem}; sending is disabled for this process")

    @property
    def transport(self) -> Transport:
        """The transport, created on first use."""
        if self._transport is None:
            self._transport = HttpxTransport()
        return self._transport

    # ------------------------------------------------------------------ consent

    def decision(self) -> bool:
        """Re-read consent: ``enabled`` and ``send`` true, same endpoint, endpoint usable (SM-70, SM-72, SM-74)."""
        try:
            answer = tuple(self.consent())
            enabled, send = answer[0] is True, answer[1] is True
            endpoint = answer[2] if len(answer) > 2 else self.endpoint
        except Exception as exc:
            logger.warning("hermes_pipeline: shared metrics: reading send consent failed: %s", exc)
            return False
        if send and not enabled:
            warn_once("send-without-enabled", logging.WARNING,
                      "hermes_pipeline: telemetry.shared_metrics.send is true but enabled is not; nothing is sent")
            return False
        if enabled and send and not self.endpoint:
            warn_once("no-endpoint", logging.WARNING,
                      "hermes_pipeline: telemetry.shared_metrics.send is true but no endpoint is configured; "
                      "nothing is sent")
        same = (endpoint.strip() if isinstance(endpoint, str) else endpoint) == self.endpoint
        return enabled and send and same and self.usable

    # ------------------------------------------------------------------ the pass

    def run_pass(self) -> dict[str, int]:
        """One bounded pass (SM-71..73); never raises. Returns ``{"sent", "rejected", "deferred"}``."""
        counts = {"sent": 0, "rejected": 0, "deferred": 0}
        try:
            if not self.store.exists() and not self.decision():
                return counts
            conn = self.store.connect()
        except Exception as exc:
            logger.warning("hermes_pipeline: shared metrics: send pass cannot open the store: %s", exc)
            return counts
        try:
            allowed = self.decision()
            reconcile(conn, allowed, self.clock.now())  # the heartbeat: record today's consent decision first (SM-89)
            handled: list[str] = []
            while allowed and len(handled) < MAX_PER_PASS:
                if not self.decision():
                    reconcile(conn, False, self.clock.now())
                    break
                claim = self._claim(conn, handled)
                if claim is None:
                    break
                if isinstance(claim, str):  # an unusable row, rejected while claiming; the pass goes on (SM-76)
                    handled.append(claim)
                    counts["rejected"] += 1
                    continue
                handled.append(claim.package_id)
                counts[self._deliver(conn, claim)] += 1
        except Exception as exc:
            logger.warning("hermes_pipeline: shared metrics: send pass stopped: %s: %s", type(exc).__name__, exc)
        finally:
            conn.close()
        return counts

    def _claim(self, conn: sqlite3.Connection, handled: list[str]) -> Claim | str | None:
        """SM-75/76: claim one eligible row; a row unusable at first claim is rejected (its id returned)."""
        now = self.clock.now()
        token = str(uuid.uuid4())
        with transaction(conn):
            row = conn.execute(f"""
                SELECT package_id, payload_json, sent_install_id FROM package_outbox p
                WHERE exported_at IS NOT NULL
                  AND (send_state IS NULL OR send_state = 'pending')
                  AND (next_attempt_at IS NULL OR next_attempt_at <= ?)
                  AND send_attempts < {MAX_CLAIMS}
                  AND package_id NOT IN (SELECT value FROM json_each(?))
                  AND {GATE_SQL.format(p='p')}
                ORDER BY created_at, package_id LIMIT 1""", (stamp(now), json.dumps(handled))).fetchone()
            if row is None:
                return None
            package_id, payload_json, frozen = row
            if frozen is None:
                problem, frozen = _identity(payload_json)
                if problem is not None:
                    conn.execute("""UPDATE package_outbox SET send_state = 'rejected', last_error = ?,
                                    send_attempts = send_attempts + 1, claim_token = ? WHERE package_id = ?""",
                                 (problem[:500], token, package_id))
                    return str(package_id)
            conn.execute("""UPDATE package_outbox SET send_state = 'pending', send_attempts = send_attempts + 1,
                                   next_attempt_at = ?, claim_token = ?, sent_install_id = ? WHERE package_id = ?""",
                         (stamp(now + LEASE), token, frozen, package_id))
        return Claim(package_id, token, payload_json, frozen)

    def _renew(self, conn: sqlite3.Connection, claim: Claim) -> bool:
        """SM-77: extend the lease only if the claim is still ours and alive."""
        now = self.clock.now()
        with transaction(conn):
            cur = conn.execute("""UPDATE package_outbox SET next_attempt_at = ?
                                  WHERE package_id = ? AND claim_token = ? AND send_state = 'pending'
                                    AND next_attempt_at > ?""",
                               (stamp(now + LEASE), claim.package_id, claim.token, stamp(now)))
            return cur.rowcount == 1

    def _finish(self, conn: sqlite3.Connection, claim: Claim, sets: str, params: tuple[object, ...]) -> bool:
        with transaction(conn):
            cur = conn.execute(f"UPDATE package_outbox SET {sets} WHERE package_id = ? AND claim_token = ? "
                               "AND send_state = 'pending'", (*params, claim.package_id, claim.token))
            return cur.rowcount == 1

    def _deliver(self, conn: sqlite3.Connection, claim: Claim) -> str:
        body, headers = wire_body(claim.payload_json, claim.sent_install_id)
        last_error = "not attempted"
        for attempt in range(1, MAX_ATTEMPTS_PER_PASS + 1):
            if attempt > 1:
                self.sleep(self.rng.uniform(0.0, 5.0 ** (attempt - 2)))
            try:
                if not self._renew(conn, claim):
                    return "deferred"
            except StoreBusy:
                return "deferred"
            try:
                response = self.transport.post(self.endpoint or "", body, headers, TIMEOUT_S)
            except Exception as exc:
                last_error = f"{type(exc).__name__}: {exc}"
                continue
            outcome = self._outcome(conn, claim, response)
            if outcome is not None:
                return outcome
            last_error = f"HTTP {response.status}"
        when = stamp(self.clock.now() + DEFER)
        self._finish(conn, claim, "next_attempt_at = ?, last_error = ?", (when, last_error[:500]))
        return "deferred"

    def _outcome(self, conn: sqlite3.Connection, claim: Claim, response: Response) -> str | None:
        """Settle the claim from the HTTP response (SM-80: sent, rejected or deferred); ``None`` means retryable."""
        now = self.clock.now()
        if response.status == 202:
            self._finish(conn, claim, "send_state = 'sent', sent_at = ?, last_error = NULL, next_attempt_at = NULL",
                         (stamp(now),))
            return "sent"
        if response.status in (400, 413):
            text = response.body.decode("utf-8", errors="replace")[:400]
            self._finish(conn, claim, "send_state = 'rejected', last_error = ?",
                         (f"HTTP {response.status}: {text}"[:500],))
            return "rejected"
        if response.status == 429:
            delay = retry_after(response.headers.get("retry-after"), now)
            self._finish(conn, claim, "next_attempt_at = ?, last_error = 'rate limited'",
                         (stamp(now + timedelta(seconds=delay)),))
            return "deferred"
        return None


def _identity(payload_json: str) -> tuple[str | None, str]:
    """SM-76: the install id to freeze, or why the row is unusable."""
    try:
        payload = json.loads(payload_json)
    except ValueError:
        return "payload_json is not valid JSON", ""
    if not isinstance(payload, dict):
        return "payload_json is not a JSON object", ""
    install_id = payload.get("install_id")
    if not isinstance(install_id, str) or not install_id:
        return "payload has no install_id", ""
    problems = package_errors(payload)
    if problems:
        return "package does not validate: " + "; ".join(problems[:3]), ""
    return None, install_id


_threads: dict[str, threading.Thread] = {}
_threads_lock = threading.Lock()


def start_background_pass(sender: Sender) -> bool:
    """SM-71: start one daemon ``hermes-shared-metrics-send`` thread per store unless one is running."""
    key = str(sender.store.db_path)
    with _threads_lock:
        running = _threads.get(key)
        if running is not None and running.is_alive():
            return False
        thread = threading.Thread(target=sender.run_pass, name=THREAD_NAME, daemon=True)
        _threads[key] = thread
        thread.start()
    return True


def background_thread(store: MetricsStore) -> threading.Thread | None:
    """The send thread of ``store`` started by this process, if any (tests join it)."""
    with _threads_lock:
        return _threads.get(str(store.db_path))
