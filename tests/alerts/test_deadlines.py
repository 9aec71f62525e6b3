"""Alert delivery against real misbehaving endpoints on 127.0.0.1: slow, trickling, black-holing (spec 06
BOOK-42, BOOK-44, BOOK-45; issue 26 "alerts deliver at most once per state change").

A request that went out is never sent again, whether its answer comes late, trickles, or never comes:
the number of POSTs an endpoint receives equals the number of state changes, over several runs, and
after an evaluator killed mid-send. Every run ends within its configured deadline (the margin is the
configured one plus the delivery's grace), and the daemon stops within 2 s of SIGTERM mid-delivery.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.alerts.delivery import GRACE_S
from hermes_pipeline.alerts.evaluator import run_once
from hermes_pipeline.alerts.notifiers.webhook import WebhookNotifier
from tests.alerts._support import T0, llm, minutes, settings, store


class Endpoint:
    """A loopback HTTP endpoint that reads each request whole, counts its POST, then answers as ``mode``
    says: ``ok`` at once, ``slow`` only after ``answer_after`` seconds, ``trickle`` one byte of its answer
    at a time and never the end, ``blackhole`` never. ``hung_up`` is set when a client closed a
    connection the endpoint was still holding (the sender gave up: EOF seen by the server)."""

    def __init__(self, mode: str, answer_after: float = 30.0) -> None:
        self.mode = mode
        self.answer_after = answer_after
        self.posts: list[Any] = []
        self.posted = threading.Event()
        self.hung_up = threading.Event()
        self._stop = threading.Event()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}/hook"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            while len(body) < length:
                body += conn.recv(65536)
            self.posts.append(json.loads(body))
            self.posted.set()
            if self.mode == "ok":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                return
            if self.mode == "trickle":
                answer = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100000
                conn.settimeout(0.05)
                for byte in answer:
                    try:
                        conn.sendall(bytes([byte]))
                        if conn.recv(1) == b"":  # the sender hung up
                            break
                    except TimeoutError:
                        continue  # still connected: the next byte
                    except OSError:
                        break
                    if self._stop.is_set():
                        return
                self.hung_up.set()
                return
            # slow and blackhole: hold the connection; the sender's hang-up (EOF) ends the wait
            conn.settimeout(self.answer_after if self.mode == "slow" else None)
            try:
                if conn.recv(1) == b"":
                    self.hung_up.set()
                    return
            except TimeoutError:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            except OSError:
                self.hung_up.set()

    def close(self) -> None:
        self._stop.set()
        self._server.close()


@contextmanager
def endpoint(mode: str) -> Iterator[Endpoint]:
    ep = Endpoint(mode)
    try:
        yield ep
    finally:
        ep.close()


def _outage(conn: Any, at: datetime) -> None:
    for i in range(10):
        llm(conn, at - timedelta(seconds=10 - i), status="error", error_type="http_503")


def _timed_run(conn: Any, now: datetime, cfg: Any, notifiers: list[Any]) -> tuple[Any, float]:
    start = time.monotonic()
    report = run_once(conn, now, cfg, notifiers, runner=lambda cmd: "", local=timezone.utc)
    return report, time.monotonic() - start


@pytest.mark.parametrize("mode", ["slow", "trickle", "blackhole"])
def test_a_misbehaving_endpoint_gets_one_post_per_state_change_and_never_holds_a_run(tmp_path: Path,
                                                                                     mode: str) -> None:
    """BOOK-44/45: an endpoint that answers late, trickles or never answers gets exactly one POST per state
    change (alert, then resolved) over several runs; each run ends within the configured deadline."""
    cfg = settings(send_timeout_seconds=0.4, run_timeout_seconds=3.0)
    bound = cfg.run_timeout_seconds + GRACE_S
    conn = store(tmp_path)
    with endpoint(mode) as ep:
        notifier = WebhookNotifier(ep.url)
        _outage(conn, T0)
        for m in range(1, 5):  # one alert, then three runs while it still fires (re-notify after 30 min)
            report, took = _timed_run(conn, T0 + minutes(m), cfg, [notifier])
            assert took <= bound
            if m == 1:
                assert len(report.sent) == 1 and report.sent[0].get("unconfirmed"), report.as_json()
                assert not report.failed
        assert ep.hung_up.wait(10), "the sender never hung up: it would have waited for the answer"
        assert [p["kind"] for p in ep.posts] == ["alert"]
        llm(conn, T0 + minutes(5))  # the outage is over: one "resolved"
        for m in range(6, 9):
            _, took = _timed_run(conn, T0 + minutes(m), cfg, [notifier])
            assert took <= bound
        assert [p["kind"] for p in ep.posts] == ["alert", "resolved"]


def test_a_healthy_endpoint_is_confirmed(tmp_path: Path) -> None:
    """The deadline does not turn a prompt answer into an unconfirmed one."""
    cfg = settings(send_timeout_seconds=5.0)
    conn = store(tmp_path)
    with endpoint("ok") as ep:
        _outage(conn, T0)
        report, _ = _timed_run(conn, T0 + minutes(1), cfg, [WebhookNotifier(ep.url)])
    assert len(report.sent) == 1 and "unconfirmed" not in report.sent[0] and len(ep.posts) == 1


def test_the_run_deadline_cuts_a_longer_send_deadline(tmp_path: Path) -> None:
    """A run's deadline below the message deadline ends the run by the run's deadline."""
    cfg = settings(send_timeout_seconds=60.0, run_timeout_seconds=0.5)
    conn = store(tmp_path)
    with endpoint("blackhole") as ep:
        _outage(conn, T0)
        report, took = _timed_run(conn, T0 + minutes(1), cfg, [WebhookNotifier(ep.url)])
        assert took <= cfg.run_timeout_seconds + GRACE_S
        assert len(ep.posts) == 1 and report.sent[0].get("unconfirmed")


def test_a_refused_connection_is_retried_and_stays_due(tmp_path: Path) -> None:
    """Nothing listening: the request surely did not go out, so it is not delivered and stays due."""
    cfg = settings(send_timeout_seconds=0.5, run_timeout_seconds=2.0)
    conn = store(tmp_path)
    closed = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{closed.getsockname()[1]}/hook"
    closed.close()
    _outage(conn, T0)
    report, _ = _timed_run(conn, T0 + minutes(1), cfg, [WebhookNotifier(url)])
    assert report.failed and not report.sent
    with endpoint("ok") as ep:  # the endpoint is back: the alert goes out once
        report, _ = _timed_run(conn, T0 + minutes(2), cfg, [WebhookNotifier(url.replace(url.split("/")[2],
                                                                                         ep.url.split("/")[2]))])
    assert len(ep.posts) == 1 and report.sent


def _profile(home: Path, send_timeout: float) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "observability:\n  alerts:\n    enabled: true\n    notifiers: [webhook]\n"
        f"    send_timeout_seconds: {send_timeout}\n", encoding="utf-8")


def _cli(home: Path, url: str, *argv: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "HERMES_ALERTS_WEBHOOK_URL": url}
    return subprocess.Popen([sys.executable, "-c", "import sys; from hermes_pipeline.cli.main import main; "
                             "sys.exit(main(sys.argv[1:]))", "alerts", *argv, "--home", str(home)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _after_lease(home: Path, url: str) -> None:
    """An evaluation in this process after the killed run's claim expired (its lease is 10 minutes)."""
    from dataclasses import replace

    from hermes_pipeline.alerts.cli import _settings

    conn = store(home)
    try:
        cfg = replace(_settings(home), send_timeout_seconds=0.5)  # the digest may be due too: no long wait
        run_once(conn, datetime.now(timezone.utc) + minutes(11), cfg, [WebhookNotifier(url)],
                 runner=lambda cmd: "", local=timezone.utc)
    finally:
        conn.close()


