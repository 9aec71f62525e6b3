"""Key formats, terminal colour codes, decoded views and base64 blobs (spec 01 OBS-58, OBS-59; spec 04 FMT-33a).

* Recall and precision of the key formats added to :data:`KEY_FORMATS` (every prefix the reference redactor,
  hermes-agent's ``agent/redact.py``, recognises, and the other published ones) and of Telegram bot tokens: a key
  generated to the provider's published shape, afresh for every example, is replaced exactly (its span, nothing
  else), plain, quoted, JSON-escaped one to three times, in a JSON document, percent-encoded, between terminal
  colour codes; words that start like a prefix stay.
* Terminal colour codes are boundaries: ``ESC[32m<key>ESC[0m`` and ``grep --color`` output of an ``.env``.
* The percent view decodes UTF-8 (a value with non-ASCII characters goes whole, no half sequence stays); the JSON
  views never invent a quote from an escaped backslash (a value ending in backslashes keeps what follows it).
* A path or file name after a key stays; a dotted identifier is no Discord token, ``cache-key-<md5>`` no Mailgun
  key; a base64 blob is never redacted in part, a lone ``eyJ…`` part (cursor, source map) is no JWT.
"""

from __future__ import annotations

import base64
import json
import random
import re
import urllib.parse

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text
from hermes_pipeline.engine.scrub_tokens import KEY_FORMATS

from tests.engine._scrub_support import ALNUM, HEX, KEY_SAMPLES, URLSAFE, discord_bot_token, rand, unwrap, wrapper

NEW_FORMATS = [
    "ElevenLabs API keys", "GitLab personal / deploy / runner / trigger / agent / workspace tokens",
    "GitLab runner registration tokens", "Google OAuth refresh tokens", "Hugging Face organization API tokens",
    "RubyGems API keys", "LangSmith personal access tokens and service keys", "Fireworks keys", "Together AI keys",
    "Cerebras keys", "Voyage AI keys", "Jina AI keys", "LlamaCloud keys", "Pinecone keys",
    "Zhipu AI (BigModel / Z.ai) keys", "Tavily keys", "Firecrawl keys", "Exa keys", "Fal keys", "Browserbase keys",
    "Codex / Fernet encrypted tokens", "AgentMail keys", "Matrix access and refresh tokens", "Mem0 keys",
    "RetainDB keys", "Hindsight keys", "ByteRover keys", "Atlassian API tokens", "Bitbucket app passwords",
    "Airtable personal access tokens", "HashiCorp Terraform Cloud tokens", "1Password service account tokens",
    "Neon API keys", "PlanetScale tokens and passwords", "Heroku API keys", "Netlify personal access tokens",
    "Cloudflare Origin CA keys", "Mapbox secret tokens", "Slack bot / user / workspace tokens",
]
"""The providers this change adds to (or widens in) :data:`KEY_FORMATS`."""

_BODY_WITH_SLASH = {provider for provider, _, body in KEY_FORMATS if "/" in body}


def _telegram(r: random.Random) -> str:
    """A Telegram bot token: the bot's id (7 to 11 digits), a colon, 35 base64url characters (``AA…`` or not)."""
    secret = r.choice(["AA", "AAE", "AAH", ""]) + rand(r, URLSAFE, 35)
    return f"{r.randint(10 ** 6, 10 ** 11 - 1)}:{secret[:35]}"


SAMPLES = {**{name: KEY_SAMPLES[name] for name in NEW_FORMATS}, "Telegram bot tokens": _telegram}

BEFORE = ("", "see ", "(", "[", "{", "key id\n", "x = ", "a, ")
AFTER = ("", " next", ")", ".", ", ok", "\n2|HOST=example.org", "/more/path", ".json", "/usage?x=1",
         "/data/file.parquet")
