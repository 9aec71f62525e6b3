"""Credentials that name themselves: published key formats, JWTs, private-key blocks, webhook URLs (OBS-58).

Each format is a prefix (a literal; for two, a key id and a dot) and a body (:data:`KEY_FORMATS`, and
:data:`MORE_KEY_FORMATS`; ``docs/privacy.md`` lists them with the provider), written from the provider's published
shape (prefix, alphabet, length). A match is the whole credential, prefix included, and is taken only when:

* the prefix is not glued to a preceding letter or digit (``task-...``, ``mask_live_...`` never match) unless that
  is the letter of a short option starting a word (``-pghp_…``: the key given glued to ``-p``), nor through
  ``+ / - _`` to a long run of base64 (a key-looking piece inside a ``data:image/png;base64,...`` blob or a
  base64url blob is part of that blob, not a key);
* the body looks generated: a digit, or upper and lower case mixed, and not only words (``sk-learn-compatible-v2``
  is three words and a version, ``am_i_ok`` is too short).

What is glued to a key's end (another key written right after it, ``AKIA…LTAI…``) goes with it, up to a path or
a file name after it: ``ghp_…/models/config.json``, ``…sk-proj-….json`` and the credential scope after an AWS
access key id (``AKIA…/20240101/us-east-1/s3/aws4_request``) stay.

Formats without a literal prefix are found by their structure: a JWT is three dot-separated base64url parts
(header ``eyJ…``, payload ``ey…``, signature, which may be empty; a JWE five), standing alone (a single ``eyJ…``
part, as in a GraphQL cursor or a source map, is base64 JSON, not a token); a Discord bot token's first part is the
base64 of the bot's numeric id; a Telegram bot token is a bot id, a colon and 35 characters (after ``bot`` too); a
Fal key is a UUID, a colon and 32 hex digits; a Mailgun key (the current form) is 32, 8 and 8 hex digits joined by
``-``; a Mailchimp key is 32 hex digits, ``-us`` and a data centre's number; a ``.pgpass`` line is
``host:port:database:user:password`` (its password only); a MySQL native password hash
is ``*`` and 40 upper-case hex digits.

:func:`find_token_spans` appends ``(start, end)`` spans; it runs each family but the published formats only
when its cheap trigger substring occurs.

Over 400 lines on purpose: it is mostly the table of published key formats, one row per provider, kept
beside the one reader that builds their patterns.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import string
from collections.abc import Iterable
from typing import Final

from .scrub_names import STRONG, camel_name, english_word, kept_value

__all__ = ["KEY_FORMATS", "MORE_KEY_FORMATS", "find_token_spans"]

KEY_FORMATS: Final[tuple[tuple[str, str, str], ...]] = (
    # (provider, prefix regex, body regex)
    ("OpenAI / Anthropic / OpenRouter / DeepSeek / Langfuse secret keys", "sk-", "[A-Za-z0-9_-]{16,}"),
    ("Stripe secret and restricted keys", "[sr]k_(?:live|test|prod)_", "[A-Za-z0-9]{10,}"),
    ("ElevenLabs API keys", "sk_", "[a-f0-9]{32,}"),
    ("Stripe webhook signing secrets", "whsec_", "[A-Za-z0-9+/=]{16,}"),
    ("GitHub tokens (classic, OAuth, user-to-server, server-to-server, refresh)", "gh[pousr]_", "[A-Za-z0-9]{10,}"),
    ("GitHub fine-grained personal access tokens", "github_pat_", "[A-Za-z0-9_]{10,}"),
    ("GitLab personal / deploy / runner / trigger / agent / workspace tokens",
     # a routable token ends in a dot and nine characters (the instance's and its checksum)
     "gl(?:pat|dt|rt|rtr|ptt|ft|imt|oas|cbt|soat|ffct|agent|wt)-",
     r"[A-Za-z0-9_-]{16,}(?:\.[0-9a-z]{9}(?![A-Za-z0-9]))?"),
    ("GitLab runner registration tokens", "GR1348941", "[A-Za-z0-9_-]{20,}"),
    ("Slack bot / user / workspace tokens", r"xox(?:e\.xox)?[abposer]-", "[A-Za-z0-9-]{10,}"),
    ("Slack app-level tokens", "xapp-", "[A-Za-z0-9-]{10,}"),
    ("Google API keys", "AIza", "[A-Za-z0-9_-]{20,}"),
    ("Google OAuth client secrets", "GOCSPX-", "[A-Za-z0-9_-]{16,}"),
    ("Google OAuth access tokens", r"ya29\.", "[A-Za-z0-9_-]{20,}"),
    ("Google OAuth refresh tokens", "1//0", "[A-Za-z0-9_-]{40,}"),
    ("AWS access key ids", "(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|A3T[A-Z0-9])", "[A-Z0-9]{12,}"),
    ("Alibaba Cloud access key ids", "LTAI", "[A-Za-z0-9]{12,}"),
    ("Tencent Cloud secret ids", "AKID", "[A-Za-z0-9]{13,}"),
    ("Hugging Face tokens", "hf_", "[A-Za-z0-9]{10,}"),
    ("Hugging Face organization API tokens", "api_org_", "[A-Za-z0-9]{30,}"),
    ("npm tokens", "npm_", "[A-Za-z0-9]{10,}"),
    ("PyPI tokens", "pypi-", "[A-Za-z0-9_-]{10,}"),
    ("RubyGems API keys", "rubygems_", "[a-f0-9]{48}"),
    ("Groq keys", "gsk_", "[A-Za-z0-9]{10,}"),
    ("xAI keys", "xai-", "[A-Za-z0-9_-]{10,}"),
    ("Langfuse public keys", "pk-lf-", "[A-Za-z0-9_-]{10,}"),
    ("LangSmith personal access tokens and service keys", "lsv2_(?:pt|sk)_", "[a-f0-9]{32}_[a-f0-9]{10}"),
    ("Replicate tokens", "r8_", "[A-Za-z0-9_-]{16,}"),
    ("Perplexity keys", "pplx-", "[A-Za-z0-9]{16,}"),
    ("Fireworks keys", "(?:fw[_-]|fpk_)", "[A-Za-z0-9]{20,}"),
    ("Together AI keys", "tgp_v1_", "[A-Za-z0-9_-]{32,}"),
    ("Cerebras keys", "csk-", "[A-Za-z0-9]{32,}"),
    ("Voyage AI keys", "pa-", "[A-Za-z0-9_-]{40,}"),
    ("Jina AI keys", "jina_", "[A-Za-z0-9_-]{32,}"),
    ("LlamaCloud keys", "llx-", "[A-Za-z0-9]{32,}"),
    ("Pinecone keys", "pcsk_", "[A-Za-z0-9_]{40,}"),
    ("Zhipu AI (BigModel / Z.ai) keys", r"[a-f0-9]{32}\.",
     "(?=[A-Za-z0-9]{0,15}[A-Z])(?=[A-Za-z0-9]{0,15}[a-z])[A-Za-z0-9]{16}"),
    ("Tavily keys", "tvly-", "(?:(?:dev|prod)-)?[A-Za-z0-9]{20,}"),
    ("Firecrawl keys", "fc-", "[a-f0-9]{32}"),
    ("Exa keys", "exa_", "[A-Za-z0-9]{16,}"),
    ("Fal keys", "fal_", "[A-Za-z0-9_-]{16,}"),
    ("Browserbase keys", "bb_(?:live|test)_", "[A-Za-z0-9_-]{16,}"),
    ("Codex / Fernet encrypted tokens", "gAAAAA",  # a whole token (73 bytes at least: 98 characters and "==") is
     # one whatever it holds
     "(?:(?=[A-Za-z0-9_-]{0,40}[a-z])(?=[A-Za-z0-9_-]{0,40}[0-9_-])[A-Za-z0-9_-]{30,}|[A-Za-z0-9_-]{92,})={0,2}"),
    ("AgentMail keys", "am_", "[A-Za-z0-9_-]{20,}"),
    ("Matrix access and refresh tokens", "sy[tr]_", "[A-Za-z0-9_-]{20,}"),
    ("Mem0 keys", "(?:mem0_|m0-)", "[A-Za-z0-9]{20,}"),
    ("RetainDB keys", "retaindb_", "[A-Za-z0-9]{16,}"),
    ("Hindsight keys", "hsk-", "[A-Za-z0-9]{16,}"),
    ("ByteRover keys", "brv_", "[A-Za-z0-9]{16,}"),
    ("NVIDIA API keys", "nvapi-", "[A-Za-z0-9_-]{16,}"),
    ("DigitalOcean tokens", "do[opr]_v1_", "[a-f0-9]{32,}"),
    ("Shopify access tokens and secrets", "shp(?:at|ss|ca|pa)_", "[a-fA-F0-9]{16,}"),
    ("Atlassian API tokens", "AT[AC]TT3", "[A-Za-z0-9_=-]{16,}"),
    ("Bitbucket app passwords", "ATBB", "[A-Za-z0-9]{32,}"),
    ("Databricks tokens", "dapi", "[a-f0-9]{32}"),
    ("Linear API keys", "lin_api_", "[A-Za-z0-9]{16,}"),
    ("Notion tokens", "ntn_", "[A-Za-z0-9]{16,}"),
    ("Notion legacy integration secrets", "secret_", "[A-Za-z0-9]{43}"),
    ("Airtable personal access tokens", "pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    # a service token names its config between ``st.`` and the secret (``dp.st.prd.…``, ``dp.st.dev_personal.…``)
    ("Doppler tokens", r"dp\.(?:st\.(?:[a-z0-9_-]{1,64}\.)?|(?:pt|sa|ct|scim|audit)\.)", "[A-Za-z0-9]{16,}"),
    ("HashiCorp Vault tokens", r"hv[sbr]\.", "[A-Za-z0-9_-]{16,}"),
    ("HashiCorp Terraform Cloud tokens", r"[A-Za-z0-9]{14}\.atlasv1\.", "[A-Za-z0-9_=-]{60,}"),
    ("Pulumi access tokens", "pul-", "[a-f0-9]{40}"),
    ("Postman API keys", "PMAK-", "[a-f0-9]{24}-[a-f0-9]{34}"),
    ("Figma tokens", "fig(?:d|p|[uo][rh]?)_", "[A-Za-z0-9_=-]{16,}"),
    # an access token is ``EAAA`` and 60 characters: a name's words glued after them (``_backup``) are the name's,
    # anything else glued after them (another key written right after it) goes with it
    ("Square tokens", "(?:sq0(?:atp|csp)-|EAAA)",
     "(?:(?<=EAAA)[A-Za-z0-9_-]{60}(?:[A-Za-z0-9_-]*?(?=[_-][a-z0-9]{1,16}(?:[_-][a-z0-9]{1,16}){0,3}"
     "(?![A-Za-z0-9_-]))|[A-Za-z0-9_-]*)|(?<!EAAA)[A-Za-z0-9_-]{16,})"),
    ("Meta (Facebook) access tokens", "EAA[A-Za-z0-9]", "[A-Za-z0-9]{30,}"),
    ("age secret keys", "AGE-SECRET-KEY-1", "[A-Z0-9]{40,}"),
    ("1Password service account tokens", "ops_eyJ", "[A-Za-z0-9+/_-]{40,}={0,3}"),
    ("Tailscale keys", "tskey-(?:api|auth|client|scim|webhook)-", "[A-Za-z0-9-]{10,}"),
    ("Grafana tokens", "gl(?:c|sa)_", "[A-Za-z0-9_=+/]{16,}"),
    ("New Relic user keys", "NRAK-", "[A-Z0-9]{20,}"),
    ("Sentry auth tokens", "sntry[su]_", "[A-Za-z0-9_=+/]{16,}"),
    ("SendGrid keys", r"SG\.", r"[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    # ``key-`` also starts words glued to a path or a name (``cache-key-<md5>``, ``objects/key-<md5>.json``)
    ("Mailgun keys", "(?<![/._-])key-", "[0-9a-f]{32}"),
    ("Twilio API key sids", "SK", "[0-9a-f]{32}"),
    ("Docker Hub tokens", "dckr_(?:pat|oat)_", "[A-Za-z0-9_-]{16,}"),
    ("Supabase tokens and secret keys", "(?:sbp_|sb_secret_)", "[A-Za-z0-9_-]{16,}"),
    ("Neon API keys", "napi_", "[A-Za-z0-9]{40,}"),
    # a dot inside: the piece after it is eight characters at least, a capital or a digit among them (a file's
    # extension after the token, ``….parquet``, is not the token's)
    ("PlanetScale tokens and passwords", "pscale_(?:tkn|pw|oauth)_",
     r"[A-Za-z0-9_=-]{4,}(?:\.(?=[a-z_=-]{0,63}[A-Z0-9])[A-Za-z0-9_=-]{8,})+|[A-Za-z0-9_=-]{32,}"),
    ("Heroku API keys", "HRKU-", "[A-Za-z0-9_-]{30,}"),
    ("Netlify personal access tokens", "nfp_", "[A-Za-z0-9_]{32,}"),
    ("Cloudflare Origin CA keys", r"v1\.0-", "[a-f0-9]{24}-[a-f0-9]{100,}"),
    ("Mapbox secret tokens", r"sk\.eyJ", r"[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
    ("Render keys", "rnd_", "[A-Za-z0-9]{16,}"),
    ("Brevo (Sendinblue) keys", "xkeysib-", "[a-f0-9]{32,}-[A-Za-z0-9]{8,}"),
    ("Cohere / Mistral style keys are caught by name (API_KEY=..., Authorization: Bearer ...)", "(?!)", ""),
)
"""Published self-identifying key formats: (provider, prefix, body)."""

_ALONE: Final = "(?![A-Za-z0-9_-])"
"""The end of a key whose published length is exact: no key character glued after it."""

MORE_KEY_FORMATS: Final[tuple[tuple[str, str, str], ...]] = (
    # (provider, prefix regex, body regex), read exactly as :data:`KEY_FORMATS`; a short prefix (``s.``, ``00``,
    # ``ak-``) comes with its exact published length and alphabet, and its body must look random
    # (:data:`_SHORT_PREFIXED`), so that words, versions and hashes which start like it stay
    ("OpenAI session keys", "sess-", "[A-Za-z0-9]{40,}"),
    ("Vercel access tokens and API keys", "vc[pirak]_", "[A-Za-z0-9_-]{24,}"),
    ("Okta API tokens", "00", "[A-Za-z0-9_-]{39}[A-Za-z0-9_]" + _ALONE),
    ("Okta API tokens after the SSWS scheme", "(?<=SSWS )00", "[A-Za-z0-9_-]{30,}"),
    ("Modal token ids and secrets", "a[ks]-", "[A-Za-z0-9]{22}" + _ALONE),
    ("NuGet API keys", "oy2", "[a-z0-9]{43}" + _ALONE),
    ("HashiCorp Vault legacy service tokens", r"s\.", "[A-Za-z0-9]{24}(?![A-Za-z0-9_-]|\\.[A-Za-z0-9])"),
    ("HashiCorp Vault legacy batch tokens", r"b\.", "[A-Za-z0-9_-]{60,}"),
    ("New Relic ingest, browser and admin keys", "NR(?:II|JS|AA)-", "[A-Za-z0-9_-]{19,}"),
    ("Contentful personal access tokens", "CFPAT-", "[A-Za-z0-9_-]{30,}"),
    ("1Password secret keys", "A3-",
     "[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}" + _ALONE),
    ("Adobe client secrets", "p8e-", "[A-Za-z0-9]{32}" + _ALONE),
    ("Artifactory API keys", "AKCp", "[A-Za-z0-9]{69}" + _ALONE),
    ("Artifactory reference tokens", "cmVmd", "[A-Za-z0-9]{59}" + _ALONE),
    ("Authress service client access keys", "(?:sc|ext|scauth|authress)_",
     r"[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}"),
    ("ClickHouse Cloud API secret keys", "4b1d",
     "(?=[A-Za-z0-9]{0,37}[A-Z])(?=[A-Za-z0-9]{0,37}[a-z])[A-Za-z0-9]{38}" + _ALONE),
    ("Clojars deploy tokens", "CLOJARS_", "[A-Za-z0-9]{60}" + _ALONE),
    ("Duffel API tokens", "duffel_(?:test|live)_", "[A-Za-z0-9_=-]{43}" + _ALONE),
    ("Dynatrace API tokens", r"dt0c01\.", r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}" + _ALONE),
    ("EasyPost API keys", "EZ[AT]K", "[A-Za-z0-9]{54}" + _ALONE),
    ("Flutterwave keys", "FLW(?:SEC|PUB)K(?:_TEST)?-", "[A-Za-z0-9]{12,}(?:-X)?" + _ALONE),
    ("Fly.io tokens", "(?:fo1_|fm1[ar]_|fm2_)", "[A-Za-z0-9_+/-]{40,}={0,3}"),
    ("Frame.io API tokens", "fio-u-", "[A-Za-z0-9_=-]{64}" + _ALONE),
    ("Grafana legacy API keys", "eyJrIjoi", "[A-Za-z0-9]{60,400}={0,3}"),
    ("Harness API keys and service account tokens", r"[ps]at\.",
     r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}" + _ALONE),
    ("Infracost API tokens", "ico-", "[A-Za-z0-9]{32}" + _ALONE),
    ("42 Intra client secrets", "s-s4t2(?:ud|af)-", "[a-f0-9]{64}" + _ALONE),
    ("Octopus Deploy API keys", "API-", "[A-Z0-9]{26}" + _ALONE),
    ("OpenShift user tokens", "sha256~", "[A-Za-z0-9_-]{43}" + _ALONE),
    ("Prefect API keys", "pnu_", "[A-Za-z0-9]{36}" + _ALONE),
    ("ReadMe API keys", "rdme_", "[a-z0-9]{70}" + _ALONE),
    ("Scalingo API tokens", "tk-us-", "[A-Za-z0-9_-]{48}" + _ALONE),
    ("SettleMint access tokens", "sm_[aps]at_", "[A-Za-z0-9]{16}" + _ALONE),
    ("Shippo API tokens", "shippo_(?:live|test)_", "[a-fA-F0-9]{40}" + _ALONE),
    ("Sourcegraph access tokens", "sgp_", "(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}" + _ALONE),
    ("PostHog project and personal API keys", "ph[cx]_", "[A-Za-z0-9_]{40,}"),
    ("CircleCI personal API tokens", "CCIPAT_", "[A-Za-z0-9]{22}_[a-fA-F0-9]{40}" + _ALONE),
    ("Buildkite API tokens", "bkua_", "[a-z0-9]{40}" + _ALONE),
    ("Apify API tokens", "apify_api_", "[A-Za-z0-9-]{36}" + _ALONE),
    ("HubSpot private app tokens", "pat-(?:na|eu)1-",
     "[A-Za-z0-9]{8}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{12}" + _ALONE),
    ("Typeform personal access tokens", "tfp_", "[A-Za-z0-9_]{40,59}" + _ALONE),
    ("Pagar.me API keys", "ak_(?:live|test)_", "[A-Za-z0-9]{30}" + _ALONE),
    ("Razorpay key ids", "rzp_(?:live|test)_", "[A-Za-z0-9]{14}" + _ALONE),
    ("ClickUp personal tokens", "pk_[0-9]{6,10}_", "[0-9A-Z]{32}" + _ALONE),
    ("LaunchDarkly API and SDK keys", "(?:api|sdk)-",
     "[a-f0-9]{8}-[a-f0-9]{4}-4[a-f0-9]{3}-[a-f0-9]{4}-[a-f0-9]{12}" + _ALONE),
    ("Intercom access tokens", "dG9rO", "[A-Za-z0-9+/]{54}=" + _ALONE),
    ("Dropbox short-lived access tokens", r"sl\.", "[A-Za-z0-9_-]{120,}"),
    ("Portainer access tokens", "ptr_", "[A-Za-z0-9/_+=-]{40,60}"),
    ("Nightfall API keys", "NF-", "[A-Za-z0-9]{32}" + _ALONE),
    ("Lob and GoCardless keys", "(?:live|test|sandbox)_", "[A-Za-z0-9_-]{35,40}" + _ALONE),
    ("Resend API keys", "re_", "[1-9A-HJ-NP-Za-km-z]{8}_[1-9A-HJ-NP-Za-km-z]{24}" + _ALONE),
    ("Stripe payment and setup intent client secrets", "(?:pi|seti)_", "[A-Za-z0-9]{14,}_secret_[A-Za-z0-9]{16,}"),
    ("Rootly API keys", "rootly_", "[a-f0-9]{64}" + _ALONE),
    ("Adafruit IO keys", "aio_", "[A-Za-z0-9]{28}" + _ALONE),
    ("Sourcegraph Cody gateway keys", "slk_", "[a-f0-9]{64}" + _ALONE),
    ("Endor Labs API keys and secrets", r"endr\+", "[A-Za-z0-9]{16,}"),
    ("Novita AI keys and other keys after sk_", "sk_", "[A-Za-z0-9]{32,}" + _ALONE),
)
"""Further published formats (same shape as :data:`KEY_FORMATS`, found the same way). Formats without a literal
prefix are found by their structure (:func:`find_token_spans`): Fal keys (a UUID key id, a colon and 32 hex
digits), Mailgun's current keys (32, 8 and 8 hex digits joined by ``-``), and a ``.pgpass`` line's password."""

_SHORT_PREFIXED: Final = frozenset({"Okta API tokens", "Modal token ids and secrets", "Portainer access tokens",
                                    "Nightfall API keys", "Lob and GoCardless keys", "Resend API keys",
                                    "Adafruit IO keys", "HashiCorp Vault legacy service tokens",
                                    "HashiCorp Vault legacy batch tokens", "Novita AI keys and other keys after sk_"})
"""Formats whose prefix is short or a word (``s.``, ``NF-``, ``live_``): the body must also look random
(:func:`_random_body`)."""
_LONG_FORMATS: Final = frozenset({"Codex / Fernet encrypted tokens", "1Password service account tokens"})
"""Formats whose tokens may be a kilobyte or more of base64 themselves: never read as a blob that starts like a key."""

_FORMATS: Final = KEY_FORMATS + MORE_KEY_FORMATS
_LONG_GROUPS: Final = frozenset(f"b{i}" for i, (name, _, _) in enumerate(_FORMATS) if name in _LONG_FORMATS)
"""The groups of the formats whose tokens may run to kilobytes of base64 themselves (encrypted content)."""
_RANDOM_GROUPS: Final = frozenset(f"b{i}" for i, (name, _, _) in enumerate(_FORMATS) if name in _SHORT_PREFIXED)

_DOTTED: Final = frozenset({"Zhipu AI (BigModel / Z.ai) keys", "HashiCorp Terraform Cloud tokens"})
"""Formats whose prefix is no literal but a key id and a dot: the alternation tries them only in a text that holds
what follows their dot (:data:`_DOTTED_HINT`, ``.atlasv1.``), as every other alternative fails at its first
character and these would read up to 32 characters at every word."""
_DOTTED_HINT: Final = re.compile(r"\.[A-Za-z0-9]{16}")


def _alternation(dotted: bool, start: str = "(?<![A-Za-z0-9])") -> re.Pattern[str]:
    # One lookbehind in front of the alternation (not one per alternative): the engine tests it once per position
    # and tries the prefixes only at a word's start, some twenty times faster on text that holds a trigger.
    return re.compile(start + "(?:" + "|".join(
        f"{prefix}(?P<b{i}>{body})" for i, (name, prefix, body) in enumerate(_FORMATS)
        if body and (dotted or name not in _DOTTED)) + ")")


_VENDOR_RE: Final = _alternation(dotted=True)
_VENDOR_LEAN_RE: Final = _alternation(dotted=False)
_VENDOR_GLUED_RE: Final = _alternation(dotted=True, start="")
"""The formats tried right after a short option's letter that starts a word (``-pghp_…``, ``-ppypi-…``: ``twine
upload -p…``, ``docker login -p…``, the key glued to the option), where the prefix is glued to a letter."""
_OPTION_LEADERS: Final = frozenset("\"'[(,")

_TAIL_END_CHARS: Final = frozenset(".+/~-")
"""What is glued to a key's end goes with it: the rest of its run of key characters (another key written right
after it, whose own prefix has no boundary before it), not ending on a sentence's ``.`` or a path's ``/``."""

_B64_WINDOW: Final = 64
_B64_RUN: Final = re.compile(rf"[A-Za-z0-9+/_-]{{{_B64_WINDOW}}}")
_B64_SPLIT: Final = re.compile(r"[+/_-]")

_KEY_RUN_RE: Final = re.compile(r"[A-Za-z0-9_.+/=~-]{13,}")
"""A run of the characters every prefix and body above is written with, at least as long as the shortest key
(``hf_`` and ten characters)."""

# Discord bot tokens: the bot's id in base64 (it starts M, N or O), a timestamp, an HMAC; no literal prefix. A dot
# after the HMAC is a sentence's or a file name's (``….json``): the id's check (``_discord_id``) is what tells a token.
_DISCORD_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<id>[MNO][A-Za-z0-9_-]{22,27})\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])")
_DISCORD_MIN: Final = 23 + 1 + 6 + 1 + 27
# JWT (RFC 7519, 7515): header.payload.signature, header and payload base64url JSON (``eyJ…``, ``ey…``), the
# signature empty for an unsecured token (its final dot stays outside the span, like a sentence's); a JWE (RFC 7516)
# has five parts. Not glued to a letter or digit before it; after a name's ``-`` or ``_`` it is one (``deploy-eyJ…``,
# ``backup_eyJ….json``: a blob of base64url holds no dot, so only a token reads on). A lone ``eyJ…`` part is no token.
_B64URL: Final = "[A-Za-z0-9_-]"
_JWT_RE: Final = re.compile(
    rf"(?<![A-Za-z0-9])eyJ{_B64URL}{{10,}}={{0,2}}\."
    rf"(?:{_B64URL}*\.{_B64URL}+\.{_B64URL}+\.{_B64URL}+"
    rf"|ey{_B64URL}{{2,}}={{0,2}}(?:\.{_B64URL}+={{0,2}}|(?=\.)))")
_PEM_RE: Final = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|.*)",
    re.DOTALL,
)
_OPENVPN_KEY_RE: Final = re.compile(
    r"-----BEGIN OpenVPN Static key V1-----\r?\n(?P<k>[0-9a-fA-F]{16,64}(?:\r?\n[0-9a-fA-F]{16,64}){0,63})"
    r"(?=\r?\n-----END OpenVPN Static key V1-----)")
"""An OpenVPN static key (``tls-auth``, ``tls-crypt``, ``secret``): the hex lines between its two markers, which stay
(as ``openvpn --genkey`` writes it, and inline in a ``.ovpn`` profile's ``<tls-auth>``)."""
_PUTTY_RE: Final = re.compile(r"Private-Lines: \d+\r?\n(?P<k>[A-Za-z0-9+/=]+(?:\r?\n[A-Za-z0-9+/=]+)*)(?=\r?\n|$)")
"""A PuTTY key file's private lines: the base64 lines after ``Private-Lines: N``, each a whole line (the label and
the ``Private-MAC:`` line after them stay)."""
_AWS_PAIR_RE: Final = re.compile(
    r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?:[ \t]*[/:,|;=][ \t]*|[ \t]+|[ \t]*\r?\n[ \t]*)"
    r"(?P<s>[A-Za-z0-9+/]{40})(?![A-Za-z0-9+/=])")
