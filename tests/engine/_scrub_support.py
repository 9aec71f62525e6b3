"""Credentials of known shapes for the scrubber's precision and recall tests (issue #25), and the wrappers they
arrive in (JSON-escaped, percent-encoded).

Every generator takes a :class:`random.Random` and returns a fresh credential, so the tests never check a fixed
string the scrubber could have learnt. :data:`KEY_SAMPLES` holds one generator per provider of
:data:`hermes_pipeline.engine.scrub_tokens.KEY_FORMATS`, written from each provider's published format (prefix,
length, alphabet), not from the table's regex.
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
from collections.abc import Callable

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
LOWER_DIGITS = string.ascii_lowercase + string.digits


def rand(r: random.Random, alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet`` holding at least one digit and, if the alphabet has both, both cases (what
    a generated key has; a body of only letters can spell a word, which no format promises to exclude)."""
    while True:
        s = "".join(r.choice(alphabet) for _ in range(n))
        digits = any(c.isdigit() for c in s) or not any(c.isdigit() for c in alphabet)
        cased = (any(c.islower() for c in s) or not any(c.islower() for c in alphabet)) and (
            any(c.isupper() for c in s) or not any(c.isupper() for c in alphabet))
        if digits and cased:
            return s


def password(r: random.Random, n: int | None = None) -> str:
    """A generated password / token: letters of both cases and digits, 12-32 characters."""
    return rand(r, ALNUM, n or r.randint(12, 32))


def note_password(r: random.Random, symbols: str = "!#%^*-_.+", share: float = 0.4) -> str:
    """A generated password as people paste it into notes: an upper, a lower and a digit, 12-24 characters, and at
    times (``share``) one of ``symbols`` inside (never at an end)."""
    alphabet = string.ascii_letters + string.digits
    while True:
        value = "".join(r.choice(alphabet) for _ in range(r.randint(12, 24)))
        if any(c.isdigit() for c in value) and any(c.islower() for c in value) and any(c.isupper() for c in value):
            break
    if r.random() < share:
        i = r.randrange(1, len(value))
        value = value[:i] + r.choice(symbols) + value[i:]
    return value


def _b64(r: random.Random, nbytes: int) -> str:
    while True:
        s = base64.b64encode(r.randbytes(nbytes)).decode()
        if any(c.isdigit() for c in s):
            return s


def fernet_token(r: random.Random) -> str:
    """A Fernet token (the ``gAAAAA…`` of encrypted Codex reasoning): version 0x80, a timestamp, an IV, a ciphertext
    and an HMAC, base64url-encoded."""
    stamp = r.randint(1_600_000_000, 1_900_000_000).to_bytes(8, "big")
    body = b"\x80" + stamp + r.randbytes(16 + 16 * r.randint(1, 8) + 32)
    return base64.urlsafe_b64encode(body).decode()


def discord_bot_token(r: random.Random) -> str:
    """A Discord bot token: the base64 of the bot's id (a snowflake of 17 to 19 digits), a timestamp, an HMAC."""
    bot_id = str(r.randint(10**16, 2 * 10**18)).encode()
    return (base64.urlsafe_b64encode(bot_id).decode().rstrip("=") + "." + rand(r, URLSAFE, 6) + "."
            + rand(r, URLSAFE, r.choice([27, 38])))


