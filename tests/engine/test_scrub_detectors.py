"""The widened credential detectors of the one scrubber (spec 04 FMT-33a, spec 06 BOOK-36, spec 01 OBS-56..OBS-59).

FMT-33a widens the detector list of 01 §8.2 to the BOOK-36 classes and to ``KEY=VALUE``,
``KEY: VALUE`` and ``--flag VALUE`` shapes for credential-like names; OBS-59 still holds: the
marker never echoes any part of the secret.
"""

from __future__ import annotations

from typing import Any

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine._scrub_support import scaling_ratio
from hermes_pipeline.engine.sanitize import sanitize
from hermes_pipeline.engine.scrub import REDACTED, is_sensitive_key, scrub_text
from hermes_pipeline.testing import unmark


def _unmarked(fn: Any) -> Any:
    """The function with its result's ``<redacted:xxxxxxxx>`` markers written ``<redacted>`` (these tests check
    where redactions are, not which secret each one hides: tests/engine/test_scrub_precision.py does)."""
    return lambda *args, **kwargs: unmark(fn(*args, **kwargs))


scrub_text = _unmarked(scrub_text)

SECRET = "ZX9Q7W3E5R1T8Y2U4I6O0P"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password: {s}", "password: <redacted>"),
        ("PASSWORD:{s}", "PASSWORD:<redacted>"),
        ("Password :  {s} and more", "Password :  <redacted> and more"),
        ('db_password: "{s} x"', 'db_password: "<redacted>"'),
        ("api_key: {s}", "api_key: <redacted>"),
        ("aws_secret_access_key: {s}", "aws_secret_access_key: <redacted>"),
        ("passphrase: {s}", "passphrase: <redacted>"),
        ("token:{s}", "token:<redacted>"),
        ("--password {s}", "--password <redacted>"),
        ("run --db-password '{s} y' now", "run --db-password '<redacted>' now"),
        ("aws configure --aws-secret-access-key {s}", "aws configure --aws-secret-access-key <redacted>"),
        ("cli --api-key\t{s}", "cli --api-key\t<redacted>"),
        ("mysql -u root -p{s} appdb", "mysql -u root -p<redacted> appdb"),
        ("mysqldump -h db -p'{s}' x", "mysqldump -h db -p'<redacted>' x"),
        ("sshpass -p {s} ssh host", "sshpass -p <redacted> ssh host"),
        ("pwd={s}", "pwd=<redacted>"),
        ("pass={s}", "pass=<redacted>"),
        ("DB_PASS={s}", "DB_PASS=<redacted>"),
        ("user.pwd = {s}", "user.pwd = <redacted>"),
        ("PASSPHRASE={s}", "PASSPHRASE=<redacted>"),
        ("aws_access_key={s}", "aws_access_key=<redacted>"),
        ("aws_secret_access_key={s}", "aws_secret_access_key=<redacted>"),
        ('{{"passphrase": "{s}"}}', '{{"passphrase": "<redacted>"}}'),
        ('{{"access_key": "{s}"}}', '{{"access_key": "<redacted>"}}'),
        ('{{"pwd": "{s}"}}', '{{"pwd": "<redacted>"}}'),
        ('{{"aws_secret_access_key": "{s}"}}', '{{"aws_secret_access_key": "<redacted>"}}'),
        # the same shapes inside JSON-encoded text, where the value's quotes are escaped
        ('{{"cmd": "passphrase: \\"{s} x\\""}}', '{{"cmd": "passphrase: \\"<redacted>\\""}}'),
        ('{{"cmd": "PASSWORD=\\"{s} x\\" run"}}', '{{"cmd": "PASSWORD=\\"<redacted>\\" run"}}'),
        ('{{"cmd": "mysql -p\\"{s}\\" db"}}', '{{"cmd": "mysql -p\\"<redacted>\\" db"}}'),
        ('{{"cmd": "x --password \\"{s}\\""}}', '{{"cmd": "x --password \\"<redacted>\\""}}'),
    ],
)
def test_fmt33a_key_value_colon_and_flag_shapes(text: str, expected: str) -> None:
    """FMT-33a: ``KEY: VALUE``, ``--flag VALUE``, ``mysql -pX``, ``pwd=`` / ``pass=`` and the new
    sensitive keys; OBS-59: only the value is replaced and nothing of it is kept."""
    out = scrub_text(text.format(s=SECRET))
    assert out == expected.format(s=SECRET)
    assert SECRET[:4] not in out and SECRET[-4:] not in out


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: bearer abc.def-ghi",  # the scheme rule keeps the word and redacts the credential
        "author: Jane Doe",
        "input_tokens: 52",
        "https://example.com/a:b",
        "find . -name x -print",
        "mkdir -p /tmp/x",
        "bypass=1 compass=north passenger=3",
        "--author Jane --verbose",
        "time 12:30:45",
    ],
)
def test_fmt33a_ordinary_text_is_kept(text: str) -> None:
    """Ordinary text that only looks close to a credential shape is left alone (the scheme rule
    of OBS-57 still applies to ``Authorization: bearer ...``)."""
    out = scrub_text(text)
    if text.startswith("Authorization"):
        assert out == "Authorization: bearer <redacted>"
    else:
        assert out == text


