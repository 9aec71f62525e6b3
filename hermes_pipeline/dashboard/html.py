"""The smallest HTML toolkit the views need: escaping, the page frame, tables and formatted values.

Every value reaches the page through :func:`e` (``html.escape`` with quotes), so text from a
message, a skill or a file name is shown as text, never run as markup.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

__all__ = ["e", "error_text", "link", "num", "page", "qlink", "table", "when"]

NAV = (("/", "Today"), ("/sessions", "Sessions"), ("/runs", "Runs"), ("/failures", "Failures"), ("/skills", "Skills"),
       ("/memory", "Memory"))


def e(value: Any) -> str:
    """``value`` as escaped text (``None`` is an empty string)."""
    return "" if value is None else escape(str(value), quote=True)


def link(href: str, text: Any, cls: str = "") -> str:
    """An ``<a>`` to a dashboard path (path segments quoted) or an escaped absolute URL."""
    target = href if href.startswith(("http://", "https://")) else quote(href, safe="/")
    return f'<a href="{e(target)}"{f" class={chr(34)}{e(cls)}{chr(34)}" if cls else ""}>{e(text)}</a>'


def qlink(url: str, text: Any) -> str:
    """An ``<a>`` to a dashboard URL with a query string already encoded (``ListQuery.url``)."""
    return f'<a href="{e(url)}">{e(text)}</a>'


def num(value: Any, digits: int = 0) -> str:
    """A number with thousands separators (``n/a`` when unknown)."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return "n/a"
    return f"{value:,.{digits}f}"


def cost(value: Any) -> str:
    """A USD amount, ``n/a`` when unknown."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "n/a"
    if abs(value) >= 1:
        return f"${value:,.2f}"
    if 0 < abs(value) < 0.00005:  # a real cost is never shown as zero
        return "<$0.0001"
    text = f"{value:.4f}".rstrip("0")  # cents, and fractions of a cent only where there are some
    return "$" + (text + "0" * (2 - len(text.partition(".")[2])))


def when(value: Any) -> str:
    """A timestamp: epoch seconds (Hermes) shown as local time; text (the store, ISO) as given."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(value))
    return "" if value is None else str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "",
          row_classes: Sequence[str] | None = None, empty: str = "nothing yet") -> str:
    """A table of already-escaped cells (headers are escaped here)."""
    body = []
    for i, row in enumerate(rows):
        rc = row_classes[i] if row_classes is not None and i < len(row_classes) and row_classes[i] else ""
        body.append(f"<tr{f' class={chr(34)}{e(rc)}{chr(34)}' if rc else ''}>" +
                    "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    if not body:
        return f'<p class="empty">{e(empty)}</p>'
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    return f'<table{f" class={chr(34)}{e(cls)}{chr(34)}" if cls else ""}><thead><tr>{head}</tr></thead>' \
           f'<tbody>{"".join(body)}</tbody></table>'


def error_text(error_type: Any, message: Any = None, *, limit: int | None = 300) -> str:
    """A failure as the pages show it: its type in bold, then its recorded message (cut to ``limit``
    characters in lists; the whole bounded message on a run page), both escaped. Empty when neither is known."""
    parts = [f'<b class="errtype">{e(error_type)}</b>'] if error_type else []
    if isinstance(message, str) and message.strip():
        text = message.strip()
        if limit is not None and len(text) > limit:
            text = text[:limit - 1] + "…"
        parts.append(f'<span class="errmsg">{e(text)}</span>')
    return ": ".join(parts)


def missing(what: str) -> str:
    """The note a panel shows when its source is absent."""
    return f'<p class="missing">{e(what)}</p>'


def page(title: str, body: str, *, active: str = "", home: str = "") -> str:
    """A whole HTML document: the stylesheet from ``/static/app.css``, the navigation, ``body``."""
    nav = "".join(f'<a href="{href}"{" class=" + chr(34) + "on" + chr(34) if href == active else ""}>{e(text)}</a>'
                  for href, text in NAV)
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{e(title)} · hermes-pipeline dashboard</title>"
            "<link rel=\"stylesheet\" href=\"/static/app.css\">"
            "<link rel=\"icon\" href=\"/static/favicon.svg\" type=\"image/svg+xml\"></head>"
            f"<body><header><span class=\"brand\">hermes-pipeline</span><nav>{nav}</nav>"
            f"<span class=\"home\">{e(home)}</span></header><main><h1>{e(title)}</h1>{body}</main></body></html>")
