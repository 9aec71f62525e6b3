"""Every credential shape the scrubber documents is found, in every wrapper (issue #25 deliverable 2; spec 01
OBS-57, OBS-58, spec 04 FMT-33a, spec 06 BOOK-36).

Each published key format of :data:`KEY_FORMATS` (a key generated to the provider's format, fresh per run) and
each shape issue #25 lists (Azure storage ``AccountKey=`` and SAS ``sig=`` inside a full connection string or SAS
URL, Slack app tokens, a password in JSON encoded three times, ``--password X`` after ``=``, a backtick, ``&`` or
a non-ASCII character, ``.postgres://u:PW@``, and the name-keyed shapes) is planted plain, JSON-escaped one to
three times, percent-encoded, bare or in single / double quotes, after any separator. The secret, and every
8-character piece of its generated part, must be gone from the output and from the output decoded back.
``docs/privacy.md`` lists every provider of the table (a test keeps them from drifting apart).
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import scrub_text
from hermes_pipeline.engine.scrub_tokens import KEY_FORMATS

from tests.engine._scrub_support import (B64, KEY_SAMPLES, discord_bot_token, password, rand, unwrap, url_quote,
                                         wrapper)
from tests._repo import REPO

SEPARATORS = (" ", "|", ";", ",", "(", "[", "{", "=", ":", "\t", "\n")
CLOSERS = {"(": ")", "[": "]", "{": "}"}
QUOTES = ("", "'", '"')
WRAPPERS = (("plain", 1), ("json", 1), ("json", 2), ("json", 3), ("doc", 1), ("url", 1))
PROVIDERS = [provider for provider, _, body in KEY_FORMATS if body]


def _pieces(secret: str) -> list[str]:
    return [secret[i:i + 8] for i in range(max(1, len(secret) - 7))]


def _assert_gone(secret: str, context: str, out: str, kind: str, level: int) -> None:
    decoded = unwrap(kind, level, out)
    for text in (out, decoded):
        assert secret not in text, f"{secret!r} kept in {text!r}"
        kept = [p for p in _pieces(secret) if p in text and p not in context]
        assert not kept, f"pieces {kept} of {secret!r} kept in {text!r}"


def _check_everywhere(shape: str, secret: str) -> None:
    """``shape`` (holding ``secret``) after every separator, bare or quoted, in every wrapper: the secret's
    generated part is gone."""
    context = shape.replace(secret, "")
    for sep in SEPARATORS:
        for quote in QUOTES:
            plain = f"word{sep}{quote}{shape}{quote}{CLOSERS.get(sep, '')} next line"
            for kind, level in WRAPPERS:
                encode, left, right = wrapper(kind, level)
                out = scrub_text(left + encode(plain) + right)
                _assert_gone(secret, context + "word next line", out, kind, level)


def _random_part(provider: str, key: str) -> str:
    """The key without its published prefix (a prefix says which provider, it is no secret)."""
    [prefix] = [p for name, p, _ in KEY_FORMATS if name == provider]
    m = re.match(prefix, key)
    assert m is not None, (provider, key)
    return key[m.end():]


def test_fmt33a_every_key_format_has_a_sample() -> None:
    """The recall tests cover the whole table: one generator per provider, none for a provider no longer listed."""
    assert set(KEY_SAMPLES) == set(PROVIDERS)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_book36_every_published_key_format_is_found_everywhere(provider: str) -> None:
    """BOOK-36 / FMT-33a: a key of each published format, generated afresh, is found alone, after any separator,
    in quotes, JSON-escaped 1-3x and percent-encoded."""
    r = random.Random()
    for _ in range(2):
        key = KEY_SAMPLES[provider](r)
        secret = _random_part(provider, key)
        _check_everywhere(key, secret)
        for name_shape in (f"KEY={key}", f"token: {key}", f"Authorization: Bearer {key}"):
            _check_everywhere(name_shape, secret)


def _azure_key(r: random.Random) -> str:
    return rand(r, B64, 86) + "=="


def _sas_sig(r: random.Random) -> str:
    return url_quote(rand(r, B64, 43) + "=")


SHAPES = {
    "azure connection string": lambda r, s: (
        f"DefaultEndpointsProtocol=https;AccountName=acct{r.randint(1, 99)};AccountKey={s};"
        "EndpointSuffix=core.windows.net", _azure_key),
    "azure AccountKey alone": lambda r, s: (f"AccountKey={s}", _azure_key),
    "azure SharedAccessKey": lambda r, s: (
        f"Endpoint=sb://ns{r.randint(1, 9)}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={s}", _azure_key),
    "azure SAS URL": lambda r, s: (
        f"https://acct.blob.core.windows.net/c/report.pdf?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z"
        f"&st=2026-12-01T00:00:00Z&spr=https&sig={s}", _sas_sig),
    "azure SAS connection string": lambda r, s: (
        f"BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig={s}",
        _sas_sig),
    "slack app token": lambda r, s: (f"xapp-1-A{rand(r, '0123456789ABCDEF', 10)}-{r.randint(10**12, 10**13)}-{s}",
                                     lambda r: rand(r, "0123456789abcdef", 64)),
    "password after =": lambda r, s: (f"args=--password {s}", password),
    "password after backtick": lambda r, s: (f"`--password {s}`", password),
    "password after &": lambda r, s: (f"a=1&--password {s}", password),
    "password after non-ASCII": lambda r, s: (f"é--password {s}", password),
    "password after arrow": lambda r, s: (f"→--password {s}", password),
    "password flag with =": lambda r, s: (f"--db-password={s}", password),
    ".postgres userinfo": lambda r, s: (f"sqlalchemy.postgres://app:{s}@db.internal:5432/main", password),
    "jdbc userinfo": lambda r, s: (f"jdbc:postgresql://app:{s}@db.internal/main", password),
    "env assignment": lambda r, s: (f"OPENAI_API_KEY={s}", password),
    "yaml pair": lambda r, s: (f"db_password: {s}", password),
    "json pair": lambda r, s: (f'{{"password": "{s}", "user": "app"}}', password),
    "python pair": lambda r, s: (f"{{'client_secret': '{s}'}}", password),
    "query parameter": lambda r, s: (f"https://api.example.com/v1?access_token={s}&page=2", password),
    "bearer header": lambda r, s: (f"Authorization: Bearer {s}", password),
    "basic header": lambda r, s: (f"Authorization: Basic {s}", lambda r: rand(r, B64, 28) + "=="),
    "mysql": lambda r, s: (f"mysql -u root -p{s} app", password),
    "sshpass": lambda r, s: (f"sshpass -p {s} ssh host", password),
    "curl user": lambda r, s: (f"curl -u admin:{s} https://example.com", password),
    "glued env name": lambda r, s: (f"PGPASSWORD={s} psql -h db", password),
    "any authorization scheme": lambda r, s: (f"Authorization: {r.choice(['Bot', 'SSWS', 'ApiKey'])} {s}", password),
    "xml element": lambda r, s: (f"<server><id>central</id><password>{s}</password></server>", password),
    ".NET app setting": lambda r, s: (f'<add key="StripeApiKey" value="{s}" />', password),
    "sshpass glued": lambda r, s: (f"sshpass -p{s} ssh deploy@host", password),
    "single-dash option": lambda r, s: (f"vault login -token {s}", password),
    "discord bot token": lambda r, s: (s, discord_bot_token),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_fmt33a_issue_shapes_are_found_everywhere(name: str) -> None:
    """Issue #25's shapes (and the name-keyed ones) in every wrapper, after every separator, bare or quoted."""
    r = random.Random()
    for _ in range(3):
        _, make = SHAPES[name](r, "")
        secret = make(r)
        shape, _ = SHAPES[name](r, secret)
        _check_everywhere(shape, secret)