QUOTES = ("", "'", '"', "`")
WRAPPERS = [("plain", 1), ("json", 1), ("json", 2), ("json", 3), ("doc", 1), ("doc", 2), ("doc", 3), ("url", 1)]
SGR = ("\x1b[32m", "\x1b[0m", "\x1b[01;31m\x1b[K", "\x1b[m\x1b[K", "\x1b[1;33;40m", "\x1b[38;5;208m")

Pieces = list[tuple[str, "str | None"]]


def _expected(pieces: Pieces, kind: str, level: int) -> tuple[str, str]:
    """The wrapped text, and the same with each secret's encoded span replaced by its marker."""
    encode, left, right = wrapper(kind, level)
    text = left + "".join(encode(p) for p, _ in pieces) + right
    expected = left + "".join(encode(p) if s is None else redaction_marker(s) for p, s in pieces) + right
    return text, expected


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(provider=st.sampled_from(sorted(SAMPLES)), seed=st.integers(0, 2**32), wrap=st.sampled_from(WRAPPERS),
       before=st.sampled_from(BEFORE), after=st.sampled_from(AFTER), quote=st.sampled_from(QUOTES),
       colour=st.booleans(), bot=st.booleans())
def test_property_obs58_obs59_new_key_formats_replaced_exactly(provider: str, seed: int, wrap: tuple[str, int],
                                                              before: str, after: str, quote: str, colour: bool,
                                                              bot: bool) -> None:
    """OBS-58 / OBS-59: a key of each added format, generated to the provider's published shape, plain, quoted,
    JSON-escaped 1-3x, in a JSON document or percent-encoded, alone or between terminal colour codes, followed by
    text, punctuation or a path: the output is the input with exactly the key's span replaced by its marker (the
    path, the colour codes and every other byte stay)."""
    r = random.Random(seed)
    key = SAMPLES[provider](r)
    if provider in _BODY_WITH_SLASH and after.startswith("/"):
        after = " " + after  # a '/' right after a base64 body is read as part of it
    pieces: Pieces = [(before + quote, None)]
    if provider == "Telegram bot tokens" and bot:
        pieces.append(("https://api.example.org/bot", None))  # the path's ``bot`` stays, the token goes
    if colour:
        pieces.append((r.choice(SGR), None))
    pieces.append((key, key))
    if colour:
        pieces.append((r.choice(SGR), None))
    pieces.append((quote + after, None))
    kind, level = wrap
    text, expected = _expected(pieces, kind, level)
    assert scrub_text(text) == expected


@pytest.mark.parametrize("provider", sorted(SAMPLES))
def test_obs58_new_key_formats_leave_nothing_of_the_key(provider: str) -> None:
    """OBS-58 / OBS-59: no 8-character piece of the key survives in any wrapper, decoded back either."""
    r = random.Random()
    for _ in range(20):
        key = SAMPLES[provider](r)
        for kind, level in WRAPPERS:
            encode, left, right = wrapper(kind, level)
            out = scrub_text(left + encode(f"token is {key} here") + right)
            for text in (out, unwrap(kind, level, out)):
                kept = [key[i:i + 8] for i in range(len(key) - 7) if key[i:i + 8] in text]
                assert not kept, (provider, key, kind, level, text)


def _reference_prefixes() -> list[str]:
    redact = pytest.importorskip("agent.redact")
    prefixes = []
    for pattern in redact._PREFIX_PATTERNS:
        literal = re.match(r"(?:[A-Za-z0-9_-]|\\\.)+", pattern)
        assert literal is not None, pattern
        prefixes.append(literal.group(0).replace("\\.", "."))
    return prefixes


def test_obs58_every_prefix_of_the_reference_redactor_is_a_key_format() -> None:
    """OBS-58 names hermes-agent's ``agent/redact.py`` as the reference: every key prefix it recognises is a
    published format here, and a key of that format is redacted whole."""
    r = random.Random(58)
    samples = [gen(r) for gen in KEY_SAMPLES.values() for _ in range(40)]
    for prefix in _reference_prefixes():
        keys = [key for key in samples if key.startswith(prefix)]
        assert keys, f"no key format for the reference prefix {prefix!r}"
        for key in keys[:3]:
            assert scrub_text(f"see {key} ok") == f"see {redaction_marker(key)} ok", key


