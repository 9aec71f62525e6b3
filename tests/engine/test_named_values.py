"""A mapping's value is judged by its key as the same pair is judged in text (OBS-58, OBS-59, 01 §8.2.4).

``{"db_pass": "Xk9m…"}`` is the pair ``"db_pass": "Xk9m…"`` of its JSON text, which the credential scrubber redacts
(a strong credential name hides its value). The payload sanitizer and the export walk take the mapping itself: they
must hide the same values, with the same marker, and keep the same ones (placeholders, counts, code).
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.sanitize import sanitize
from hermes_pipeline.engine.scrub import MARKER_RE, scrub_text
from hermes_pipeline.export.redaction import redact_value

STRONG_NAMES = ["encryption_key", "db_pass", "pin", "otp", "dsn", "signing_key", "master_key", "license_key",
                "client_key", "app_key", "ssh_key", "private_key_pem", "mfa_code", "totp_seed", "db_password_prod",
                "SigningKey", "smtp-pass", "userPin"]
PLAIN_NAMES = ["name", "path", "author", "keyboard_layout", "count", "model"]
"""(Names under the plural-token rule of §8.2.4 are left out: it hides a string under ``max_tokens`` in a mapping
only, by the spec's own rule.)"""
_SECRETS = st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=12, max_size=40) \
    .filter(lambda s: any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s))
_KEPT = st.sampled_from(["${DB_PASSWORD}", "<YOUR_KEY>", "***", "", "changeme", "null", "true", "none"])
_VALUES = st.one_of(_SECRETS, _KEPT, st.sampled_from(["bob", "hello world", "a.txt"]))
"""Strings: a number under a credential name is a marker in a mapping (a string there), in JSON text a bare marker."""


def _entries(draw_keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(draw_keys), _VALUES, min_size=1, max_size=6)


def _as_text(mapping: dict[str, Any]) -> dict[str, Any]:
    """What scrubbing the mapping's JSON text leaves of it (numbers a marker replaced are strings there)."""
    out: dict[str, Any] = json.loads(scrub_text(json.dumps(mapping)))
    return out


@settings(max_examples=300, deadline=None)
@given(mapping=_entries(STRONG_NAMES + PLAIN_NAMES))
def test_obs_58_a_mapping_hides_what_its_json_text_hides(mapping: dict[str, Any]) -> None:
    """OBS-58/59: under every key, the sanitizer and the export walk keep or hide a value exactly as scrubbing the
    mapping's JSON text does, with the same marker (the keyed hash of the value)."""
    expected = _as_text(mapping)
    for walked in (sanitize(mapping), redact_value(mapping)):
        assert walked == expected


def test_obs_58_the_values_of_strong_credential_names_are_markers_in_every_walk() -> None:
    """OBS-58: the cases of the review, by name; the same secret has the same marker under each name."""
    secret = "Xk9mQ2vLp7Rt"
    mapping = {"encryption_key": secret, "db_pass": secret, "pin": "483920", "otp": 123456, "dsn": secret,
               "signing_key": secret, "max_tokens": 100, "name": "bob", "password": "${DB_PASSWORD}"}
    for walked in (sanitize(mapping), redact_value(mapping), sanitize({"outer": [mapping]})["outer"][0]):
        assert walked["max_tokens"] == 100 and walked["name"] == "bob"
        hidden = {k: v for k, v in walked.items() if isinstance(v, str) and MARKER_RE.fullmatch(v)}
        assert set(hidden) == {"encryption_key", "db_pass", "pin", "otp", "dsn", "signing_key", "password"}
        assert len({walked[k] for k in ("encryption_key", "db_pass", "dsn", "signing_key")}) == 1
        assert secret not in json.dumps(walked) and not re.search(r"483920|123456", json.dumps(walked))