"""An AWS access key id and, after a separator (`` / ``, ``:``, ``,``, a blank, a line break), the 40 base64
characters of the secret access key written beside it (``AKIA… / wJalr…``, ``AKIA…:wJalr…``): the secret has no
prefix of its own, its neighbour says what it is."""
_PEM_BASE64_RE: Final = re.compile(r"(?<![A-Za-z0-9+/])LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=])")
"""A PEM document encoded in base64 on one line (``LS0tLS1CRUdJTi`` is ``-----BEGIN``): a Kubernetes secret's
``tls.key``, ``echo … | base64 -d > id_rsa``; hidden when its header says it is a private key."""


def _encoded_private_key(value: str) -> bool:
    """Whether the base64 ``value`` decodes to a PEM document whose header names a private key."""
    head = value[:64]
    try:
        decoded = base64.b64decode(head[:len(head) - len(head) % 4])
    except ValueError:
        return False
    return b"PRIVATE KEY" in decoded


# Webhook URLs whose path is the credential: the secret part only.
_WEBHOOK_RE: Final = re.compile(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<a>[A-Za-z0-9/_-]{8,})"
    r"|discord(?:app)?\.com/api/webhooks/\d+/(?P<b>[A-Za-z0-9_-]{16,})"
    r"|api\.telegram\.org/bot(?P<c>\d{6,}:[A-Za-z0-9_-]{20,})"
    r"|/IncomingWebhook/(?P<d>[A-Za-z0-9]{32}/[A-Za-z0-9-]{36}(?:/[A-Za-z0-9_-]{20,})?)"  # Microsoft Teams
    r"|hooks\.zapier\.com/hooks/catch/\d+/(?P<e>[A-Za-z0-9]{6,})"
    r"|\.tines\.com/webhook/(?P<f>[a-z0-9]{32}/[a-z0-9]{32})"
)
# Telegram bot tokens: the bot's id (7 to 11 digits so far), a colon, 35 base64url characters; alone or after
# ``bot`` (``bot123456789:AA…`` in an API URL's path); the span is the id and the secret. Found from the colon, at C
# speed (:data:`_AFTER_COLON_RE`), the id before it checked by :func:`_telegram_start`.
_ALNUM: Final = frozenset(string.ascii_letters + string.digits)
_LETTERS: Final = frozenset(string.ascii_letters)
# Microsoft Entra ID (Azure AD) client secrets: three characters, a digit, "Q~", 31-34 characters.
_AZURE_SECRET_RE: Final = re.compile(r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}")
# Fal keys: the key id (a UUID), a colon, the secret (32 hex digits); found from the colon (:data:`_AFTER_COLON_RE`),
# the UUID checked before it.
_UUID_RE: Final = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
_UUID_LEN: Final = 36
# Mailgun's current keys: 32 hex digits, then 8 and 8 more, joined by ``-``; found from the two short groups, the
# long one checked before them.
_MAILGUN_TAIL_RE: Final = re.compile(r"-[0-9a-f]{8}-[0-9a-f]{8}(?![A-Za-z0-9_-])")
_HEX32_RE: Final = re.compile(r"[0-9a-f]{32}")
# Mailchimp API keys: 32 hex digits, ``-us`` and the data centre's number; found from ``-us``, the hex checked before.
_MAILCHIMP_TAIL_RE: Final = re.compile(r"-us[0-9]{1,2}(?![A-Za-z0-9_-])")
_GLUE: Final = frozenset(string.ascii_letters + string.digits + "_.-/")
"""What a key without a literal prefix is never glued to (it would be the end of a longer id, a path or a name)."""
# A ``.pgpass`` line (PostgreSQL's password file): host, port, database, user and password joined by ``:`` (``\:``
# inside a field), the whole line; the host a name, an address or ``*``, the port digits or ``*``. A line may be
# numbered as a file viewer shows it (``12|…``, ``    12<tab>…``). Found from the port and what follows it to the
# line's end, the host then read from the line's start.
_PGPASS_HOST_MAX: Final = 300
"""How far before the port a ``.pgpass`` line's start is sought (a host name, an indent and a line number)."""
_PGPASS_FIELD: Final = r"(?:[^:\s\\\"]|\\[:\\])+"
_PGPASS_LINE_RE: Final = re.compile(
    r"[ \t]*(?:\d{1,7}[|\t][ \t]*)?(?P<h>[A-Za-z0-9_.*-]+|\[[0-9A-Fa-f:.]+\])"
    rf":(?:\*|\d{{1,5}}):{_PGPASS_FIELD}:{_PGPASS_FIELD}:(?P<v>{_PGPASS_FIELD})[ \t]*\r?")