@pytest.mark.parametrize("text", [
    "sk-learn-compatible-v2", "pip install sk-learn-compatible-v2", "fc-layout", "fc-layout-grid-2", "am_i_ok",
    "am_pm_format_string_2", "csk-config-loader-v3", "llx-parser-module-2", "pa-system-driver-v10",
    "tvly-search-results-page-2", "exa_search_results_v2_final", "fal_client_upload_file_2",
    "bb_live_session_manager_v2", "mem0_memory_client_v3", "napi_create_reference_2_value",
    "jina_embeddings_v2_base_en_model", "pcsk_rotation_helper_function_v2", "fw-rules-engine-config-v2-final",
    "hsk-layout-engine-module-v2", "m0-cache-warmup-job-v2", "sy t_ helper", "syt_sync_helper_function_v2",
    "a = 1//0", "print(2//0x10)", "GR1348941 is a number", "api_org_chart_builder_v2_final",
    "OrganizationServiceClients.client.CreateOrganizationMembershipRequest",
    "NotificationDeliveryService.worker.DispatchPendingNotificationsBatch",
    "MarketplaceListingRepository.cached.FindAllListingsByCategoryAndOwner",
    "redis-cli GET cache-key-5d41402abc4b2a76b9719d911017c592",
    "Idempotency-Key: idempotency-key-5d41402abc4b2a76b9719d911017c592",
    "s3://bucket/objects/key-5d41402abc4b2a76b9719d911017c592.json",
    "lookup_key-5d41402abc4b2a76b9719d911017c592", "path/to/key-5d41402abc4b2a76b9719d911017c592",
    '{"cursor": "eyJpZCI6MTIzNDUsInRzIjoxNzAwMDAwMDAwfQ=="}',
    '{"endCursor": "eyJvZmZzZXQiOjEwMCwibGltaXQiOjUwfQ", "hasNextPage": true}',
    "//# sourceMappingURL=data:application/json;charset=utf-8;base64,eyJ2ZXJzaW9uIjozLCJzb3VyY2VzIjpbXX0=",
    "state=eyJyZWRpcmVjdCI6Ii9ob21lIiwibm9uY2UiOiJhYmMifQ",
])
def test_obs59_ordinary_strings_that_start_like_a_credential_are_kept(text: str) -> None:
    """OBS-59: words and identifiers that start like a prefix (``sk-learn-compatible-v2``, ``fc-layout``,
    ``am_i_ok``), dotted identifiers of a Discord token's length, ``key-`` glued to a name or a path, and base64
    JSON standing alone (a GraphQL cursor, a source map) are not credentials."""
    assert scrub_text(text) == text


def _identifier(r: random.Random, n: int) -> str:
    words = ["Organization", "Service", "Client", "Membership", "Request", "Notification", "Delivery", "Worker",
             "Marketplace", "Listing", "Repository", "Create", "Update", "Pending", "Batch", "Manager", "Handler",
             "Provider", "Factory", "Resolver", "Registry", "Dispatcher", "Builder", "Adapter", "Observer"]
    out = ""
    while len(out) < n:
        out += r.choice(words)
    return out[:n]


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_property_obs59_dotted_identifiers_are_no_discord_token(seed: int) -> None:
    """OBS-59: ``<M|N|O…24-28 letters>.<6 letters>.<27-40 letters>`` built from words (a dotted class path) is
    kept; a Discord bot token (its first part the base64 of a numeric bot id) is still found."""
    r = random.Random(seed)
    first = r.choice("MNO") + _identifier(r, r.randint(23, 27))[1:]
    ident = f"{first}.{_identifier(r, 6).lower()}.{_identifier(r, r.randint(27, 40))}"
    assert scrub_text(f"use {ident} here") == f"use {ident} here"
    token = discord_bot_token(r)
    assert scrub_text(f"DISCORD {token} here") == f"DISCORD {redaction_marker(token)} here"


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), sep=st.sampled_from(["-", "_", "/", "."]),
       word=st.sampled_from(["cache", "idempotency", "lookup", "objects", "sort", "api", "primary", "s3"]))