def test_fmt33a_password_in_json_encoded_three_times() -> None:
    """A password inside JSON encoded three times (a tool argument holding a JSON string holding a document)."""
    import json

    secret = password(random.Random())
    text = json.dumps(json.dumps(json.dumps({"user": "app", "password": secret})))
    out = scrub_text(text)
    assert secret not in out
    assert json.loads(json.loads(json.loads(out)))["user"] == "app"
    assert json.loads(json.loads(json.loads(out)))["password"].startswith("<redacted:")


def test_fmt33a_privacy_doc_lists_every_key_format() -> None:
    """``docs/privacy.md`` names every provider of ``KEY_FORMATS`` in its list of recognised formats (they cannot
    drift apart), and keeps the statement that base64-wrapped secrets are not recognised."""
    doc = (REPO / "docs" / "privacy.md").read_text(encoding="utf-8")
    section = doc.split("### Recognised key formats", 1)[1].split("\n## ", 1)[0]
    missing = [provider for provider in PROVIDERS if provider not in section]
    assert not missing, missing
    assert "base64" in doc.lower()


@given(st.sampled_from(sorted(KEY_SAMPLES)), st.sampled_from(sorted(KEY_SAMPLES)), st.integers(0, 2**32 - 1),
       st.sampled_from(["", "x=", "token: ", '{"k": "']))
@settings(max_examples=300, deadline=None)
def test_fmt33a_credentials_glued_together_are_all_removed_in_one_scrub(first: str, second: str, seed: int,
                                                                       before: str) -> None:
    """FMT-33a, OBS-59: two keys written back to back (no boundary between them: ``AKIA…sk-proj-…``) are both
    removed by one ``scrub_text``, and its result is a fixpoint (a second scrub changes nothing), so no later
    walk that trusts a scrubbed text can pass the second key on."""
    r = random.Random(seed)
    a, b = KEY_SAMPLES[first](r), KEY_SAMPLES[second](r)
    out = scrub_text(before + a + b)
    assert scrub_text(out) == out
    for secret in (a, b):
        # a key may end in characters the next key's format also allows; what must go is every long run of it
        assert secret[-12:] not in out or secret[-12:] in before, (first, second, out)