def test_an_evaluator_killed_mid_send_never_causes_a_copy(tmp_path: Path) -> None:
    """kill -9 while the request waits for its answer: the next evaluator (after the claim's lease) does not
    send it again — the attempt was recorded before the request left."""
    _profile(tmp_path, 60.0)
    conn = store(tmp_path)
    _outage(conn, datetime.now(timezone.utc))
    conn.close()
    with endpoint("blackhole") as ep:
        proc = _cli(tmp_path, ep.url, "run")
        try:
            assert ep.posted.wait(60), proc.stderr.read() if proc.stderr else ""
        finally:
            proc.kill()
            proc.communicate(timeout=30)
        _after_lease(tmp_path, ep.url)
        assert [p["kind"] for p in ep.posts if p["kind"] != "digest"] == ["alert"]


def test_the_daemon_stops_within_2_s_of_sigterm_mid_delivery(tmp_path: Path) -> None:
    """SIGTERM while a delivery waits on a black hole with a 60 s deadline: the daemon is gone within 2 s,
    and the message it was sending is not sent again afterwards."""
    _profile(tmp_path, 60.0)
    conn = store(tmp_path)
    _outage(conn, datetime.now(timezone.utc))
    conn.close()
    with endpoint("blackhole") as ep:
        proc = _cli(tmp_path, ep.url, "daemon", "--interval", "60")
        try:
            assert ep.posted.wait(60), proc.stderr.read() if proc.stderr else ""
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=30)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert took <= 2.0, f"stopped {took:.2f} s after SIGTERM"
        assert "stopped" in out and "Traceback" not in err
        assert ep.hung_up.wait(10)
        _after_lease(tmp_path, ep.url)
        assert [p["kind"] for p in ep.posts if p["kind"] != "digest"] == ["alert"]