def test_property_obs59_mailgun_needs_its_own_boundary(seed: int, sep: str, word: str) -> None:
    """OBS-59: ``key-`` + 32 hex glued to a name or a path (``cache-key-<md5>``, ``objects/key-<md5>.json``) is an
    identifier; after a space, a quote, ``=`` or ``:`` it is a Mailgun key."""
    r = random.Random(seed)
    key = "key-" + rand(r, HEX, 32)
    text = f"{word}{sep}{key}.json"
    assert scrub_text(text) == text
    for lead in (" ", "'", "=", ":", "\n"):
        assert scrub_text(f"x{lead}{key}") == f"x{lead}{redaction_marker(key)}"


_PATH_WORDS = ["models", "config", "data", "file", "usage", "v1", "us-east-1", "s3", "aws4_request", "20240101",
               "snapshots", "main", "README", "Users", "keys", "cache", "tmp", "out"]
_EXTENSIONS = ["json", "parquet", "txt", "yaml", "safetensors", "tar", "gz", "bin", "md", "env"]


@settings(max_examples=300, deadline=None)
@given(provider=st.sampled_from(sorted(p for p in KEY_SAMPLES if p not in _BODY_WITH_SLASH)),
       seed=st.integers(0, 2**32), parts=st.integers(0, 4), ext=st.booleans(), query=st.booleans())
@example(provider="Codex / Fernet encrypted tokens", seed=52004132, parts=2, ext=True, query=True)  # 73 bytes, no digit
def test_property_obs59_a_path_after_a_key_stays(provider: str, seed: int, parts: int, ext: bool,
                                                 query: bool) -> None:
    """OBS-59: a key followed by a path or a file name (``/more/path``, ``.json``, ``/usage?x``,
    ``/data/file.parquet``, an AWS credential scope ``/20240101/us-east-1/s3/aws4_request``) loses the key only."""
    r = random.Random(seed)
    key = KEY_SAMPLES[provider](r)
    suffix = "".join("/" + r.choice(_PATH_WORDS) for _ in range(parts))
    if ext or not suffix:
        suffix += "." + r.choice(_EXTENSIONS)
    if query:
        suffix += "?x=1"
    text = f"cp {key}{suffix} done"
    assert scrub_text(text) == f"cp {redaction_marker(key)}{suffix} done"


