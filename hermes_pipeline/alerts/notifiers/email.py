"""``email``: SMTP with STARTTLS (``observability.alerts.email_*``; the login, when the server
needs one, from ``HERMES_ALERTS_SMTP_USER`` and ``HERMES_ALERTS_SMTP_PASSWORD``)."""

from __future__ import annotations

import smtplib
import ssl
from collections.abc import Mapping
from email.message import EmailMessage
from typing import Final

from ...config.alert_settings import AlertSettings
from ..delivery import DeliveryUnknown, Message, NotifierError, send_limits

USER_ENV: Final = "HERMES_ALERTS_SMTP_USER"
PASSWORD_ENV: Final = "HERMES_ALERTS_SMTP_PASSWORD"
TIMEOUT_S: Final = 20.0


class EmailNotifier:
    """Sends each message as one plain-text e-mail; refuses a server without STARTTLS."""

    name = "email"

    def __init__(self, host: str, port: int, sender: str, to: tuple[str, ...], user: str | None,
                 password: str | None, context: ssl.SSLContext | None = None) -> None:
        self.host, self.port, self.sender, self.to = host, port, sender, to
        self.user, self.password = user, password
        self.context = context or ssl.create_default_context()

    def send(self, message: Message) -> None:
        """Deliver over SMTP after STARTTLS; :class:`NotifierError` on any failure."""
        mail = EmailMessage()
        mail["Subject"] = f"[hermes {message.severity}] {message.title}"
        mail["From"] = self.sender
        mail["To"] = ", ".join(self.to)
        mail.set_content(message.text)
        limits = send_limits()  # within deliver(): its deadline bounds each wait, and it learns how far we got
        progress = limits.progress if limits is not None else {}
        progress["started"] = True
        timeout = TIMEOUT_S if limits is None else max(min(TIMEOUT_S, limits.remaining()), 0.001)
        try:
            with smtplib.SMTP(self.host, self.port, timeout=timeout) as smtp:
                smtp.ehlo()
                if not smtp.has_extn("starttls"):
                    raise NotifierError(f"{self.host}:{self.port} does not offer STARTTLS; nothing was sent")
                smtp.starttls(context=self.context)
                smtp.ehlo()
                if self.user and self.password:
                    smtp.login(self.user, self.password)
                progress["sent"] = True  # from here the server may have taken it: never sent again
                smtp.send_message(mail)
        except NotifierError:
            raise
        except (smtplib.SMTPException, OSError, ssl.SSLError) as exc:
            if progress.get("sent") and not isinstance(exc, smtplib.SMTPResponseException):
                raise DeliveryUnknown(f"SMTP {self.host}:{self.port}: no answer after the message ({exc})") from None
            raise NotifierError(f"SMTP {self.host}:{self.port}: {exc}") from None


def email_notifier(cfg: AlertSettings, environ: Mapping[str, str]) -> EmailNotifier:
    """The entry-point factory."""
    if not cfg.email_host or not cfg.email_to:
        raise NotifierError("set observability.alerts.email_host and observability.alerts.email_to")
    return EmailNotifier(cfg.email_host, cfg.email_port, cfg.email_from, cfg.email_to,
                         environ.get(USER_ENV) or None, environ.get(PASSWORD_ENV) or None)
