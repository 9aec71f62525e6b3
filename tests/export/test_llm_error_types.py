"""``error.type`` of a failed provider attempt: the first matching row of FMT-66.

Hermes' own classifier gives every transport failure (a refused connection, a DNS or TLS error) the reason
``timeout``; the error class still names it, so the class decides before the reason: a refused connection is a
``connection_error``, a timeout class or a timeout reason with no transport class a ``timeout``.
"""

from __future__ import annotations

import pytest

from hermes_pipeline.export.classify import llm_error_type


@pytest.mark.parametrize(("reason", "status", "error_class", "expected"), [
    ("timeout", None, "APIConnectionError", "connection_error"),  # Hermes' reason for a refused connection
    ("timeout", None, "ConnectionError", "connection_error"),
    ("timeout", None, "SSLError", "connection_error"),
    ("timeout", None, "APITimeoutError", "timeout"),  # a timeout class (a subclass of the connection error)
    ("timeout", None, "ReadTimeout", "timeout"),
    ("timeout", None, None, "timeout"),
    ("timeout", None, "RuntimeError", "timeout"),
    (None, None, "ConnectTimeout", "timeout"),
    (None, None, "APIConnectionError", "connection_error"),
    ("timeout", 503, "APIConnectionError", "timeout"),  # with a status it was no transport failure
    ("rate_limit", 429, "RateLimitError", "rate_limited"),
    ("auth", 401, "AuthenticationError", "authentication"),
    ("server_error", 503, "InternalServerError", "upstream_error"),
    ("interrupted", None, "APIConnectionError", "cancelled"),
])
def test_fmt_66_the_error_class_names_a_transport_failure_before_the_reason(
        reason: str | None, status: int | None, error_class: str | None, expected: str) -> None:
    """FMT-66: the first matching row, the error class of a transport failure before Hermes' reason."""
    assert llm_error_type(reason, status, error_class) == expected