@pytest.mark.parametrize(("text", "secret"), [
    ("/home/u/.cache/ghp_{k}/models/config.json", "ghp_{k}"),
    ("~/.tokens/ghp_{k}.json", "ghp_{k}"),
    ("GET /keys/sk-proj-{k}/usage?x=1", "sk-proj-{k}"),
    ("s3://bucket/ghp_{k}/data/file.parquet", "ghp_{k}"),
    ("scope AKIAQWERTYUIOP234567/20240101/us-east-1/s3/aws4_request", "AKIAQWERTYUIOP234567"),
    ("Credential=AKIAQWERTYUIOP234567/20240101/us-east-1/s3/aws4_request", "AKIAQWERTYUIOP234567"),
])
def test_obs59_the_reviewed_paths_after_a_key_stay(text: str, secret: str) -> None:
    """OBS-59: the over-redactions of the review: the path, file name or credential scope after a key stays."""
    k = "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    text, secret = text.format(k=k), secret.format(k=k)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize(("text", "secret"), [
    ("\x1b[32mghp_{p}\x1b[0m", "ghp_{p}"),
    ("\x1b[01;31m\x1b[KAPI_KEY\x1b[m\x1b[K={p}", "{p}"),
    ("\x1b[35m\x1b[K.env\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K\x1b[01;31m\x1b[KDB_PASSWORD\x1b[m\x1b[K={p}", "{p}"),
    ("token: \x1b[1;33msk-proj-{p}\x1b[0m\n", "sk-proj-{p}"),
    ("API_KEY=ab\x1b[01;31m\x1b[Kcd{p}\x1b[m\x1b[K next", "ab\x1b[01;31m\x1b[Kcd{p}"),
])
def test_obs58_terminal_colour_codes_are_boundaries(text: str, secret: str) -> None:
    """OBS-58 / OBS-59: an ANSI colour code before a key or a name is a boundary, not the letter ``m`` or ``K``
    glued to it (coloured CLI output, ``grep --color`` of a ``.env``); the codes around the secret stay, those
    inside a value go with it (the secret is what the terminal shows)."""
    p = "Xk9mQ2vLp7RtXk9mQ2vLp7RtXk9mQ2vL"
    text, secret = text.format(p=p), secret.format(p=p)
    shown = re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]", "", secret)
    out = scrub_text(text)
    assert out == text.replace(secret, redaction_marker(shown))
    assert scrub_text(json.dumps(text)) == json.dumps(text).replace(
        json.dumps(secret)[1:-1], redaction_marker(shown))


_NON_ASCII = "àéîõüßçñÅØæЖРхПарольпароль密码パスワド한국😀€"


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(["password", "api_key", "token", "client_secret"]),
       nested=st.booleans())
def test_property_obs59_percent_view_decodes_utf8(seed: int, name: str, nested: bool) -> None:
    """OBS-59: a value holding non-ASCII characters, percent-encoded as UTF-8 (the whole text, or the URL of a
    ``next=`` parameter), is redacted whole: no byte of it stays, not half a UTF-8 sequence, and every other byte
    of the text is kept."""
    r = random.Random(seed)
    chars = [r.choice(ALNUM) for _ in range(r.randint(10, 22))]
    for _ in range(r.randint(1, 4)):  # 2 to 4 bytes each in UTF-8 (``à`` is %C3%A0: %A0 alone would be a NBSP)
        chars.insert(r.randrange(len(chars) + 1), r.choice(_NON_ASCII))
    secret = "".join(chars) + str(r.randint(0, 9))
    before = f"/cb?user=bob&{name}="
    after = f"&lang={r.choice(['fr', 'ru', 'zh'])}"
    quote = urllib.parse.quote
    head = "https://login.example.org/?next=" if nested else ""
    text = head + quote(before, safe="") + quote(secret, safe="") + quote(after, safe="")
    out = scrub_text(text)
    assert out == head + quote(before, safe="") + redaction_marker(secret) + quote(after, safe="")


_SHELL_PIECES = ["a", "B", "7", "x9", "Qz", "\\\\", '\\"', "\\\\\\\\", "%", "!", "-", "Mk4"]


@st.composite
def _shell_value(draw: st.DrawFn) -> str:
    """A password as written inside shell double quotes: letters and digits, escaped backslashes and escaped
    quotes, often ending in backslashes."""
    body = "".join(draw(st.lists(st.sampled_from(_SHELL_PIECES), min_size=3, max_size=12)))
    tail = draw(st.sampled_from(["", "\\\\", "\\\\\\\\", '\\"']))
    return "Pw9" + body + tail


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_shell_value(), wrap=st.sampled_from(WRAPPERS[:-1]), name=st.sampled_from(["PASSWORD", "DB_PASSWORD",
                                                                                        "API_KEY"]))
