"""The notifiers of spec 06 BOOK-45 against loopback receivers: webhook and Feishu (an http.server),
e-mail (a small SMTP server on 127.0.0.1 that speaks STARTTLS with a certificate made here)."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import http.server
import ipaddress
import json
import socketserver
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.alerts.delivery import Message, NotifierError, build, deliver
from hermes_pipeline.alerts.notifiers.email import EmailNotifier, email_notifier
from hermes_pipeline.alerts.notifiers.feishu import FeishuNotifier, feishu_notifier, feishu_sign
from hermes_pipeline.alerts.notifiers.webhook import webhook_notifier
from tests.alerts._support import no_sleep, settings

MESSAGE = Message("alert", "critical", "A-C3 LLM outage (llm)", "the last 10 LLM calls all failed",
                  ({"rule": "A-C3", "key": "llm", "severity": "critical", "kind": "alert"},))


@contextmanager
def http_receiver(status: int = 200, reply: dict[str, Any] | None = None) -> Iterator[tuple[str, list[Any]]]:
    """A loopback HTTP server recording each POST's JSON body; stops when the block ends."""
    received: list[Any] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append({"json": json.loads(body), "content_type": self.headers["Content-Type"]})
            data = json.dumps(reply or {}).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def test_book45_webhook_posts_the_alert_as_json() -> None:
    """BOOK-45 webhook: one JSON POST per message, URL from HERMES_ALERTS_WEBHOOK_URL."""
    with http_receiver() as (url, received):
        notifier = webhook_notifier(settings(), {"HERMES_ALERTS_WEBHOOK_URL": url})
        assert deliver(MESSAGE, [notifier], sleep=no_sleep).delivered
    assert received[0]["content_type"].startswith("application/json")
    body = received[0]["json"]
    assert (body["severity"], body["kind"], body["alerts"][0]["rule"]) == ("critical", "alert", "A-C3")


def test_book45_webhook_failure_is_retried_reported_and_not_raised() -> None:
    """BOOK-45: a notifier answering 500 is tried 3 times with backoff and reported; deliver never raises."""
    waits: list[float] = []
    with http_receiver(status=500) as (url, received):
        notifier = webhook_notifier(settings(), {"HERMES_ALERTS_WEBHOOK_URL": url})
        outcome = deliver(MESSAGE, [notifier], sleep=waits.append)
    assert not outcome.delivered and "HTTP 500" in outcome.errors[0]
    assert len(received) == 3 and waits == [1.0, 4.0]


def test_book45_secrets_only_from_the_environment() -> None:
    """BOOK-45: without the environment variable the notifier is not built (and says which variable)."""
    notifiers, problems = build(settings(notifiers=("webhook", "feishu", "nope")), {})
    assert notifiers == []
    assert any("HERMES_ALERTS_WEBHOOK_URL" in p for p in problems)
    assert any("HERMES_ALERTS_FEISHU_URL" in p for p in problems)
    assert any(p.startswith("nope: no such notifier") for p in problems)


def test_book45_feishu_signs_with_timestamp_and_secret() -> None:
    """BOOK-45 feishu: sign = base64(HMAC-SHA256(key = "{timestamp}\\n{secret}", msg = empty))."""
    expected = base64.b64encode(hmac.new(b"1700000000\nsekrit", b"", hashlib.sha256).digest()).decode()
    assert feishu_sign(1700000000, "sekrit") == expected
    with http_receiver(reply={"code": 0, "msg": "success"}) as (url, received):
        notifier = feishu_notifier(settings(), {"HERMES_ALERTS_FEISHU_URL": url, "HERMES_ALERTS_FEISHU_SECRET": "sekrit"})
        notifier.clock = lambda: 1700000000.7
        assert deliver(MESSAGE, [notifier], sleep=no_sleep).delivered
    body = received[0]["json"]
    assert body["timestamp"] == "1700000000" and body["sign"] == expected
    assert body["msg_type"] == "text" and "A-C3" in body["content"]["text"]


