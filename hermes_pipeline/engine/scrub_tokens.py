"""Credentials that name themselves: published key formats, JWTs, private-key blocks, webhook URLs (OBS-58).

Each format is a literal prefix and a body (:data:`KEY_FORMATS`; ``docs/privacy.md`` lists them with the
provider). A match is the whole credential, prefix included. The prefix must not be glued to a preceding
letter or digit (``task-...``, ``mask_live_...`` never match), and the body must look generated — a digit, or
upper and lower case mixed — so that words that happen to start like a prefix (``sk-learn-compatible``) stay.

:func:`find_token_spans` appends ``(start, end)`` spans; it runs each family but the published formats only
when its cheap trigger substring occurs.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["KEY_FORMATS", "find_token_spans"]

KEY_FORMATS: Final[tuple[tuple[str, str, str], ...]] = (
    # (provider, prefix regex, body regex)
    ("OpenAI / Anthropic / OpenRouter / DeepSeek / Langfuse secret keys", "sk-", "[A-Za-z0-9_-]{16,}"),
    ("Stripe secret and restricted keys", "[sr]k_(?:live|test)_", "[A-Za-z0-9]{10,}"),
    ("Stripe webhook signing secrets", "whsec_", "[A-Za-z0-9+/=]{16,}"),
    ("GitHub tokens (classic, OAuth, user-to-server, server-to-server, refresh)", "gh[pousr]_", "[A-Za-z0-9]{10,}"),
    ("GitHub fine-grained personal access tokens", "github_pat_", "[A-Za-z0-9_]{10,}"),
    ("GitLab personal / deploy / runner / trigger tokens", "gl(?:pat|dt|rt|ptt|ft|imt|oas|cbt|soat|ffct)-",
     "[A-Za-z0-9_-]{16,}"),
    ("Slack bot / user / workspace tokens", "xox[abposer]-", "[A-Za-z0-9-]{10,}"),
    ("Slack app-level tokens", "xapp-", "[A-Za-z0-9-]{10,}"),
    ("Google API keys", "AIza", "[A-Za-z0-9_-]{20,}"),
    ("Google OAuth client secrets", "GOCSPX-", "[A-Za-z0-9_-]{16,}"),
    ("Google OAuth access tokens", r"ya29\.", "[A-Za-z0-9_-]{20,}"),
    ("AWS access key ids", "(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)", "[A-Z0-9]{12,}"),
    ("Alibaba Cloud access key ids", "LTAI", "[A-Za-z0-9]{12,}"),
    ("Tencent Cloud secret ids", "AKID", "[A-Za-z0-9]{13,}"),
    ("Hugging Face tokens", "hf_", "[A-Za-z0-9]{10,}"),
    ("npm tokens", "npm_", "[A-Za-z0-9]{10,}"),
    ("PyPI tokens", "pypi-", "[A-Za-z0-9_-]{10,}"),
    ("Groq keys", "gsk_", "[A-Za-z0-9]{10,}"),
    ("xAI keys", "xai-", "[A-Za-z0-9_-]{10,}"),
    ("Langfuse public keys", "pk-lf-", "[A-Za-z0-9_-]{10,}"),
    ("Replicate tokens", "r8_", "[A-Za-z0-9]{16,}"),
    ("Perplexity keys", "pplx-", "[A-Za-z0-9]{16,}"),
    ("Fireworks keys", "fw_", "[A-Za-z0-9]{16,}"),
    ("NVIDIA API keys", "nvapi-", "[A-Za-z0-9_-]{16,}"),
    ("DigitalOcean tokens", "do[opr]_v1_", "[a-f0-9]{32,}"),
    ("Shopify access tokens and secrets", "shp(?:at|ss|ca|pa)_", "[a-fA-F0-9]{16,}"),
    ("Atlassian API tokens", "ATATT3", "[A-Za-z0-9_=-]{16,}"),
    ("Databricks tokens", "dapi", "[a-f0-9]{32}"),
    ("Linear API keys", "lin_api_", "[A-Za-z0-9]{16,}"),
    ("Notion tokens", "ntn_", "[A-Za-z0-9]{16,}"),
    ("Notion legacy integration secrets", "secret_", "[A-Za-z0-9]{43}"),
    ("Doppler tokens", r"dp\.(?:pt|st|sa|ct|scim|audit)\.", "[A-Za-z0-9]{16,}"),
    ("HashiCorp Vault tokens", r"hv[sbr]\.", "[A-Za-z0-9_-]{16,}"),
    ("Pulumi access tokens", "pul-", "[a-f0-9]{40}"),
    ("Postman API keys", "PMAK-", "[a-f0-9]{24}-[a-f0-9]{34}"),
    ("Figma tokens", "figd_", "[A-Za-z0-9_-]{16,}"),
    ("Square tokens", "sq0(?:atp|csp)-", "[A-Za-z0-9_-]{16,}"),
    ("Meta (Facebook) access tokens", "EAA[A-Za-z0-9]", "[A-Za-z0-9]{30,}"),
    ("age secret keys", "AGE-SECRET-KEY-1", "[A-Z0-9]{40,}"),
    ("Tailscale keys", "tskey-(?:api|auth|client|scim|webhook)-", "[A-Za-z0-9-]{10,}"),
    ("Grafana tokens", "gl(?:c|sa)_", "[A-Za-z0-9_=+/]{16,}"),
    ("New Relic user keys", "NRAK-", "[A-Z0-9]{20,}"),
    ("Sentry auth tokens", "sntry[su]_", "[A-Za-z0-9_=+/]{16,}"),
    ("SendGrid keys", r"SG\.", r"[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("Mailgun keys", "key-", "[0-9a-f]{32}"),
    ("Twilio API key sids", "SK", "[0-9a-f]{32}"),
    ("Docker Hub tokens", "dckr_pat_", "[A-Za-z0-9_-]{16,}"),
    ("Supabase tokens and secret keys", "(?:sbp_|sb_secret_)", "[A-Za-z0-9_-]{16,}"),
    ("Render keys", "rnd_", "[A-Za-z0-9]{16,}"),
    ("Brevo (Sendinblue) keys", "xkeysib-", "[a-f0-9]{32,}-[A-Za-z0-9]{8,}"),
    ("Cohere / Mistral style keys are caught by name (API_KEY=..., Authorization: Bearer ...)", "(?!)", ""),
)
"""Published self-identifying key formats: (provider, prefix, body)."""

# One lookbehind in front of the alternation (not one per alternative): the engine tests it once per position
# and tries the prefixes only at a word's start, some twenty times faster on text that holds a trigger.
_VENDOR_RE: Final = re.compile(
    "(?<![A-Za-z0-9])(?:"
    + "|".join(f"{prefix}(?P<b{i}>{body})" for i, (_, prefix, body) in enumerate(KEY_FORMATS) if body)
    + ")"
)

_KEY_TAIL: Final = re.compile(r"[A-Za-z0-9_.+/=~-]*[A-Za-z0-9_=]|")
"""What is glued to a key's end and goes with it: the characters keys are written with, ending where a key
could (not on a sentence's ``.`` or a path's ``/``)."""

_KEY_RUN_RE: Final = re.compile(r"[A-Za-z0-9_.+/=~-]{13,}")
"""A run of the characters every prefix and body above is written with, at least as long as the shortest key
(``hf_`` and ten characters)."""

# Discord bot tokens: the bot's id in base64 (it starts M, N or O), a timestamp, an HMAC; no literal prefix.
_DISCORD_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_.-])")
_JWT_RE: Final = re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_=-]{10,}(?:\.[A-Za-z0-9_=-]+){0,2}")
_PEM_RE: Final = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|.*)",
    re.DOTALL,
)
_PUTTY_RE: Final = re.compile(r"Private-Lines: \d+(?:\r?\n[A-Za-z0-9+/=]+)+")
# Webhook URLs whose path is the credential: the secret part only.
_WEBHOOK_RE: Final = re.compile(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<a>[A-Za-z0-9/_-]{8,})"
    r"|discord(?:app)?\.com/api/webhooks/\d+/(?P<b>[A-Za-z0-9_-]{16,})"
    r"|api\.telegram\.org/bot(?P<c>\d{6,}:[A-Za-z0-9_-]{20,})"
)
_TELEGRAM_RE: Final = re.compile(r"(?<![A-Za-z0-9])\d{8,10}:AA[A-Za-z0-9_-]{30,}")
# Microsoft Entra ID (Azure AD) client secrets: three characters, a digit, "Q~", 31-34 characters.
_AZURE_SECRET_RE: Final = re.compile(r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}")


def _generated(text: str) -> bool:
    """A digit, or both cases, or 16+ capitals: what a generated key body has and an English word does not."""
    if len(text) >= 16 and text.isupper():
        return True
    has_lower = has_upper = False
    for c in text:
        if c.isdigit():
            return True
        if c.islower():
            has_lower = True
        elif c.isupper():
            has_upper = True
    return has_lower and has_upper


def find_token_spans(text: str, spans: list[tuple[int, int]], gated: bool = True) -> None:
    """Append the span of every self-identifying credential in ``text``.

    ``gated=False`` runs every family without its trigger test (the tests' reference: the triggers are exact).
    """
    every = not gated
    if every or "PRIVATE KEY" in text:
        spans.extend(m.span() for m in _PEM_RE.finditer(text))
    if every or "Private-Lines:" in text:
        spans.extend(m.span() for m in _PUTTY_RE.finditer(text))
    if every or "eyJ" in text:
        spans.extend(m.span() for m in _JWT_RE.finditer(text))
    # Every key lies inside one run of key characters at least as long as the shortest format: the runs are found
    # at C speed and the formats tried only inside them (exact: the lookbehind still sees the text before a run).
    for run in _KEY_RUN_RE.finditer(text):
        covered = -1
        for m in _VENDOR_RE.finditer(text, run.start(), run.end()):
            if m.start() < covered:
                continue  # inside the tail of the key before it: already in its span (and no rescan to the end)
            if _generated(m.group(m.lastgroup or 0)):
                # A key is a whole token: what is glued to its end (another key written right after it,
                # ``AKIA…LTAI…`` or ``AKIA…dp.st.…``, whose own prefix has no boundary before it) goes with it.
                tail = _KEY_TAIL.match(text, m.end())
                assert tail is not None  # its empty alternative matches anywhere
                covered = tail.end()
                spans.append((m.start(), covered))
        if run.end() - run.start() >= 59:
            spans.extend(m.span() for m in _DISCORD_RE.finditer(text, run.start(), run.end()))
    if every or "Q~" in text:
        spans.extend(m.span() for m in _AZURE_SECRET_RE.finditer(text))
    if every or ":AA" in text:
        spans.extend(m.span() for m in _TELEGRAM_RE.finditer(text))
    if every or "hooks.slack.com" in text or "/api/webhooks/" in text or "api.telegram.org" in text:
        for m in _WEBHOOK_RE.finditer(text):
            group = m.lastgroup
            if group is not None:
                spans.append(m.span(group))