@pytest.mark.parametrize("key", ["passphrase", "access_key", "pwd", "aws_secret_access_key", "AWS-Access-Key",
                                 "ssh_passphrase", "db_pwd", "pass"])
def test_fmt33a_new_sensitive_keys(key: str) -> None:
    """FMT-33a: JSON/dict keys ``passphrase``, ``access_key``, ``pwd``, ``aws_secret_access_key``
    are sensitive (OBS-56: the key is kept, the value becomes exactly ``<redacted>``)."""
    assert is_sensitive_key(key, "v")
    assert sanitize({key: SECRET, "model": "m"}) == {key: REDACTED, "model": "m"}


@pytest.mark.parametrize(
    "template",
    ["pk-lf-{s}", "sk-lf-{s}", "sk-proj-{s}", "gho_{s}", "github_pat_{s}", "xoxp-{s}", "AKIA{s}", "AIza{s}",
     "eyJ{s}.eyJ{s}.{s}", "Bearer {s}", "Basic {s}", "https://deploy:{s}@git.example.com/repo.git",
     "-----BEGIN PRIVATE KEY-----\n{s}\n-----END PRIVATE KEY-----"],
)
def test_book36_detector_classes(template: str) -> None:
    """BOOK-36 classes (API-key prefixes incl. Langfuse ``pk-lf-`` / ``sk-lf-``, JWTs, PEM blocks,
    URL credentials, Bearer/Basic) are recognised in free text; no part of the secret is echoed."""
    out = scrub_text(f"see {template.format(s=SECRET)} there")
    assert SECRET[:4] not in out and SECRET[-4:] not in out
    assert REDACTED in out


CREDENTIAL_FORMS = [
    "password: {s}", "PASSWORD:{s}", "--password {s}", "mysql -uroot -p{s}", "pwd={s}", "pass={s}",
    "aws_secret_access_key={s}", "passphrase: {s}", "--access-key {s}", "pk-lf-{s}", "sk-proj-{s}", "ghp_{s}",
    "xoxb-{s}", "AKIA{s}", "AIza{s}", "eyJ{s}.eyJ{s}.{s}", "Bearer {s}", "postgres://u:{s}@db/x",
    json.dumps({"pwd": "{s}"}), json.dumps({"access_key": "{s}"}),
    json.dumps({"cmd": 'passphrase: "{s}"'}), json.dumps({"cmd": 'PASSWORD="{s}"'}),
]
noise = st.text(alphabet=string.ascii_letters + string.digits + " .,;:\n", max_size=40)


@settings(max_examples=300, deadline=None)
@given(form=st.sampled_from(CREDENTIAL_FORMS),
       secret=st.text(alphabet=string.ascii_uppercase + string.digits, min_size=20, max_size=30),
       before=noise, after=noise)
def test_property_book36_fmt33a_planted_credential_never_survives(form: str, secret: str, before: str,
                                                                    after: str) -> None:
    """Property (BOOK-36, FMT-33a, OBS-59): a planted credential of any widened class, surrounded by
    noise, never survives scrubbing, and scrubbing is idempotent on the result."""
    secret = "ZX" + secret
    text = f"{before} {form.replace('{s}', secret)} {after}"
    out = scrub_text(text)
    assert secret not in out
    assert scrub_text(out) == out


@pytest.mark.parametrize(("unit", "suffix"), [
    ("x=", "token"), ("x:", "token"), ("password:", ""), ("--password ", ""), ("--", "token"), ("mysql -p", ""),
    ("sshpass -p ", ""), (" : ", "pass"),
])
def test_fmt33a_shapes_are_linear_on_adversarial_input(unit: str, suffix: str) -> None:
    """No quadratic scans: before the name was judged first, ``"x=" * 100_000 + "token"`` took about 30 s (each
    '=' matched a value run to the end of the text). Eight times the input must cost about eight times the CPU
    (a ratio of CPU times in the same run; a quadratic scan costs 64 times)."""
    count = max(1, 25_000 // len(unit))
    ratio = scaling_ratio(scrub_text, unit, count, suffix=suffix)
    assert ratio < 24, f"{unit!r} x {count} + {suffix!r}: 8x the input cost {ratio:.1f}x the CPU time"


@pytest.mark.parametrize("padding", [0, 150, 1000, 5000])
def test_fmt33a_key_value_found_whatever_the_colon_density(padding: int) -> None:
    """The ``KEY: VALUE`` rule has two exact pre-checks (a name-hint search of the whole text, or a judgement
    of the name before each ':' when colons are sparse); both find the credential."""
    text = "word " * padding + f"Note: the db password: {SECRET} is old; at 10:15 --token {SECRET} too"
    out = scrub_text(text)
    assert SECRET not in out and out.endswith("password: <redacted> is old; at 10:15 --token <redacted> too")


@pytest.mark.parametrize("unit", ["AKIAQWERTYUIOPASDFGH.", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t/", "ghp_" + "aB3" * 12 + "~"])
def test_fmt33a_glued_keys_are_linear(unit: str) -> None:
    """Keys glued one after another by key characters: each key's span runs to the end of what is glued to it,
    so the scan must not start again from every key (8x the input costs about 8x the CPU, not 64x)."""
    count = max(1, 25_000 // len(unit))
    ratio = scaling_ratio(scrub_text, unit, count)
    assert ratio < 24, f"{unit!r} x {count}: 8x the input cost {ratio:.1f}x the CPU time"