"""A whole ``.pgpass`` line (a JSON string's whole text, when it stands in one)."""
_AFTER_COLON_RE: Final = re.compile(
    r":(?=[A-Za-z0-9_*-])(?:(?P<s>[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])|(?P<fal>[0-9A-Fa-f]{32})(?![A-Za-z0-9_-])"
    rf"|(?:\d{{1,5}}|\*):{_PGPASS_FIELD}:{_PGPASS_FIELD}:{_PGPASS_FIELD}[ \t]*(?:\r?$|(?=\"|\\[nr])))", re.MULTILINE)
"""What follows the colon of a Telegram bot token (``s``: 35 characters), of a Fal key (``fal``: 32 hex digits, a
UUID before the colon) or of a ``.pgpass`` line's host (the port and the three fields after it, to the line's
end, or of the JSON string it stands in). The lookahead spares the alternatives at every ``": "`` of a JSON
text."""


_PIECE_RE: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def _random_body(body: str) -> bool:
    """Both cases, and a digit or many short pieces: what a random body behind a two- or three-character prefix
    has, and a name (``s.getElementsByTagName``, ``as-ImportedModuleNames``) has not. A name's pieces are words
    (four letters on average and more); a random string changes case every two characters or so (of random bodies
    without a digit, about one in ten thousand has pieces that long)."""
    has_lower = has_upper = has_digit = False
    for c in body:
        if c.isdigit():
            has_digit = True
        elif c.islower():
            has_lower = True
        elif c.isupper():
            has_upper = True
    return has_lower and has_upper and (has_digit or len(body) < 4 * len(_PIECE_RE.findall(body)))