def test_book45_feishu_refusal_is_a_failure() -> None:
    """A Feishu answer with a non-zero code (bad signature) is not a delivery."""
    with http_receiver(reply={"code": 19021, "msg": "sign match fail"}) as (url, _):
        outcome = deliver(MESSAGE, [FeishuNotifier(url, "x")], sleep=no_sleep)
    assert not outcome.delivered and "19021" in outcome.errors[0]


def _certificate(tmp: Path) -> tuple[Path, Path]:
    crypto = pytest.importorskip("cryptography")
    del crypto
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@contextmanager
def smtp_receiver(tls: ssl.SSLContext | None) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """A loopback SMTP server: EHLO, STARTTLS (when ``tls``), AUTH PLAIN, MAIL, RCPT, DATA, QUIT."""
    mails: list[dict[str, Any]] = []

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            sock, secure, envelope = self.request, False, {"rcpt": []}
            reader = sock.makefile("rb")

            def say(text: str) -> None:
                sock.sendall(text.encode() + b"\r\n")

            say("220 localhost ESMTP test")
            while True:
                line = reader.readline().decode().rstrip("\r\n")
                verb = line.split(" ", 1)[0].upper()
                if not line:
                    return
                if verb in ("EHLO", "HELO"):
                    say("250-localhost" + ("\r\n250-STARTTLS" if tls and not secure else "")
                        + ("\r\n250-AUTH PLAIN" if secure else "") + "\r\n250 8BITMIME")
                elif verb == "STARTTLS" and tls:
                    say("220 ready for TLS")
                    sock = tls.wrap_socket(sock, server_side=True)
                    reader, secure = sock.makefile("rb"), True
                elif verb == "AUTH":
                    envelope["auth"] = base64.b64decode(line.split()[2]).split(b"\0")[1:]
                    say("235 ok")
                elif verb == "MAIL":
                    envelope["from"], envelope["secure"] = line, secure
                    say("250 ok")
                elif verb == "RCPT":
                    envelope["rcpt"].append(line)
                    say("250 ok")
                elif verb == "DATA":
                    say("354 go")
                    data = b""
                    while not data.endswith(b"\r\n.\r\n"):
                        data += reader.readline()
                    mails.append({**envelope, "data": data.decode()})
                    say("250 queued")
                elif verb == "QUIT":
                    say("221 bye")
                    return
                else:
                    say("250 ok")

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], mails
    finally:
        server.shutdown()
        server.server_close()


def test_book45_email_over_starttls_with_login(tmp_path: Path) -> None:
    """BOOK-45 email: SMTP, STARTTLS before anything else, login from the environment."""
    cert, key = _certificate(tmp_path)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    client_tls = ssl.create_default_context(cafile=str(cert))
    with smtp_receiver(server_tls) as (port, mails):
        cfg = settings(email_host="127.0.0.1", email_port=port, email_to=("ops@example.org",))
        built = email_notifier(cfg, {"HERMES_ALERTS_SMTP_USER": "u", "HERMES_ALERTS_SMTP_PASSWORD": "p"})
        assert isinstance(built, EmailNotifier)
        built.context = client_tls
        assert deliver(MESSAGE, [built], sleep=no_sleep).delivered
    assert len(mails) == 1 and mails[0]["secure"] is True and mails[0]["auth"] == [b"u", b"p"]
    assert "ops@example.org" in mails[0]["rcpt"][0]
    assert "Subject: [hermes critical] A-C3 LLM outage (llm)" in mails[0]["data"]


def test_book45_email_refuses_a_server_without_starttls() -> None:
    """BOOK-45 email: no STARTTLS offered, nothing is sent (no credentials in clear text)."""
    with smtp_receiver(None) as (port, mails):
        notifier = EmailNotifier("127.0.0.1", port, "a@b", ("c@d",), "u", "p")
        with pytest.raises(NotifierError, match="STARTTLS"):
            notifier.send(MESSAGE)
    assert mails == []


def test_email_needs_host_and_recipients() -> None:
    with pytest.raises(NotifierError):
        email_notifier(settings(), {})