def test_property_obs59_json_views_never_invent_a_quote(value: str, wrap: tuple[str, int], name: str) -> None:
    """OBS-59: ``NAME="value" ./run --flag`` JSON-escaped one to three times (alone or in a document), the value
    ending in backslashes or holding escaped quotes: exactly the value is replaced, by the marker it gets in the
    plain text, and the closing quote and `` ./run --flag "done"`` stay (an escaped backslash before a quote is never
    read as an escaped quote, which would run the value on to the next quote)."""
    kind, level = wrap
    pieces: Pieces = [(f'{name}="', None), (value, value), ('" ./run --flag "done"\nnext line', None)]
    text, expected = _expected(pieces, kind, level)
    assert scrub_text(text) == expected


def test_obs59_the_reviewed_json_example_keeps_the_command() -> None:
    """OBS-59: the review's example: a value ending in an escaped backslash inside a JSON document keeps the
    closing quote and the rest of the command, and gets the marker of the plain form."""
    doc = '{"command": "PASSWORD=\\"Xk9mQ2vLp7Rt\\\\\\\\\\" ./run --flag"}'
    plain = json.loads(doc)["command"]
    secret = "Xk9mQ2vLp7Rt\\\\"
    assert scrub_text(plain) == plain.replace(secret, redaction_marker(secret))
    assert scrub_text(doc) == doc.replace(json.dumps(secret)[1:-1], redaction_marker(secret))


def _blob(r: random.Random) -> tuple[str, str]:
    data = r.randbytes(r.randint(1024, 40 * 1024))
    std = base64.b64encode(data).decode()
    url = base64.urlsafe_b64encode(data).decode().rstrip("=")
    return r.choice([
        ("png", f"![chart](data:image/png;base64,{std})"),
        ("jpeg", f'<img src="data:image/jpeg;base64,{std}">'),
        ("base64url", url),
        ("cursor", json.dumps({"cursor": url, "hasNextPage": True})),
        ("sourcemap", "//# sourceMappingURL=data:application/json;base64," + std),
    ])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32))
@example(seed=13000335)  # a base64url blob that starts with EAA (a Meta token's prefix) was redacted whole
def test_property_fmt33a_base64_blobs_are_never_redacted_in_part(seed: int) -> None:
    """OBS-59: a base64 or base64url blob of random bytes (1-40 KB: an image, a cursor, a source map) is kept as
    it is: a key-looking piece inside it (``+eyJ…``, ``-sk-…``, ``/gAAAAA…``) is part of the blob."""
    kind, text = _blob(random.Random(seed))
    assert scrub_text(text) == text, kind


def test_fmt33a_base64_blobs_corpus_is_left_alone() -> None:
    """OBS-59 / FMT-33a: of 400 random blobs (1-40 KB, base64 and base64url, as images, cursors and source maps)
    none is changed (the bound is 0.1 %)."""
    r = random.Random(14)
    changed = [kind for kind, text in (_blob(r) for _ in range(400)) if scrub_text(text) != text]
    assert not changed, changed


def test_obs58_jwt_needs_three_parts_and_its_own_boundaries() -> None:
    """OBS-58: a JWT is three dot-separated base64url parts, header and payload base64 JSON (the signature may be
    empty: the final dot of an unsecured token stays, like a sentence's; a JWE has five parts), not glued to a
    letter or digit before it (after a name's ``-`` or ``_`` it is one: ``x_<token>``, the name stays); a lone ``eyJ…``
    part is base64 JSON and stays, and so does a dotted pair whose second part is no JSON."""
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    payload = base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"Jo"}').decode().rstrip("=")
    signature = "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    jwe = f"{header}..{signature[:22]}.{signature}.{signature[:22]}"
    for token, rest in ((f"{header}.{payload}.{signature}", ""), (f"{header}.{payload}", "."), (jwe, "")):
        texts = [f"https://app.example.com/verify/{token}{rest}?next=/", f"{token}{rest}", f"see {token}{rest} ok"]
        if not rest:  # a name's value runs to the next space: the unsecured token's dot goes with it there
            texts += [f"Authorization: Bearer {token}", f"token={token}&x=1", f"see {token}/more.json"]
        for text in texts:
            assert scrub_text(text) == text.replace(token + rest, redaction_marker(token) + rest, 1), text
    token = f"{header}.{payload}.{signature}"
    for name in ("x_", "deploy-", "backup_", " -", "--"):
        assert scrub_text(f"{name}{token}.json") == f"{name}{redaction_marker(token)}.json"
    for text in (f"Ab{token}", f"7{token}", f"cursor={header}", f'{{"after": "{payload}"}}',
                 f"{header}.{payload}", f"see {header}.{signature}.json"):
        assert scrub_text(text) == text


