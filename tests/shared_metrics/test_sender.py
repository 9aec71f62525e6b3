"""The opt-in sender (SM-70..SM-85, SM-92): httpx.MockTransport unit tests and a real loopback
ingestion server on 127.0.0.1 for every response class."""

from __future__ import annotations

import email.utils
import gzip
import json
import logging
import random
import threading
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_pipeline.shared_metrics import HttpxTransport, ManualClock, MetricsStore
from hermes_pipeline.shared_metrics import packages as pk
from hermes_pipeline.shared_metrics import sender as sd
from hermes_pipeline.shared_metrics import store as st
from hermes_pipeline.shared_metrics.clock import stamp
from hermes_pipeline.shared_metrics.consent import reconcile, windows

from .conftest import T0, Ingest
from .test_packages import add

URL = "https://ingest.example.test/v1/packages"
SENDING = T0 + timedelta(days=1, hours=2)  # 2026-09-02 12:00, after the packaged period ended


def outbox_snapshot(store: MetricsStore) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(store.outbox.glob("*.json"))}


def prepare(home: Path, periods: Sequence[str] = ("2026-09-01",), *, big: bool = False) -> MetricsStore:
    """Consent on since 2026-08-31, one exported package per period."""
    store = MetricsStore(home)
    conn = store.connect()
    reconcile(conn, True, T0 - timedelta(days=1))
    conn.close()
    for index, period in enumerate(periods):
        add(store, period)
        if big:
            for n in range(60):
                add(store, period, "hermes.model_route.count", pk.canonical({"model": f"model-{n:04d}-" + "x" * 40,
                                                                             "provider": "p"}))
        result = pk.package_and_export(store, T0 + timedelta(minutes=index), force=True)
        assert result.error is None and result.exported
    return store


def row(store: MetricsStore, package_id: str | None = None) -> dict[str, Any]:
    conn = store.connect()
    conn.row_factory = lambda c, r: dict(zip([d[0] for d in c.description], r, strict=True))
    query = "SELECT * FROM package_outbox" + (" WHERE package_id = ?" if package_id else " ORDER BY created_at")
    found = conn.execute(query, (package_id,) if package_id else ()).fetchall()
    conn.close()
    return found[0] if package_id else found  # type: ignore[return-value]