KEY_SAMPLES: dict[str, Callable[[random.Random], str]] = {
    "OpenAI / Anthropic / OpenRouter / DeepSeek / Langfuse secret keys": lambda r: r.choice([
        "sk-" + rand(r, ALNUM, 48), "sk-proj-" + rand(r, URLSAFE, 120), "sk-ant-api03-" + rand(r, URLSAFE, 93) + "AA",
        "sk-or-v1-" + rand(r, HEX, 64), "sk-" + rand(r, HEX, 32), "sk-lf-" + rand(r, HEX, 8) + "-" + rand(r, HEX, 4)]),
    "Stripe secret and restricted keys": lambda r: r.choice(["sk_live_", "sk_test_", "rk_live_", "rk_test_", "sk_prod_",
                                                             "rk_prod_"])
    + rand(r, ALNUM, r.choice([24, 99])),
    "ElevenLabs API keys": lambda r: "sk_" + rand(r, HEX, 48),
    "Stripe webhook signing secrets": lambda r: "whsec_" + rand(r, ALNUM, 32),
    "GitHub tokens (classic, OAuth, user-to-server, server-to-server, refresh)": lambda r: r.choice(
        ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + rand(r, ALNUM, 36),
    "GitHub fine-grained personal access tokens": lambda r: "github_pat_" + rand(r, ALNUM, 22) + "_"
    + rand(r, ALNUM, 59),
    "GitLab personal / deploy / runner / trigger / agent / workspace tokens": lambda r: r.choice([
        r.choice(["glpat-", "gldt-", "glrt-", "glrtr-", "glptt-", "glft-", "glwt-"]) + rand(r, URLSAFE, 20),
        "glagent-" + rand(r, URLSAFE, 50), "gloas-" + rand(r, URLSAFE, 64),
        # routable: the instance's part and a checksum after a dot
        r.choice(["glpat-", "glrt-"]) + rand(r, URLSAFE, 27) + "." + rand(r, LOWER_DIGITS, 9)]),
    "GitLab runner registration tokens": lambda r: "GR1348941" + rand(r, URLSAFE, 20),
    "Slack bot / user / workspace tokens": lambda r: r.choice([r.choice(["xoxb-", "xoxp-", "xoxe-", "xoxa-2-"])
    + f"{r.randint(10**10, 10**13)}-{r.randint(10**10, 10**13)}-" + rand(r, ALNUM, 24),
                                                               "xoxe.xoxp-1-" + rand(r, ALNUM, 146)]),
    "Slack app-level tokens": lambda r: f"xapp-1-A{rand(r, UPPER_DIGITS, 10)}-{r.randint(10**12, 10**13)}-"
    + rand(r, HEX, 64),
    "Google API keys": lambda r: "AIza" + rand(r, URLSAFE, 35),
    "Google OAuth client secrets": lambda r: "GOCSPX-" + rand(r, URLSAFE, 28),
    "Google OAuth access tokens": lambda r: "ya29." + rand(r, URLSAFE, 150),
    "Google OAuth refresh tokens": lambda r: "1//0" + rand(r, URLSAFE, r.randint(60, 110)),
    "AWS access key ids": lambda r: r.choice(["AKIA", "ASIA", "AROA", "AIDA", "A3T" + r.choice(UPPER_DIGITS)])
    + rand(r, UPPER_DIGITS, 16),
    "Alibaba Cloud access key ids": lambda r: "LTAI" + rand(r, ALNUM, r.choice([12, 16, 20])),
    "Tencent Cloud secret ids": lambda r: "AKID" + rand(r, ALNUM, 32),
    "Hugging Face tokens": lambda r: "hf_" + rand(r, ALNUM, 34),
    "Hugging Face organization API tokens": lambda r: "api_org_" + rand(r, ALNUM, 34),
    "npm tokens": lambda r: "npm_" + rand(r, ALNUM, 36),
    "PyPI tokens": lambda r: "pypi-AgEIcHlwaS5vcmc" + rand(r, URLSAFE, 150),
    "RubyGems API keys": lambda r: "rubygems_" + rand(r, HEX, 48),
    "Groq keys": lambda r: "gsk_" + rand(r, ALNUM, 52),
    "xAI keys": lambda r: "xai-" + rand(r, ALNUM, 80),
    "Langfuse public keys": lambda r: "pk-lf-" + "-".join(rand(r, HEX, n) for n in (8, 4, 4, 4, 12)),
    "LangSmith personal access tokens and service keys": lambda r: "lsv2_" + r.choice(["pt", "sk"]) + "_"
    + rand(r, HEX, 32) + "_" + rand(r, HEX, 10),
    "Replicate tokens": lambda r: "r8_" + rand(r, r.choice([ALNUM, URLSAFE]), 37),
    "Perplexity keys": lambda r: "pplx-" + rand(r, ALNUM, 48),
    "Fireworks keys": lambda r: r.choice(["fw_" + rand(r, ALNUM, 24), "fw-" + rand(r, ALNUM, 40),
                                          "fpk_" + rand(r, ALNUM, 40)]),
    "Together AI keys": lambda r: "tgp_v1_" + rand(r, URLSAFE, 43),
    "Cerebras keys": lambda r: "csk-" + rand(r, LOWER_DIGITS, 48),
    "Voyage AI keys": lambda r: "pa-" + rand(r, URLSAFE, 43),
    "Jina AI keys": lambda r: "jina_" + rand(r, HEX, 32) + rand(r, ALNUM, 28),
    "LlamaCloud keys": lambda r: "llx-" + rand(r, ALNUM, 48),
    "Pinecone keys": lambda r: "pcsk_" + rand(r, ALNUM, r.choice([5, 6])) + "_" + rand(r, ALNUM, 63),
    "Zhipu AI (BigModel / Z.ai) keys": lambda r: rand(r, HEX, 32) + "." + rand(r, ALNUM, 16),
    "Tavily keys": lambda r: "tvly-" + r.choice(["", "dev-", "prod-"]) + rand(r, ALNUM, 32),
    "Firecrawl keys": lambda r: "fc-" + rand(r, HEX, 32),
    "Exa keys": lambda r: "exa_" + rand(r, ALNUM, 32),
    "Fal keys": lambda r: "fal_" + rand(r, URLSAFE, 32),
    "Browserbase keys": lambda r: "bb_live_" + rand(r, URLSAFE, 27),
    "Codex / Fernet encrypted tokens": lambda r: fernet_token(r),
    "AgentMail keys": lambda r: "am_" + rand(r, ALNUM, 40),
    "Matrix access and refresh tokens": lambda r: r.choice(["syt_", "syr_"]) + base64.urlsafe_b64encode(
        r.choice(["alice", "bob.smith", "ops-bot", "@me:example.org"]).encode()).decode().rstrip("=") + "_"
    + rand(r, ALNUM, 20) + "_" + rand(r, ALNUM, 6),
    "Mem0 keys": lambda r: r.choice(["mem0_", "m0-"]) + rand(r, ALNUM, 40),
    "RetainDB keys": lambda r: "retaindb_" + rand(r, ALNUM, 32),
    "Hindsight keys": lambda r: "hsk-" + rand(r, ALNUM, 32),
    "ByteRover keys": lambda r: "brv_" + rand(r, ALNUM, 32),
    "NVIDIA API keys": lambda r: "nvapi-" + rand(r, URLSAFE, 64),
    "DigitalOcean tokens": lambda r: r.choice(["dop_v1_", "doo_v1_", "dor_v1_"]) + rand(r, HEX, 64),
    "Shopify access tokens and secrets": lambda r: r.choice(["shpat_", "shpss_", "shpca_", "shppa_"])
    + rand(r, HEX, 32),
    "Atlassian API tokens": lambda r: r.choice(["ATATT3xFfGF0", "ATCTT3xFfGN0"]) + rand(r, URLSAFE, 170) + "="
    + rand(r, HEX, 8).upper(),
    "Bitbucket app passwords": lambda r: "ATBB" + rand(r, ALNUM, 28) + rand(r, HEX, 8).upper(),
    "Databricks tokens": lambda r: "dapi" + rand(r, HEX, 32),
    "Linear API keys": lambda r: "lin_api_" + rand(r, ALNUM, 40),
    "Notion tokens": lambda r: "ntn_" + str(r.randint(10**10, 10**11)) + rand(r, ALNUM, 35),
    "Notion legacy integration secrets": lambda r: "secret_" + rand(r, ALNUM, 43),
    "Airtable personal access tokens": lambda r: "pat" + rand(r, ALNUM, 14) + "." + rand(r, HEX, 64),
    "Doppler tokens": lambda r: "dp." + r.choice(["pt", "st", "sa", "ct"]) + "." + rand(r, ALNUM, 43),
    "HashiCorp Vault tokens": lambda r: r.choice(["hvs.", "hvb.", "hvr."]) + rand(r, URLSAFE, 90),
    "HashiCorp Terraform Cloud tokens": lambda r: rand(r, LOWER_DIGITS, 14) + ".atlasv1." + rand(r, URLSAFE, 67),
    "Pulumi access tokens": lambda r: "pul-" + rand(r, HEX, 40),
    "Postman API keys": lambda r: "PMAK-" + rand(r, HEX, 24) + "-" + rand(r, HEX, 34),
    "Figma tokens": lambda r: r.choice(["figd_", "figp_", "figu_", "figo_", "figur_", "figoh_"]) + rand(r, URLSAFE, 40),
    "Square tokens": lambda r: r.choice(["sq0atp-" + rand(r, URLSAFE, 22), "sq0csp-" + rand(r, URLSAFE, 43),
                                         "EAAA" + rand(r, URLSAFE, 60)]),
    "Meta (Facebook) access tokens": lambda r: "EAA" + rand(r, ALNUM, 150),
    "age secret keys": lambda r: "AGE-SECRET-KEY-1" + rand(r, UPPER_DIGITS, 58),
    "1Password service account tokens": lambda r: "ops_" + base64.b64encode(json.dumps({
        "signInAddress": "my.1password.com", "userAuth": {"method": "SRPg-4096", "alg": "PBES2g-HS256",
                                                         "iterations": 650000, "salt": rand(r, ALNUM, 22)},
        "email": rand(r, LOWER_DIGITS, 12) + "@1passwordserviceaccounts.com", "srpX": rand(r, HEX, 64),
        "muk": {"alg": "A256GCM", "ext": True, "k": rand(r, URLSAFE, 43), "key_ops": ["encrypt", "decrypt"],
                "kty": "oct", "kid": "mp"},
        "secretKey": "A3-" + rand(r, UPPER_DIGITS, 6) + "-" + rand(r, UPPER_DIGITS, 11),
        "throttleSecret": {"seed": rand(r, HEX, 64), "uuid": rand(r, UPPER_DIGITS, 26)},
        "deviceUuid": rand(r, LOWER_DIGITS, 26)},
        separators=(",", ":")).encode()).decode().rstrip("="),
    "Tailscale keys": lambda r: "tskey-" + r.choice(["api", "auth", "client"]) + "-k" + rand(r, ALNUM, 11)
    + "CNTRL-" + rand(r, ALNUM, 32),
    "Grafana tokens": lambda r: r.choice(["glc_" + _b64(r, 60).rstrip("="),
                                          "glsa_" + rand(r, ALNUM, 32) + "_" + rand(r, HEX, 8)]),
    "New Relic user keys": lambda r: "NRAK-" + rand(r, UPPER_DIGITS, 27),
    "Sentry auth tokens": lambda r: r.choice(["sntrys_" + _b64(r, 120).rstrip("="), "sntryu_" + rand(r, HEX, 64)]),
    "SendGrid keys": lambda r: "SG." + rand(r, URLSAFE, 22) + "." + rand(r, URLSAFE, 43),
    "Mailgun keys": lambda r: "key-" + rand(r, HEX, 32),
    "Twilio API key sids": lambda r: "SK" + rand(r, HEX, 32),
    "Docker Hub tokens": lambda r: r.choice(["dckr_pat_", "dckr_oat_"]) + rand(r, URLSAFE, 27),
    "Supabase tokens and secret keys": lambda r: r.choice(["sbp_" + rand(r, HEX, 40),
                                                           "sb_secret_" + rand(r, URLSAFE, 31)]),
    "Neon API keys": lambda r: "napi_" + rand(r, LOWER_DIGITS, 64),
    "PlanetScale tokens and passwords": lambda r: "pscale_" + r.choice(["tkn", "pw", "oauth"]) + "_"
    + rand(r, URLSAFE, 20) + r.choice(["", "."]) + rand(r, URLSAFE, 23),
    "Heroku API keys": lambda r: "HRKU-AA" + rand(r, URLSAFE, 58),
    "Netlify personal access tokens": lambda r: "nfp_" + rand(r, ALNUM, 36),
    "Cloudflare Origin CA keys": lambda r: "v1.0-" + rand(r, HEX, 24) + "-" + rand(r, HEX, 146),
    "Mapbox secret tokens": lambda r: "sk." + base64.urlsafe_b64encode(json.dumps(
        {"u": rand(r, LOWER_DIGITS, 8), "a": rand(r, LOWER_DIGITS, 25)}, separators=(",", ":")).encode()
    ).decode().rstrip("=") + "." + rand(r, URLSAFE, 22),
    "Render keys": lambda r: "rnd_" + rand(r, ALNUM, 32),
    "Brevo (Sendinblue) keys": lambda r: "xkeysib-" + rand(r, HEX, 64) + "-" + rand(r, ALNUM, 16),
}
"""One generator per ``KEY_FORMATS`` provider (the table's name-only entry aside)."""


def json_escape(text: str) -> str:
    """``text`` as it is written inside a JSON string (without the quotes)."""
    return json.dumps(text)[1:-1]


def url_quote(text: str) -> str:
    """``text`` percent-encoded, every reserved character included."""
    return urllib.parse.quote(text, safe="")


Encoder = Callable[[str], str]


def wrapper(kind: str, level: int = 1) -> tuple[Encoder, str, str]:
    """``(encode, left, right)`` of a wrapper: the wrapped text is ``left + encode(text) + right`` and ``encode``
    works character by character, so ``encode(a + b) == encode(a) + encode(b)`` (where each span lands is known).

    ``plain``; ``json``: the whole text ``json.dumps``-ed ``level`` times; ``doc``: a JSON document whose string
    value holds the text ``json.dumps``-ed ``level - 1`` times; ``url``: percent-encoded."""
    if kind == "plain":
        return (lambda s: s), "", ""
    if kind == "url":
        return url_quote, "", ""
    if kind in ("json", "doc"):
        times = level if kind == "json" else level - 1  # json.dumps calls around the text
        left, right = "", ""

        def encode(s: str) -> str:
            for _ in range(level):  # a document's string value is one more escape level
                s = json_escape(s)
            return s

        for _ in range(times):
            left, right = '"' + json_escape(left), json_escape(right) + '"'
        if kind == "doc":
            left = '{"role": "tool", "tool_call_id": "call_1", "content": "' + json_escape(left)
            right = json_escape(right) + '", "n": 3}'
        return encode, left, right
    raise ValueError(kind)


def unwrap(kind: str, level: int, text: str) -> str:
    """The inverse of :func:`wrapper` (what a reader of the wrapped text gets back)."""
    if kind == "plain":
        return text
    if kind == "url":
        return urllib.parse.unquote(text)
    if kind == "doc":
        text = json.loads(text)["content"]
        level -= 1
    for _ in range(level):
        text = json.loads(text)
    return text


def scaling_ratio(scrub: Callable[[str], object], unit: str, count: int, *, factor: int = 8,
                  prefix: str = "", suffix: str = "") -> float:
    """How much more CPU time ``scrub`` takes on ``prefix + unit * (factor * count) + suffix`` than on
    ``prefix + unit * count + suffix``: about ``factor`` for a linear scan, ``factor ** 2`` for a quadratic one.

    The time is this thread's CPU time (the best of three runs each), so another process on the machine does
    not move it, and the result is a ratio of two runs of the same code, not a wall-clock bound."""
    import time

    def cost(text: str) -> float:
        best = float("inf")
        for run in range(3):  # a text of its own each run: a cache of results must not answer the second
            variant = text + " " * (run + 1)
            start = time.thread_time()
            scrub(variant)
            best = min(best, time.thread_time() - start)
        return best

    ratio = float("inf")
    for _ in range(3):  # a ratio disturbed once (a busy machine's caches) is measured again; a super-linear scan
        small = cost(prefix + unit * count + suffix)  # is slow every time
        large = cost(prefix + unit * (factor * count) + suffix)
        ratio = min(ratio, large / max(small, 1e-3))
        if ratio < 2 * factor:
            break
    return ratio


def assert_only_secret_hidden(text: str, secret: str) -> None:
    """``text`` holds ``secret`` once; scrubbed, exactly that span became its marker, and scrubbing again changes
    nothing (OBS-59: a redaction replaces the secret's span and nothing else)."""
    out = scrub_text(text)
    assert text.count(secret) == 1
    assert out == text.replace(secret, redaction_marker(secret)), (text, out)
    assert scrub_text(out) == out
