"""``webhook``: one JSON POST per message to the URL in ``HERMES_ALERTS_WEBHOOK_URL``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ...config.alert_settings import AlertSettings
from ..delivery import Message, NotifierError
from .http import post_json

URL_ENV: Final = "HERMES_ALERTS_WEBHOOK_URL"


class WebhookNotifier:
    """POSTs :meth:`Message.as_json` to a URL."""

    name = "webhook"

    def __init__(self, url: str) -> None:
        self.url = url

    def send(self, message: Message) -> None:
        """POST the message; :class:`NotifierError` on failure."""
        post_json(self.url, message.as_json())


def webhook_notifier(cfg: AlertSettings, environ: Mapping[str, str]) -> WebhookNotifier:
    """The entry-point factory (the URL may hold a token, so it comes from the environment)."""
    url = environ.get(URL_ENV, "").strip()
    if not url.startswith(("http://", "https://")):
        raise NotifierError(f"set {URL_ENV} to the webhook's http(s) URL")
    return WebhookNotifier(url)