_FRAGMENTS = st.sampled_from([
    " ", ".", ":", "/", "-", "_", "bot", "x", "7", "1234567", "12345678901", ".atlasv1.", "\x1b[32m", "\x1b[0m",
    "AbCdEf0123456789", "abcdefabcdef0123456789abcdef0123", "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3", "eyJ",
])


@settings(max_examples=500, deadline=None)
@given(before=st.lists(_FRAGMENTS, max_size=8).map("".join), after=st.lists(_FRAGMENTS, max_size=8).map("".join),
       provider=st.sampled_from(sorted(SAMPLES)), seed=st.integers(0, 2**32))
@example(before="_boteyJ\x1b[0m.7:-", after="", provider="Codex / Fernet encrypted tokens", seed=8006688)
def test_property_obs58_format_prechecks_are_exact(before: str, after: str, provider: str, seed: int) -> None:
    """OBS-58: the cheap pre-checks of the added formats (a key id and a dot, ``.atlasv1.``, a Telegram token's
    colon, the run of key characters) never skip a credential: among fragments that look like parts of keys, the
    gated scan finds exactly what the ungated one finds, and a key standing between spaces is found."""
    from hermes_pipeline.engine.scrub import find_spans

    key = SAMPLES[provider](random.Random(seed))
    text = f"{before} {key} {after}"
    assert find_spans(text) == find_spans(text, gated=False)
    assert key not in scrub_text(text)


def test_obs58_a_whole_fernet_token_is_found_whatever_its_first_characters() -> None:
    """OBS-58: a Fernet token (``gAAAAA…``, 100 characters or more with its padding) whose first 40 characters after
    the prefix hold no digit, ``_`` or ``-`` (about one token in 5,000) is still a token, the shortest one too."""
    body = "BfxOOlKgzrjbxqLlvwaNQZorJLTDyTtVUhzKUwobrKOO_WYQa7idbUYOkJnfwGKE8UiJOG20tC_p-N86tYWWVBAquYpHu05l4sGRnyeM"
    token = "gAAAAA" + body + "="
    for text in (f"reasoning: {token}", f'{{"encrypted_content": "{token}"}}', f"x {token} y"):
        assert scrub_text(text) == text.replace(token, redaction_marker(token)), text
    shortest = "gAAAAABiVesmUECUFnbQditkYGvntGDyqlwBUvDTaqwPnwLkaEFhpGdKJY7vbg_XD0hnD5i9Hb9OS00_jkz5SgTrXW1D4iBAqg=="
    assert len(base64.urlsafe_b64decode(shortest)) == 73  # version, time, IV, one block, HMAC: 98 characters and ==
    assert scrub_text(f"cp {shortest} done") == f"cp {redaction_marker(shortest)} done"


@pytest.mark.parametrize("prefix", ["EAA", "ghp_", "xoxb-", "AKIA", "sk-"])
def test_fmt33a_a_blob_that_starts_like_a_key_stays(prefix: str) -> None:
    """FMT-33a: a base64 blob that happens to start with a key's prefix (its first bytes) is a blob, not a key glued
    to a kilobyte of base64; the same prefix before a key of its own length is a key."""
    r = random.Random(7)
    blob = prefix + base64.urlsafe_b64encode(r.randbytes(3000)).decode()
    assert scrub_text(blob) == blob
    assert scrub_text(f"payload: {blob}") == f"payload: {blob}"