_DIGEST_NAME_RE: Final = re.compile(r"(?i:sha(?:1|224|256|384|512)|md5)[=:]\Z")
_DIGEST_SIZES: Final = {"sha1": 20, "sha224": 28, "sha256": 32, "sha384": 48, "sha512": 64, "md5": 16}


def _digest_after(text: str, start: int, end: int) -> bool:
    """Whether the run at ``start`` (to ``end``) is a digest its algorithm's name and ``=`` or ``:`` announce, as
    long as that digest's hexadecimal or base64 text (``sha256=sk_bJkC…``, 43 characters: a wheel's ``RECORD``)."""
    name = _DIGEST_NAME_RE.search(text, max(0, start - 7), start)
    if name is None:
        return False
    size = _DIGEST_SIZES[text[name.start():start - 1].lower()]
    return end - start in (2 * size, (4 * size + 2) // 3, 4 * ((size + 2) // 3))


def _free_start(text: str, start: int) -> bool:
    """Whether a key without a literal prefix may start at ``start``: not glued to a letter, a digit, ``_ . - /``
    (the end of a longer id, a path or a name), unless to the letter of a short option that starts a word
    (``-p<key>``)."""
    if start == 0 or text[start - 1] not in _GLUE:
        return True
    return (start >= 2 and text[start - 1] in _LETTERS and text[start - 2] == "-"
            and (start == 2 or text[start - 3].isspace() or text[start - 3] in _OPTION_LEADERS))


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


_WORD_SPLIT: Final = re.compile(r"[-_.]")


def _wordish(part: str) -> bool:
    """A piece of an identifier a person wrote: a lower-case or title-case word, a CamelCase name, a number of at
    most 4 digits (a year, a version), or 3 characters. A longer number is an id a generator wrote
    (``xoxb-1234567890-…``)."""
    return len(part) <= 3 or (part.isdigit() and len(part) <= 4) \
        or (part.isalpha() and (part.islower() or part.istitle())) or camel_name(part)


def _key_body(body: str) -> bool:
    """A body a generator wrote: :func:`_generated`, and not words, numbers and short pieces joined by ``- _ .``
    (``learn-compatible-v2``, ``2024-01-01``)."""
    if not _generated(body):
        return False
    parts = _WORD_SPLIT.split(body)
    return len(parts) == 1 or not all(_wordish(part) for part in parts)


def _in_blob(text: str, sep: int) -> bool:
    """Whether the ``+ / - _`` at ``sep`` continues a long run of base64: the :data:`_B64_WINDOW` characters before
    it are all base64 (either alphabet) with upper case, lower case and a digit, and either few separators or a
    long generated piece between them (a path has a separator every few letters: ``/home/me/projects/app/``)."""
    if sep < _B64_WINDOW or _B64_RUN.fullmatch(text, sep - _B64_WINDOW, sep) is None:
        return False
    window = text[sep - _B64_WINDOW:sep]
    if not (any(c.isdigit() for c in window) and any(c.islower() for c in window)
            and any(c.isupper() for c in window)):
        return False
    seps = window.count("+") + window.count("/") + window.count("-") + window.count("_")
    return seps <= 6 or seps <= 10 and any(
        len(piece) >= 10 and _generated(piece) and not piece.islower() and not piece.isupper()
        for piece in _B64_SPLIT.split(window))


_BLOB_TAIL: Final = 1024
"""How long a base64 run from a key-looking start must be before it may be read as a blob (no key of these formats
is a kilobyte long, or glued to a kilobyte of base64)."""


def _blob_after(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` goes on as a base64 blob: its first ``+ / - _`` at least :data:`_B64_WINDOW`
    characters in continues a long run of base64 (:func:`_in_blob`)."""
    for sep in (text.find(c, start + _B64_WINDOW, end) for c in "+/-_"):
        if sep >= 0 and _in_blob(text, sep):
            return True
    return False


def _path_like(part: str, dot: bool) -> bool:
    """A path or file-name component (``models``, ``config``, ``us-east-1``, ``aws4_request``, ``20240101``,
    ``README``, ``Users``; after a ``.``, a file extension: ``json``, ``parquet``, ``tar``), not a piece of a key: no
    capital but in a capitalised or upper-case word, no long run of digits and letters after a dot."""
    if any(c.isupper() for c in part):
        return len(part) < 16 and part.isalpha() and (part.istitle() or part.isupper())
    return not dot or len(part) <= 16 or not any(c.isdigit() for c in part)


def _path_start(text: str, start: int, end: int) -> int:
    """The first ``/`` or ``.`` of ``text[start:end]`` after which every component is :func:`_path_like` (``end``
    if none): where a path or file name glued after a key begins."""
    cut = i = end
    while True:
        j = max(text.rfind("/", start, i), text.rfind(".", start, i))
        if j < 0 or not _path_like(text[j + 1:i], text[j] == "."):
            return cut
        cut = i = j


_MYSQL_HASH_RE: Final = re.compile(
    r"(?:(?<![A-Za-z0-9*])|(?<=-[A-Za-z])(?<![\w-]-[A-Za-z]))\*[0-9A-F]{40}(?![A-Za-z0-9_-])")
"""A MySQL native password hash (``*`` and 40 upper-case hexadecimal digits, what ``mysql.user`` and ``SHOW GRANTS``
print): as good as the password to a MySQL server (its handshake takes the hash), found by its shape alone; glued to a
short option too (``-p*…``)."""


def find_token_spans(text: str, spans: list[tuple[int, int]], gated: bool = True) -> None:
    """Append the span of every self-identifying credential in ``text``.

    ``gated=False`` runs every family without its trigger test (the tests' reference: the triggers are exact).
    """
    every = not gated
    if every or "PRIVATE KEY" in text:
        spans.extend(m.span() for m in _PEM_RE.finditer(text))
    if every or "Private-Lines:" in text:
        spans.extend(m.span("k") for m in _PUTTY_RE.finditer(text))
    if every or "Static key V1-----" in text:
        spans.extend(m.span("k") for m in _OPENVPN_KEY_RE.finditer(text))
    if every or "eyJ" in text:
        spans.extend(m.span() for m in _JWT_RE.finditer(text))
    # Every key lies inside one run of key characters at least as long as the shortest format: the runs are found
    # at C speed and the formats tried only inside them (exact: the lookbehind still sees the text before a run).
    vendor = (_VENDOR_RE if every or ".atlasv1." in text or _DOTTED_HINT.search(text) is not None
              else _VENDOR_LEAN_RE)
    for run in _KEY_RUN_RE.finditer(text):
        covered = -1
        path = -1  # where the path at the run's end begins (computed once per run, when it holds a key)
        found: Iterable[re.Match[str]] = vendor.finditer(text, run.start(), run.end())
        rs = run.start()
        if text[rs] == "-" and text[rs + 1] in _LETTERS and (rs == 0 or text[rs - 1].isspace()
                                                            or text[rs - 1] in _OPTION_LEADERS):
            glued = _VENDOR_GLUED_RE.match(text, rs + 2, run.end())  # ``-p<key>``
            if glued is not None:
                found = itertools.chain((glued,), found)
        for m in found:
            start = m.start()
            if start < covered:
                continue  # inside the tail of the key before it: already in its span (and no rescan to the end)
            if start and text[start - 1] in "+/-_" and _in_blob(text, start - 1):
                continue  # a key-looking piece of a base64 blob
            if start > 4 and text[start - 1] in "=:" and _digest_after(text, start, run.end()):
                continue  # sha256=sk_bJkC…: a wheel's RECORD digest that starts like a key
            key_group = m.lastgroup or ""
            if run.end() - start >= _BLOB_TAIL and key_group not in _LONG_GROUPS and _blob_after(
                    text, start, run.end()):
                continue  # the key-looking start of a base64 blob (a blob that starts with EAA… or sk-…)
            body = m.group(key_group or 0)
            if _key_body(body) and (key_group not in _RANDOM_GROUPS or _random_body(body)):
                # A key is a whole token: what is glued to its end (another key written right after it,
                # ``AKIA…LTAI…`` or ``AKIA…dp.st.…``, whose own prefix has no boundary before it) goes with it,
                # a path or a file name after it (``/models/config.json``, ``.json``) does not.
                end = run.end()
                while text[end - 1] in _TAIL_END_CHARS:
                    end -= 1
                if path < 0:
                    path = _path_start(text, run.start(), end)
                covered = max(m.end(), path if m.end() < path else _first_separator(text, m.end(), end))
                if covered > m.end() and text[m.end()] in "_-" and _word_tail(text[m.end() + 1:covered]):
                    covered = m.end()  # ghp_…_backup.json, sk_live_…-old: a name's words glued after the key stay
                spans.append((start, covered))
        if run.end() - run.start() >= _DISCORD_MIN:
            spans.extend(m.span() for m in _DISCORD_RE.finditer(text, run.start(), run.end())
                         if _discord_id(m.group("id")))
    if every or "Q~" in text:
        spans.extend(m.span() for m in _AZURE_SECRET_RE.finditer(text))
    if every or "AKIA" in text or "ASIA" in text:
        spans.extend(m.span("s") for m in _AWS_PAIR_RE.finditer(text) if _random_body(m.group("s")))
    if every or "LS0tLS1CRUdJTi" in text:
        spans.extend(m.span() for m in _PEM_BASE64_RE.finditer(text) if _encoded_private_key(m.group(0)))
    if every or "-" in text:
        _after_hex32(text, _MAILGUN_TAIL_RE, spans)
    if every or "-us" in text:
        _after_hex32(text, _MAILCHIMP_TAIL_RE, spans)
    if every or ":" in text:
        for m in _AFTER_COLON_RE.finditer(text):  # Telegram, Fal and .pgpass, found from their colon in one scan
            if m.group("s") is not None:
                start = _telegram_start(text, m.start())
                if start >= 0 and _generated(m.group("s")):
                    spans.append((start, m.end()))
            elif m.group("fal") is not None:
                start = m.start() - _UUID_LEN
                if start >= 0 and _UUID_RE.fullmatch(text, start, m.start()) and _free_start(text, start):
                    spans.append((start, m.end()))
            else:
                _pgpass_line(text, m, spans)
    if every or "*" in text:
        spans.extend(m.span() for m in _MYSQL_HASH_RE.finditer(text))
    if every or "hooks.slack.com" in text or "/api/webhooks/" in text or "api.telegram.org" in text or (
            "/IncomingWebhook/" in text or "hooks.zapier.com" in text or ".tines.com/webhook/" in text):
        for m in _WEBHOOK_RE.finditer(text):
            group = m.lastgroup
            if group is not None:
                spans.append(m.span(group))


def _after_hex32(text: str, tail: re.Pattern[str], spans: list[tuple[int, int]]) -> None:
    """Each key that is 32 hex digits and then what ``tail`` reads (Mailgun's ``-8hex-8hex``, Mailchimp's ``-usN``),
    found from its tail, the 32 digits before it checked, not glued to a longer id or a path."""
    for m in tail.finditer(text):
        start = m.start() - 32
        if start >= 0 and _HEX32_RE.fullmatch(text, start, m.start()) and _free_start(text, start):
            spans.append((start, m.end()))


def _pgpass_line(text: str, tail: re.Match[str], spans: list[tuple[int, int]]) -> None:
    """The password of the ``.pgpass`` line whose port and last fields ``tail`` holds (:data:`_PGPASS_LINE_RE`),
    unless a password name would not hide it (a placeholder, ``*``, a lower-case word)."""
    at = tail.start()
    window = max(0, at - _PGPASS_HOST_MAX)
    start = max(text.rfind("\n", window, at), text.rfind('"', window, at))  # the line's or the JSON string's start
    escaped = text.rfind("\\n", window, at)  # or an escaped newline's end
    start = max(start + 1 if start >= 0 else window, escaped + 2 if escaped >= 0 else window)
    if start == window and window:
        return  # no line starts within a host's reach
    m = _PGPASS_LINE_RE.fullmatch(text, start, tail.end())
    if m is None:
        return
    host, value = m.group("h"), m.group("v")
    if (host == "*" or any(c.isalpha() or c == "." for c in host)) and not kept_value(
            value, "password", STRONG, bare=True):
        spans.append(m.span("v"))


_TAIL_PIECES: Final = re.compile(r"[_-]")


def _word_tail(tail: str) -> bool:
    """Whether what follows a key and its ``_`` or ``-`` is words a name is written with (``backup``, ``old_v2``,
    ``prod-2024``): lower-case English words, short numbers and numbered words; a generated tail (``Xk9mQ``, a key
    written right after another) is not."""
    pieces = _TAIL_PIECES.split(tail)
    return all(piece and ((piece.isdigit() and len(piece) <= 8) or (piece.islower() and (
        (piece.isalpha() and english_word(piece)) or _NUMBERED_PIECE.fullmatch(piece) is not None)))
        for piece in pieces)


_NUMBERED_PIECE: Final = re.compile(r"[a-z]{1,3}[0-9]{1,3}")


def _first_separator(text: str, start: int, end: int) -> int:
    """The first ``/`` or ``.`` of ``text[start:end]``, else ``end``."""
    slash, dot = text.find("/", start, end), text.find(".", start, end)
    return min(slash if slash >= 0 else end, dot if dot >= 0 else end)


def _telegram_start(text: str, colon: int) -> int:
    """Where the bot id before the colon at ``colon`` starts: 7 to 11 digits, not glued to a letter or digit before
    them unless that is ``bot`` (``…/bot123456789:…``); -1 if there is no such id."""
    start = colon
    floor = max(0, colon - 12)
    while start > floor and "0" <= text[start - 1] <= "9":
        start -= 1
    if not 7 <= colon - start <= 11:
        return -1
    if start == 0 or text[start - 1] not in _ALNUM or start >= 3 and text.startswith("bot", start - 3):
        return start
    return -1


def _discord_id(part: str) -> bool:
    """Whether a Discord token's first part is what it always is: the base64 of a numeric id (a snowflake of 17 to
    20 digits), which a dotted identifier (``OrganizationServiceClients.client.…``) is not."""
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return False
    return 17 <= len(raw) <= 20 and raw.isdigit()
