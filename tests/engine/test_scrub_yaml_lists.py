"""A value in a YAML list of name/value items held by a credential's key (OBS-58, OBS-59): ``secrets:`` /
``  - name: api`` / ``    value: P``. The item's ``name`` names no credential (``api``, ``stripe``); the key that
holds the list does, so each item's ``value`` is a secret. A list under any other key (``env:``, ``items:``) keeps
a value its item's name does not mark."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

_HOLDERS = ("secrets", "credentials", "api_keys", "passwords", "SECRETS", "auth_tokens")
_NAMES = ("api", "stripe", "db", "openai", "prod", "github")


def _value(r: random.Random) -> str:
    while True:
        s = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(r.randint(12, 24)))
        if any(c.isdigit() for c in s) and any(c.islower() for c in s) and any(c.isupper() for c in s):
            return s


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), holder=st.sampled_from(_HOLDERS), items=st.integers(1, 3),
       indent=st.sampled_from(("", "  ")), comment=st.booleans(), quote=st.sampled_from(("", '"', "'")))
def test_property_obs58_59_each_value_of_a_list_a_credential_key_holds_goes(
        seed: int, holder: str, items: int, indent: str, comment: bool, quote: str) -> None:
    """OBS-58: every item's value goes, the first's and the later ones' (a list at the key's own indentation too, a
    comment between, a field after the value); names, the key and the other fields stay."""
    r = random.Random(seed)
    values = [_value(r) for _ in range(items)]
    lines = [f"{holder}:"] + ([f"{indent}# the prod ones"] if comment else [])
    for k, value in enumerate(values):
        lines += [f"{indent}- name: {_NAMES[k % len(_NAMES)]}", f"{indent}  value: {quote}{value}{quote}",
                  f"{indent}  scope: all"]
    text = "\n".join(lines) + "\n"
    expected = text
    for value in values:
        expected = expected.replace(value, redaction_marker(value))
    assert scrub_text(text) == expected


@pytest.mark.parametrize("text", [
    "env:\n  - name: LOG_LEVEL\n    value: debug\n  - name: REGION\n    value: Xk9mQ2vLp7Rt\n",
    "items:\n  - name: api\n    value: Xk9mQ2vLp7Rt\n",
    "secrets:\n  enabled: true\nitems:\n  - name: api\n    value: Xk9mQ2vLp7Rt\n",
    "config:\n  secrets: 3\n  - name: api\n    value: Xk9mQ2vLp7Rt\n",
])
def test_obs55_a_list_no_credential_key_holds_keeps_its_values(text: str) -> None:
    """OBS-55: a list under ``env:`` or ``items:`` keeps a value its item's name does not mark as a credential's;
    a credential's key that holds no list (``secrets: 3``) is no holder."""
    assert scrub_text(text) == text