class Mock:
    """An httpx.MockTransport handler answering from a list; records every request."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0) if self.replies else 202
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, tuple):
            return httpx.Response(reply[0], headers=reply[1], content=reply[2] if len(reply) > 2 else b"")
        return httpx.Response(reply, content=b'{"ok": true}')


def make_sender(store: MetricsStore, clock: ManualClock, handler: Callable[[httpx.Request], httpx.Response] | None,
                *, consent: Callable[[], Sequence[object]] | None = None, endpoint: str = URL,
                sleeps: list[float] | None = None) -> sd.Sender:
    transport = HttpxTransport(httpx.MockTransport(handler)) if handler is not None else None
    record = sleeps if sleeps is not None else []
    return sd.Sender(store, endpoint=endpoint, consent=consent or (lambda: (True, True, endpoint)), clock=clock,
                     transport=transport, rng=random.Random(7), sleep=record.append)


@pytest.fixture
def send_clock() -> ManualClock:
    return ManualClock(SENDING)


# --------------------------------------------------------------------------- outcomes (SM-80)


def test_sm80_202_marks_sent_and_keeps_the_file(home: Path, send_clock: ManualClock) -> None:
    store = prepare(home)
    files = outbox_snapshot(store)
    mock = Mock(202)
    assert make_sender(store, send_clock, mock).run_pass() == {"sent": 1, "rejected": 0, "deferred": 0}
    (only,) = row(store)
    assert (only["send_state"], only["sent_at"], only["last_error"], only["send_attempts"]) == (
        "sent", stamp(SENDING), None, 1)
    assert only["sent_install_id"] == json.loads(only["payload_json"])["install_id"]
    request = mock.requests[0]
    assert request.method == "POST" and str(request.url) == URL
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"] == "hermes-agent-shared-metrics/1"
    assert json.loads(request.content) == json.loads(only["payload_json"])
    assert outbox_snapshot(store) == files  # SM-83
    assert make_sender(store, send_clock, mock).run_pass() == {"sent": 0, "rejected": 0, "deferred": 0}


@pytest.mark.parametrize("status", [400, 413])
def test_sm80_400_and_413_are_permanent(home: Path, send_clock: ManualClock, status: int) -> None:
    store = prepare(home)
    files = outbox_snapshot(store)
    mock = Mock((status, {}, b"E" * 5000))
    assert make_sender(store, send_clock, mock).run_pass()["rejected"] == 1
    (only,) = row(store)
    assert only["send_state"] == "rejected" and only["last_error"] == f"HTTP {status}: " + "E" * 400
    assert len(mock.requests) == 1
    send_clock.advance(10 * 86_400)
    assert make_sender(store, send_clock, mock).run_pass()["rejected"] == 0 and len(mock.requests) == 1
    assert outbox_snapshot(store) == files


@pytest.mark.parametrize(("header", "seconds"), [
    ("0.2", 1), ("30", 30), ("100000", 86_400), (None, 900), ("soon", 900), ("-5", 1),
    (email.utils.format_datetime(SENDING + timedelta(seconds=120), usegmt=True), 120),
])
def test_sm80_429_defers_by_clamped_retry_after(home: Path, send_clock: ManualClock, header: str | None,
                                                seconds: int) -> None:
    store = prepare(home)
    mock = Mock((429, {"Retry-After": header} if header is not None else {}))
    assert make_sender(store, send_clock, mock).run_pass()["deferred"] == 1
    (only,) = row(store)
    assert (only["send_state"], only["last_error"]) == ("pending", "rate limited")
    assert only["next_attempt_at"] == stamp(SENDING + timedelta(seconds=seconds))
    assert len(mock.requests) == 1
    assert make_sender(store, send_clock, mock).run_pass() == {"sent": 0, "rejected": 0, "deferred": 0}
    send_clock.advance(seconds)
    assert make_sender(store, send_clock, mock).run_pass()["sent"] == 1


@pytest.mark.parametrize("status", [500, 502, 503, 401, 403, 404, 422, 200])
def test_sm80_sm81_other_statuses_retry_three_times_then_defer_900s(home: Path, send_clock: ManualClock,
                                                                    status: int) -> None:
    """SM-80 / SM-81: Other statuses retry three times then defer 900s."""
    store = prepare(home)
    sleeps: list[float] = []
    mock = Mock(status, status, status)
    assert make_sender(store, send_clock, mock, sleeps=sleeps).run_pass()["deferred"] == 1
    assert len(mock.requests) == 3
    assert len(sleeps) == 2 and 0 <= sleeps[0] <= 1 and 0 <= sleeps[1] <= 5  # full jitter, ceilings 1 s then 5 s
    (only,) = row(store)
    assert (only["send_state"], only["last_error"], only["send_attempts"]) == ("pending", f"HTTP {status}", 1)
    assert only["next_attempt_at"] == stamp(SENDING + timedelta(seconds=900))


def test_sm81_a_retry_that_succeeds_is_sent(home: Path, send_clock: ManualClock) -> None:
    """SM-81: A retry that succeeds is sent."""
    store = prepare(home)
    mock = Mock(503, 202)
    assert make_sender(store, send_clock, mock).run_pass()["sent"] == 1
    assert len(mock.requests) == 2


def test_sm80_transport_failure_offline(home: Path, send_clock: ManualClock) -> None:
    store = prepare(home)
    mock = Mock(*[httpx.ConnectError("connection refused")] * 3)
    assert make_sender(store, send_clock, mock).run_pass()["deferred"] == 1
    (only,) = row(store)
    assert only["last_error"] == "ConnectError: connection refused"
    assert only["next_attempt_at"] == stamp(SENDING + timedelta(seconds=900))


def test_sm73_a_pass_never_raises(home: Path, send_clock: ManualClock) -> None:
    """SM-73: A pass never raises."""
    store = prepare(home)
    mock = Mock(*[ValueError("weird transport bug")] * 3)
    assert make_sender(store, send_clock, mock).run_pass()["deferred"] == 1
    conn = store.connect()
    conn.execute("DROP TABLE package_outbox")
    conn.close()
    assert make_sender(store, send_clock, Mock()).run_pass() == {"sent": 0, "rejected": 0, "deferred": 0}


# --------------------------------------------------------------------------- wire body (SM-78, SM-79, SM-85)


@pytest.mark.parametrize("big", [False, True])
def test_sm78_sm79_resends_are_byte_identical_with_frozen_install_id(home: Path, send_clock: ManualClock,
                                                                     big: bool) -> None:
    store = prepare(home, big=big)
    mock = Mock(503, 503, 503, 202)
    make_sender(store, send_clock, mock).run_pass()
    conn = store.connect()
    with st.transaction(conn):  # even a changed identity in the store does not alter the frozen wire body
        conn.execute("UPDATE telemetry_state SET value = '00000000-0000-4000-8000-000000000000' "
                     "WHERE key = 'install_id'")
    conn.close()
    send_clock.advance(901)
    assert make_sender(store, send_clock, mock).run_pass()["sent"] == 1
    bodies = [r.content for r in mock.requests]
    assert len(bodies) == 4 and len(set(bodies)) == 1
    (only,) = row(store)
    if big:
        assert mock.requests[0].headers["content-encoding"] == "gzip"
        assert bodies[0][4:8] == b"\0\0\0\0"  # gzip header mtime 0
        text = gzip.decompress(bodies[0])
    else:
        assert "content-encoding" not in mock.requests[0].headers
        text = bodies[0]
    assert len(text) > sd.GZIP_ABOVE if big else len(text) <= sd.GZIP_ABOVE
    payload = json.loads(only["payload_json"])
    assert text == json.dumps(payload, indent=2, sort_keys=True).encode()
    assert json.loads(text)["install_id"] == only["sent_install_id"] == payload["install_id"]


# --------------------------------------------------------------------------- claims (SM-75..SM-77, SM-82)


def test_sm77_a_lapsed_claim_never_posts(home: Path, send_clock: ManualClock) -> None:
    store = prepare(home)
    mock = Mock(202)

    class Superseded(sd.Sender):
        def _claim(self, conn: Any, handled: list[str]) -> Any:
            claim = super()._claim(conn, handled)
            if isinstance(claim, sd.Claim):
                conn.execute("UPDATE package_outbox SET claim_token = 'someone-else'")
            return claim

    sender = Superseded(store, endpoint=URL, consent=lambda: (True, True, URL), clock=send_clock,
                        transport=HttpxTransport(httpx.MockTransport(mock)), sleep=lambda s: None)
    assert sender.run_pass()["deferred"] == 1
    assert mock.requests == []
    assert row(store)[0]["claim_token"] == "someone-else"


def test_sm77_an_expired_lease_never_posts(home: Path, send_clock: ManualClock) -> None:
    store = prepare(home)
    mock = Mock(202)

    class Slow(sd.Sender):
        def _claim(self, conn: Any, handled: list[str]) -> Any:
            claim = super()._claim(conn, handled)
            send_clock.advance(301)  # the 300 s lease ran out before the POST
            return claim

    sender = Slow(store, endpoint=URL, consent=lambda: (True, True, URL), clock=send_clock,
                  transport=HttpxTransport(httpx.MockTransport(mock)), sleep=lambda s: None)
    assert sender.run_pass()["deferred"] == 1 and mock.requests == []


def test_sm77_a_lapsed_claimant_cannot_overwrite_a_newer_outcome(home: Path, send_clock: ManualClock) -> None:
    store = prepare(home)

    def handler(request: httpx.Request) -> httpx.Response:
        conn = store.connect()  # meanwhile another process took the package over
        conn.execute("UPDATE package_outbox SET claim_token = 'newer', send_state = 'pending'")
        conn.close()
        return httpx.Response(202)

    make_sender(store, send_clock, handler).run_pass()
    (only,) = row(store)
    assert (only["send_state"], only["claim_token"], only["sent_at"]) == ("pending", "newer", None)


def test_sm82_rows_with_25_claims_are_abandoned(home: Path, send_clock: ManualClock) -> None:
    store = prepare(home)
    conn = store.connect()
    conn.execute("UPDATE package_outbox SET send_attempts = 25")
    conn.close()
    mock = Mock()
    assert make_sender(store, send_clock, mock).run_pass()["sent"] == 0 and mock.requests == []
    assert outbox_snapshot(store)


def test_sm76_an_unusable_row_is_rejected_and_the_pass_continues(home: Path, send_clock: ManualClock) -> None:
    """SM-76: An unusable row is rejected and the pass continues."""
    store = prepare(home, ("2026-09-01", "2026-09-01"))
    first = row(store)[0]
    conn = store.connect()
    conn.execute("UPDATE package_outbox SET payload_json = '{\"install_id\": \"\"}' WHERE package_id = ?",
                 (first["package_id"],))
    conn.close()
    mock = Mock()
    assert make_sender(store, send_clock, mock).run_pass() == {"sent": 1, "rejected": 1, "deferred": 0}
    broken = row(store, first["package_id"])
    assert broken["send_state"] == "rejected" and "install_id" in broken["last_error"]


def test_sm72_at_most_20_packages_per_pass(home: Path, send_clock: ManualClock) -> None:
    """SM-72: At most 20 packages per pass."""
    store = prepare(home, ["2026-09-01"] * 23)
    mock = Mock()
    assert make_sender(store, send_clock, mock).run_pass()["sent"] == 20
    assert make_sender(store, send_clock, mock).run_pass()["sent"] == 3


# --------------------------------------------------------------------------- consent (SM-70..SM-74, SM-88)


def test_sm72_revocation_mid_pass_stops_after_the_current_package(home: Path, send_clock: ManualClock) -> None:
    """SM-72: Revocation mid pass stops after the current package."""
    store = prepare(home, ["2026-09-01"] * 3)
    answers = iter([(True, True, URL)] * 2)  # the heartbeat at pass start, the check before the first package

    def consent() -> tuple[bool, bool, str]:
        return next(answers, (True, False, URL))

    mock = Mock()
    assert make_sender(store, send_clock, mock, consent=consent).run_pass()["sent"] == 1
    assert len(mock.requests) == 1
    (window,) = windows(store.connect())
    assert window.closed_at is not None  # the reconciler ran with send = false
    assert [r["send_state"] for r in row(store)].count(None) == 2


@pytest.mark.parametrize("answer", [(True, True, "https://other.example/"), (False, True, URL), (True, False, URL)])
def test_sm72_consent_is_rechecked_before_every_package(home: Path, send_clock: ManualClock,
                                                        answer: tuple[bool, bool, str]) -> None:
    """SM-72: Consent is rechecked before every package."""
    store = prepare(home)
    mock = Mock()
    assert make_sender(store, send_clock, mock, consent=lambda: answer).run_pass()["sent"] == 0
    assert mock.requests == []


def test_sm72_a_consent_read_that_raises_fails_closed(home: Path, send_clock: ManualClock) -> None:
    """SM-72: A consent read that raises fails closed."""
    store = prepare(home)

    def broken() -> tuple[bool, bool]:
        raise OSError("config unreadable")

    mock = Mock()
    assert make_sender(store, send_clock, mock, consent=broken).run_pass()["sent"] == 0
    assert mock.requests == [] and windows(store.connect())[0].closed_at is not None


def test_sm88_sm92_head_and_tail_of_one_period_are_gated_together(home: Path) -> None:
    clock = ManualClock(T0 + timedelta(hours=3))  # still inside the period: not confirmed past its end
    store = prepare(home, ["2026-09-01", "2026-09-01"])
    mock = Mock()
    assert make_sender(store, clock, mock).run_pass()["sent"] == 0
    clock.set(SENDING)  # this pass's heartbeat confirms consent past period_end
    assert make_sender(store, clock, mock).run_pass()["sent"] == 2


def test_sm90_sm92_re_enabling_does_not_release_the_gap(home: Path, send_clock: ManualClock) -> None:
    """SM-90 / SM-92: Re enabling does not release the gap."""
    store = prepare(home)
    conn = store.connect()
    reconcile(conn, True, T0 + timedelta(days=1))
    reconcile(conn, False, T0 + timedelta(days=1, hours=1))
    conn.close()
    add(store, "2026-09-03")
    gap = pk.package_and_export(store, T0 + timedelta(days=3), force=True).exported
    send_clock.set(T0 + timedelta(days=5))
    mock = Mock()
    assert make_sender(store, send_clock, mock).run_pass()["sent"] == 1  # the backlog of the first window
    send_clock.set(T0 + timedelta(days=6))
    assert make_sender(store, send_clock, mock).run_pass()["sent"] == 0
    assert row(store, gap[0])["send_state"] is None


def test_sm74_endpoint_must_be_https_or_loopback_http(home: Path, send_clock: ManualClock,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    assert sd.endpoint_problem("https://ingest.example/v1") is None
    for ok in ("http://127.0.0.1:8080/x", "http://localhost/x", "http://[::1]:9/x"):
        assert sd.endpoint_problem(ok) is None, ok
    for bad in ("http://ingest.example/v1", "ftp://x", "", None, "https://", "http://10.0.0.1/"):
        assert sd.endpoint_problem(bad) is not None, bad
    store = prepare(home)
    mock = Mock()
    with caplog.at_level(logging.ERROR, logger="hermes_pipeline.shared_metrics"):
        sender = make_sender(store, send_clock, mock, endpoint="http://ingest.example/v1")
    assert not sender.usable and sender.run_pass()["sent"] == 0 and mock.requests == []
    assert any("https" in r.message for r in caplog.records if r.levelno == logging.ERROR)


def test_sm70_sm11_send_without_enabled_sends_nothing(home: Path, send_clock: ManualClock,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    store = prepare(home)
    sd._warned.discard("send-without-enabled")
    mock = Mock()
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.shared_metrics"):
        assert make_sender(store, send_clock, mock, consent=lambda: (False, True, URL)).run_pass()["sent"] == 0
        make_sender(store, send_clock, mock, consent=lambda: (False, True, URL)).run_pass()
    assert mock.requests == []
    assert sum("send is true but enabled is not" in r.message for r in caplog.records) == 1


# --------------------------------------------------------------------------- a real loopback ingestion server


@pytest.mark.parametrize(("status", "state", "requests"), [
    (202, "sent", 1), (400, "rejected", 1), (413, "rejected", 1), (429, "pending", 1), (500, "pending", 3),
    (503, "pending", 3), (401, "pending", 3), (403, "pending", 3), (404, "pending", 3), (422, "pending", 3),
])
def test_sm92_loopback_ingestion_server_every_response_code(home: Path, send_clock: ManualClock, ingest: Ingest,
                                                            status: int, state: str, requests: int) -> None:
    store = prepare(home, big=status == 202)
    files = outbox_snapshot(store)
    ingest.default = (status, {"Retry-After": "60"} if status == 429 else {}, b'{"error": "scripted"}')
    sender = sd.Sender(store, endpoint=ingest.url, consent=lambda: (True, True, ingest.url), clock=send_clock,
                       sleep=lambda s: None)  # the real httpx transport over the network stack
    sender.run_pass()
    assert len(ingest.received) == requests
    (only,) = row(store)
    assert only["send_state"] == state
    received = ingest.received[0]
    assert received.headers["user-agent"] == "hermes-agent-shared-metrics/1"
    assert received.json == json.loads(only["payload_json"])
    if status == 202:
        assert received.headers["content-encoding"] == "gzip"
    if status == 429:
        assert only["next_attempt_at"] == stamp(SENDING + timedelta(seconds=60))
    assert outbox_snapshot(store) == files


def test_sm92_loopback_offline_endpoint_defers(home: Path, send_clock: ManualClock) -> None:
    import socket

    with socket.socket() as probe:  # a port with nobody listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1/packages"
    store = prepare(home)
    sender = sd.Sender(store, endpoint=url, consent=lambda: (True, True, url), clock=send_clock, sleep=lambda s: None)
    assert sender.run_pass()["deferred"] == 1
    assert row(store)[0]["last_error"].startswith("ConnectError")


def test_sm71_sm89_end_to_end_background_send_after_a_task(tmp_path: Path, ingest: Ingest, clock: ManualClock) -> None:
    """SM-71 / SM-89: Collection and sending on: every task end packages, exports and starts the named send thread.
    Consent opens during day 1, so day 1's period is not inside the window and is never sent; day 2's
    package is sent on day 3, once a heartbeat has confirmed consent past its period."""
    from hermes_pipeline import Engine, Host
    from hermes_pipeline.shared_metrics import attach_shared_metrics

    from .conftest import RESOURCE

    home = tmp_path / "p"
    assert clock.now() == T0  # the fixture's clock: the stream stamps the hooks with it too (conftest.stream_time)
    engine = Engine().child()
    metrics = attach_shared_metrics(engine, home, enabled=True, send=True, endpoint=ingest.url, clock=clock,
                                    consent=lambda: (True, True, ingest.url), resource=RESOURCE)
    assert metrics is not None
    seen: list[str] = []
    original = sd.Sender.run_pass

    def spy(self: sd.Sender) -> dict[str, int]:
        seen.append(threading.current_thread().name)
        return original(self)

    sd.Sender.run_pass = spy  # type: ignore[method-assign]
    try:
        host = Host(engine, platform="cli", model="m", provider="p")
        for _ in range(3):
            with host.session() as session, session.turn("q") as turn:
                turn.complete("ok")
            assert metrics.flush()
            thread = sd.background_thread(metrics.store)
            assert thread is not None
            thread.join(10)
            clock.advance(86_400)
    finally:
        sd.Sender.run_pass = original  # type: ignore[method-assign]
        metrics.close()
    assert seen == [sd.THREAD_NAME] * 3
    assert len(ingest.received) == 1
    (sent,) = [r for r in row(metrics.store) if r["send_state"] == "sent"]
    assert ingest.received[0].json == json.loads(sent["payload_json"])
    assert sent["period_start"] == "2026-09-02T00:00:00.000000Z"
    assert [r["send_state"] for r in row(metrics.store)] == [None, "sent", None]
