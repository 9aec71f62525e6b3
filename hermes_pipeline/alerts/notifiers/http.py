"""A small JSON POST helper shared by the HTTP notifiers."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Final

from ..delivery import NotifierError

TIMEOUT_S: Final = 10.0


def post_json(url: str, body: dict[str, Any], timeout: float = TIMEOUT_S) -> bytes:
    """POST ``body`` as JSON; the response body, or :class:`NotifierError` on any failure or non-2xx."""
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json; charset=utf-8",
                                              "User-Agent": "hermes-pipeline-alerts"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (operator's URL)
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        raise NotifierError(f"HTTP {exc.code} from the endpoint") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise NotifierError(f"cannot reach the endpoint: {getattr(exc, 'reason', exc)}") from None
