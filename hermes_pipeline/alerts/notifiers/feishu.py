"""``feishu``: a Feishu (Lark) custom bot webhook, signed when a secret is set.

The URL comes from ``HERMES_ALERTS_FEISHU_URL`` and the optional signing secret from
``HERMES_ALERTS_FEISHU_SECRET``. Feishu's signature check wants ``timestamp`` (Unix seconds, as a
string) and ``sign`` = base64(HMAC-SHA256 keyed with ``"{timestamp}\\n{secret}"`` over an empty
message) in the body; the bot answers HTTP 200 with a non-zero ``code`` when it refuses a message.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from ...config.alert_settings import AlertSettings
from ..delivery import Message, NotifierError
from .http import post_json

URL_ENV: Final = "HERMES_ALERTS_FEISHU_URL"
SECRET_ENV: Final = "HERMES_ALERTS_FEISHU_SECRET"


def feishu_sign(timestamp: int, secret: str) -> str:
    """Feishu's bot signature of ``timestamp`` with ``secret``."""
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode("ascii")


class FeishuNotifier:
    """Sends each message as a Feishu ``text`` message."""

    name = "feishu"

    def __init__(self, url: str, secret: str | None, clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self.secret = secret
        self.clock = clock

    def body(self, message: Message) -> dict[str, Any]:
        """The request body of ``message`` (signed when a secret is set)."""
        body: dict[str, Any] = {"msg_type": "text",
                                "content": {"text": f"[{message.severity}] {message.title}\n{message.text}"}}
        if self.secret:
            timestamp = int(self.clock())
            body = {"timestamp": str(timestamp), "sign": feishu_sign(timestamp, self.secret), **body}
        return body

    def send(self, message: Message) -> None:
        """POST the message; :class:`NotifierError` on a transport failure or a refusal."""
        answer = post_json(self.url, self.body(message))
        try:
            reply = json.loads(answer or b"{}")
        except ValueError:
            return
        code = reply.get("code", reply.get("StatusCode", 0)) if isinstance(reply, dict) else 0
        if code not in (0, None):
            raise NotifierError(f"Feishu refused the message: code {code} {reply.get('msg', '')}".strip())


def feishu_notifier(cfg: AlertSettings, environ: Mapping[str, str]) -> FeishuNotifier:
    """The entry-point factory."""
    url = environ.get(URL_ENV, "").strip()
    if not url.startswith(("http://", "https://")):
        raise NotifierError(f"set {URL_ENV} to the bot's webhook URL")
    return FeishuNotifier(url, environ.get(SECRET_ENV) or None)
