"""A YAML anchor or tag alone on a credential key's line: the value on the next line is the secret (OBS-59)."""

from __future__ import annotations

import pytest

from hermes_pipeline.engine.scrub import MARKER_RE, scrub_text

SECRET = "S3cr3tValue9"


@pytest.mark.parametrize("props", ["&pw", "!!str", "!!str &pw", "&pw !!str", "!secret"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_properties_alone_on_the_line_redact_the_next_line_and_stay(props: str, newline: str) -> None:
    text = f"password: {props}{newline}  {SECRET}{newline}"
    out = scrub_text(text)
    assert SECRET not in out
    assert out.startswith(f"password: {props}{newline}  ")  # the anchor or tag is kept, not taken for the value
    assert MARKER_RE.sub("", out) == f"password: {props}{newline}  {newline}"


@pytest.mark.parametrize("props", ["&pw", "!!str"])
def test_properties_before_the_value_on_the_same_line_still_redact_it(props: str) -> None:
    out = scrub_text(f"password: {props} {SECRET}\nother: 1\n")
    assert SECRET not in out
    assert out.startswith(f"password: {props} <redacted:")
    assert out.endswith("\nother: 1\n")
