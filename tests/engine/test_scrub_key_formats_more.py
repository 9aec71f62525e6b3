"""Further published key formats, and keys glued to a short option (spec 01 OBS-58, OBS-59; spec 04 FMT-33a;
scrubber review s44: L10 missing formats, L6 ``-pghp_…`` / ``-ppypi-…``).

Each format of :data:`MORE_KEY_FORMATS` and each structural one (a Fal key: a UUID, a colon and 32 hex digits;
Mailgun's current keys: 32, 8 and 8 hex digits; a Doppler service token naming its config) is generated from its
published alphabet and length, afresh for every example, and must be redacted whole, and only it: bare, in quotes,
after ``=``, glued to a short option (``-p<key>``), JSON-escaped and percent-encoded. What only starts like one (the
same prefix with another length or alphabet, English words, versions, hashes, UUIDs, identifiers) stays.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import find_spans, redaction_marker, scrub_text
from hermes_pipeline.engine.scrub_tokens import MORE_KEY_FORMATS

from tests.engine._scrub_support import (ALNUM, HEX, KEY_SAMPLES, LOWER_DIGITS, UPPER_DIGITS, URLSAFE, rand,
                                         wrapper)

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

MORE_SAMPLES: dict[str, Callable[[random.Random], str]] = {
    "OpenAI session keys": lambda r: "sess-" + rand(r, ALNUM, 40),
    "Vercel access tokens and API keys": lambda r: r.choice(["vcp_", "vci_", "vca_", "vcr_", "vck_"])
    + rand(r, URLSAFE, 50) + rand(r, ALNUM, 6),
    "Okta API tokens": lambda r: "00" + rand(r, URLSAFE, 39) + r.choice(ALNUM),
    "Modal token ids and secrets": lambda r: r.choice(["ak-", "as-"]) + rand(r, ALNUM, 22),
    "NuGet API keys": lambda r: "oy2" + rand(r, LOWER_DIGITS, 43),
    "HashiCorp Vault legacy service tokens": lambda r: "s." + rand(r, ALNUM, 24),
    "HashiCorp Vault legacy batch tokens": lambda r: "b.AAAAAQ" + rand(r, URLSAFE, 90),
    "New Relic ingest, browser and admin keys": lambda r: r.choice([
        "NRII-" + rand(r, URLSAFE, 32), "NRJS-" + rand(r, HEX, 19), "NRAA-" + rand(r, ALNUM, 27)]),
    "Contentful personal access tokens": lambda r: "CFPAT-" + rand(r, URLSAFE, 43),
    "1Password secret keys": lambda r: "A3-" + rand(r, UPPER_DIGITS, 6) + "-" + r.choice(
        [rand(r, UPPER_DIGITS, 11), rand(r, UPPER_DIGITS, 6) + "-" + rand(r, UPPER_DIGITS, 5)])
    + "".join("-" + rand(r, UPPER_DIGITS, 5) for _ in range(3)),
    "Adobe client secrets": lambda r: "p8e-" + rand(r, ALNUM, 32),
    "Artifactory API keys": lambda r: "AKCp" + rand(r, ALNUM, 69),
    "Artifactory reference tokens": lambda r: "cmVmd" + rand(r, ALNUM, 59),
    "Authress service client access keys": lambda r: r.choice(["sc_", "ext_", "scauth_", "authress_"])
    + rand(r, ALNUM, 20) + "." + rand(r, ALNUM, 5) + ".acc" + r.choice("_-") + rand(r, LOWER_DIGITS, 20) + "."
    + rand(r, URLSAFE + "+/", 60),
    "ClickHouse Cloud API secret keys": lambda r: "4b1d" + rand(r, ALNUM, 36) + r.choice(string.ascii_uppercase)
    + r.choice(string.ascii_lowercase),
    "Clojars deploy tokens": lambda r: "CLOJARS_" + rand(r, LOWER_DIGITS, 60),
    "Duffel API tokens": lambda r: "duffel_" + r.choice(["test", "live"]) + "_" + rand(r, URLSAFE + "=", 43),
    "Dynatrace API tokens": lambda r: "dt0c01." + rand(r, UPPER_DIGITS, 24) + "." + rand(r, ALNUM, 64),
    "EasyPost API keys": lambda r: r.choice(["EZAK", "EZTK"]) + rand(r, ALNUM, 54),
    "Flutterwave keys": lambda r: r.choice(["FLWSECK_TEST-", "FLWPUBK_TEST-", "FLWSECK-", "FLWPUBK-"])
    + r.choice([rand(r, HEX, 12), rand(r, HEX, 32) + "-X"]),
    "Fly.io tokens": lambda r: r.choice(["fo1_" + rand(r, URLSAFE, 43), r.choice(["fm1a_", "fm1r_", "fm2_"])
                                         + rand(r, ALNUM + "+/", 120) + r.choice(["", "=", "=="])]),
    "Frame.io API tokens": lambda r: "fio-u-" + rand(r, URLSAFE + "=", 64),
    "Grafana legacy API keys": lambda r: "eyJrIjoi" + rand(r, ALNUM, 80) + r.choice(["", "=", "=="]),
    "Harness API keys and service account tokens": lambda r: r.choice(["pat.", "sat."]) + rand(r, URLSAFE, 22) + "."
    + rand(r, ALNUM, 24) + "." + rand(r, ALNUM, 20),
    "Infracost API tokens": lambda r: "ico-" + rand(r, ALNUM, 32),
    "42 Intra client secrets": lambda r: "s-s4t2" + r.choice(["ud", "af"]) + "-" + rand(r, HEX, 64),
    "Octopus Deploy API keys": lambda r: "API-" + rand(r, UPPER_DIGITS, 26),
    "OpenShift user tokens": lambda r: "sha256~" + rand(r, URLSAFE, 43),
    "Prefect API keys": lambda r: "pnu_" + rand(r, ALNUM, 36),
    "ReadMe API keys": lambda r: "rdme_" + rand(r, LOWER_DIGITS, 70),
    "Scalingo API tokens": lambda r: "tk-us-" + rand(r, URLSAFE, 48),
    "SettleMint access tokens": lambda r: r.choice(["sm_aat_", "sm_pat_", "sm_sat_"]) + rand(r, ALNUM, 16),
    "Shippo API tokens": lambda r: "shippo_" + r.choice(["live", "test"]) + "_" + rand(r, HEX, 40),
    "Sourcegraph access tokens": lambda r: "sgp_" + r.choice(["", rand(r, HEX, 16) + "_", "local_"])
    + rand(r, HEX, 40),
    "PostHog project and personal API keys": lambda r: r.choice(["phc_", "phx_"]) + rand(r, ALNUM, 43),
    "CircleCI personal API tokens": lambda r: "CCIPAT_" + rand(r, ALNUM, 22) + "_" + rand(r, HEX, 40),
    "Buildkite API tokens": lambda r: "bkua_" + rand(r, LOWER_DIGITS, 40),
    "Apify API tokens": lambda r: "apify_api_" + rand(r, ALNUM, 36),
    "HubSpot private app tokens": lambda r: r.choice(["pat-na1-", "pat-eu1-"]) + "-".join(
        rand(r, LOWER_DIGITS, n) for n in (8, 4, 4, 4, 12)),
    "Typeform personal access tokens": lambda r: "tfp_" + rand(r, ALNUM, 44),
    "Pagar.me API keys": lambda r: r.choice(["ak_live_", "ak_test_"]) + rand(r, ALNUM, 30),
    "Razorpay key ids": lambda r: r.choice(["rzp_live_", "rzp_test_"]) + rand(r, ALNUM, 14),
    "ClickUp personal tokens": lambda r: "pk_" + str(r.randint(10**7, 10**8 - 1)) + "_" + rand(r, UPPER_DIGITS, 32),
    "LaunchDarkly API and SDK keys": lambda r: r.choice(["api-", "sdk-"]) + rand(r, HEX, 8) + "-" + rand(r, HEX, 4)
    + "-4" + rand(r, HEX, 3) + "-" + rand(r, HEX, 4) + "-" + rand(r, HEX, 12),
    "Intercom access tokens": lambda r: "dG9rO" + rand(r, ALNUM + "+/", 54) + "=",
    "Dropbox short-lived access tokens": lambda r: "sl." + rand(r, URLSAFE, 135),
    "Portainer access tokens": lambda r: "ptr_" + rand(r, ALNUM, 40) + r.choice(["", "=", "+/a="]),
    "Nightfall API keys": lambda r: "NF-" + rand(r, ALNUM, 30) + "aZ",
    "Lob and GoCardless keys": lambda r: r.choice(["live_", "test_", "sandbox_"]) + rand(r, ALNUM, 36) + "aZ9",
    "Resend API keys": lambda r: "re_" + rand(r, B58, 6) + "aZ" + "_" + rand(r, B58, 22) + "9k",
    "Stripe payment and setup intent client secrets": lambda r: r.choice(["pi_", "seti_"]) + rand(r, ALNUM, 24)
    + "_secret_" + rand(r, ALNUM, 25),
    "Rootly API keys": lambda r: "rootly_" + rand(r, HEX, 64),
    "Adafruit IO keys": lambda r: "aio_" + rand(r, ALNUM, 26) + "aZ",
    "Sourcegraph Cody gateway keys": lambda r: "slk_" + rand(r, HEX, 64),
    "Endor Labs API keys and secrets": lambda r: "endr+" + rand(r, ALNUM, 24),
    "Novita AI keys and other keys after sk_": lambda r: "sk_" + rand(r, ALNUM, 40) + "Ab3",
    "Mailchimp API keys": lambda r: rand(r, HEX, 32) + "-us" + str(r.randint(1, 21)),
    # found by their structure, no literal prefix
    "Fal keys (key id and secret)": lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)) + ":"
    + rand(r, HEX, 32),
    "MySQL native password hashes": lambda r: "*" + rand(r, HEX.upper(), 40),
    "Mailgun keys (current form)": lambda r: rand(r, HEX, 32) + "-" + rand(r, HEX, 8) + "-" + rand(r, HEX, 8),
    "Doppler service tokens naming their config": lambda r: "dp.st." + r.choice(["dev", "prd", "dev_personal",
                                                                                  "stg-2"]) + "." + rand(r, ALNUM, 40),
}
"""One generator per format, from the provider's published prefix, alphabet and length (a body that must look drawn
at random after a short prefix holds both cases and a digit)."""

CONTEXTS = ("see {k} ok", '"{k}"', "'{k}'", "opt={k}", "tool -p{k} next", "tool -P{k}", '["-p{k}"]',
            '{{"value": "{k}"}}', "{k}\n", "(k: {k})")
"""Where a key stands: bare, quoted, after ``=``, glued to a short option (in an argument list too), a JSON value."""

WRAPPERS = [("plain", 1), ("json", 1), ("json", 2), ("doc", 1), ("url", 1)]


def _exact(context: str, key: str) -> None:
    """``context`` with ``key`` in every wrapper: exactly the key's encoded span becomes its marker."""
    before, after = context.split("{k}")
    before, after = before.replace("{{", "{").replace("}}", "}"), after.replace("{{", "{").replace("}}", "}")
    for kind, level in WRAPPERS:
        encode, left, right = wrapper(kind, level)
        text = left + encode(before) + encode(key) + encode(after) + right
        expected = left + encode(before) + redaction_marker(key) + encode(after) + right
        assert scrub_text(text) == expected, (kind, level, text)


def test_fmt33a_every_further_format_has_a_sample() -> None:
    """FMT-33a: the tests generate a key of every format of :data:`MORE_KEY_FORMATS` (the SSWS-only reading of Okta
    tokens has its own test)."""
    providers = {name for name, _, body in MORE_KEY_FORMATS if body}
    assert providers - {"Okta API tokens after the SSWS scheme"} <= set(MORE_SAMPLES)


@pytest.mark.parametrize("provider", sorted(MORE_SAMPLES))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), context=st.sampled_from(CONTEXTS))
def test_obs58_l10_each_further_format_is_redacted_whole_in_every_context(provider: str, seed: int,
                                                                          context: str) -> None:
    """OBS-58 / OBS-59 (review L10): a key of each further format, generated afresh, is replaced whole (prefix
    included) and nothing else, bare, quoted, after ``=``, glued to a short option, JSON-escaped and percent-encoded."""
    _exact(context, MORE_SAMPLES[provider](random.Random(seed)))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), extra=st.integers(0, 12))
def test_obs58_l10_okta_token_after_ssws(seed: int, extra: int) -> None:
    """OBS-58 (review L10): an Okta API token after the ``SSWS`` scheme, in an ``Authorization`` header or alone
    (``SSWS 00…``, the scheme word stays), also when longer than the published 42 characters."""
    r = random.Random(seed)
    key = "00" + rand(r, URLSAFE, 40 + extra).rstrip("-") + "x1"
    for context in ("SSWS {k}", "Authorization: SSWS {k}", "curl -H 'Authorization: SSWS {k}' https://x.okta.com"):
        _exact(context, key)


@pytest.mark.parametrize("provider", sorted(KEY_SAMPLES))
def test_obs58_l6_a_key_glued_to_a_short_option_is_redacted_whole(provider: str) -> None:
    """OBS-58 (review L6): a key of every published format glued to a short option (``twine upload -ppypi-…``,
    ``docker login -pghp_…``, ``-P``, ``-t``; quoted or an argument-list item too) is replaced whole: the option's
    letter no longer hides the prefix's start."""
    r = random.Random(provider)
    for _ in range(3):
        key = KEY_SAMPLES[provider](r)
        for context in ("twine upload -p{k}", "docker login ghcr.io -u me -p{k}", "tool -P{k} x", "x -t{k}",
                        "sh -c '-p{k}'", '["-p{k}", "x"]'):
            text = context.replace("{k}", key)
            assert scrub_text(text) == context.replace("{k}", redaction_marker(key)), (provider, text)


@pytest.mark.parametrize("text", [
    "session", "sessions are stored in sess-ion tables", "sess-" + "a1B2c3D4e5" * 3 + "x",
    "ak-47", "as-is", "ask-me-anything", "as-" + "Ab3dEf6hIj" * 2, "ak-" + "Ab3dEf6hIj" * 2 + "Ab3",
    "ak-ComponentDidMountAbcdef", "as-ImportedModuleNamesAbc",
    "s.t.", "u.s. and s.a.", "s.getElementsByTagNameAbcd", "s.prototypeIsEnumerableXYZ", "x.s." + "Ab3dEf6hIj" * 2,
    "s." + "Ab3dEf6hIj" * 2 + "Ab3dE", "b.some_very_long_identifier_name_that_goes_on_and_on_for_a_while_x",
    "oy2 in text", "oy2" + "abcdefghij" * 4, "toy2" + "abcdefghij1" * 4,
    "00.1.2", "v00.12.3", "version 00.1.2-rc1", "00000000-0000-0000-0000-000000000000",
    "00" + "a" * 40, "00abcdef0123456789abcdef0123456789abcdef01", "1000" + "Ab3dEf6hIj" * 4,
    "sha256:00" + "0123456789abcdef" * 4,
    "vcp_memory_write_buffer_size_limit", "h_vcp_uart_handle_config_struct", "NRII-example-key-here",
    "NRJS-xxxx", "CFPAT-" + "x" * 43, "CFPAT-your-personal-access-token",
    "0123456789abcdef0123456789abcdef-01234567", "cache/0123456789abcdef0123456789abcdef-01234567-89abcdef",
    "build-0123456789abcdef0123456789abcdef-01234567-89abcdef",
    "3f2b8c1e-9a4d-4e7f-b2c6-1d8e5f7a9b0c:0123456789abcdef0123456789abcde",
    "x3f2b8c1e-9a4d-4e7f-b2c6-1d8e5f7a9b0c:0123456789abcdef0123456789abcdef",
    "3f2b8c1e-9a4d-4e7f-b2c6-1d8e5f7a9b0c:0123456789abcdef0123456789abcdef0",
    "dp.st.prd.short", "build-pghp_" + "Ab3dEf6hIj" * 3 + "abcdef", "pip install -Usk-learn-compatible-v2",
    "ls -lapat-config-loader", "git commit -m fc-layout-grid-2",
    # the formats added from the published list of 2026-12: their prefixes in ordinary text
    "API-VERSION", "API-Gateway-Response-Headers-v2", "Octopus API-KEY-GOES-HERE-0000000000",
    "sha256~", "sha256~abc", "ico-arrow-left", "ico-" + "a" * 32, "sc_module.init", "pat.name", "sat.value",
    "sm_pat_value", "pnu_", "A3-XXXXXX", "4b1d" + "0123456789abcdef" * 2 + "012345",
    "eyJrIjoi", "EAAA", "EAAA-sample-token", "glpat-your-personal-access-token.example",
    "FLWSECK_TEST-", "p8e-", "tk-us-east-1", "rdme_readme", "sk_prod_config",
    "https://outlook.office.com/webhook/", "/IncomingWebhook/docs/setup",
    "sk_linear_model_LogisticRegression_v2", "sk-learn-LogisticRegression-v2", "sk_learn_compatible_estimator_api",
    "#define sk_X509_VERIFY_PARAM_new_reserve(cmp, n)", "websocket/_cookiejar.py,sha256=sk_bJkC1VTNz9STPygp9WigFOc4y"
    "KFXbXJzz7vnNA7c,2346", "sha1=ghp_0123456789abcdefABCDEF01234567890abc",
    "ptr_next_node_in_the_linked_list_of_free_blocks", "test_" + "property_of_the_scrubber_" * 2, "live_reload",
    "sandbox_mode_enabled_for_every_tenant_in_staging", "re_compile_pattern_cache", "re_Ab3dEf6h", "aio_loop",
    "api-gateway-deployment", "api-12345678-1234-1234-1234-123456789012", "pk_12345678_test", "sl.no",
    "NF-ROUTER-01", "tfp_", "phc_config", "pi_calc_secret_sauce", "endr+", "0123456789abcdef0123456789abcdef-user",
    "build-0123456789abcdef0123456789abcdef-us1",
])
def test_obs59_l10_look_alikes_of_the_further_formats_stay(text: str) -> None:
    """OBS-59 (review L10): what only starts like a further format stays: English words (``session``, ``as-is``),
    ``ak-47``, ``s.t.``, versions (``00.1.2``), UUIDs, hex digests, identifiers of words (``vcp_memory_write_…``,
    ``s.getElementsByTagName…``), the prefix with another length or alphabet, placeholders, a key-like piece glued
    to a path or a word, and option letters glued to ordinary words."""
    assert scrub_text(text) == text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from([
    " ", "-p", "-", ":", ".", "_", "=", '"', "\n", "s.", "b.", "00", "ak-", "as-", "oy2", "sess-", "vcp_", "NRII-",
    "CFPAT-", "dp.st.", "prd.", "SSWS ", "0123456789abcdef", "01234567", "3f2b8c1e-9a4d-4e7f-b2c6-1d8e5f7a9b0c",
    "Ab3dEf6hIj", "abcdefghij", "x:5432:db:user:", "*:*:*:u:", "ghp_"]), max_size=14).map("".join))
def test_obs58_further_formats_keep_the_triggers_exact(text: str) -> None:
    """OBS-58: the trigger tests in front of the structural formats (``-`` for Mailgun, ``:`` for Fal and
    ``.pgpass``) and the option-glued reading never skip a key: the gated spans equal the ungated ones."""
    assert find_spans(text) == find_spans(text, gated=False)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), lines=st.integers(1, 4), crlf=st.booleans())
def test_property_a_putty_key_loses_its_private_lines_only(seed: int, lines: int, crlf: bool) -> None:
    """OBS-58: a PuTTY ``.ppk`` file loses the base64 lines after ``Private-Lines: N``; its headers, the label and
    the ``Private-MAC:`` line stay."""
    r = random.Random(seed)
    nl = "\r\n" if crlf else "\n"
    body = nl.join(base64.b64encode(r.randbytes(48)).decode() for _ in range(lines))
    text = nl.join(["PuTTY-User-Key-File-3: ssh-ed25519", "Encryption: none", "Comment: me@host",
                    f"Private-Lines: {lines}", body, "Private-MAC: " + r.randbytes(16).hex()])
    assert scrub_text(text) == text.replace(body, redaction_marker(body))


_B64_CHARS = ALNUM + "+/"


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), sep=st.sampled_from([" / ", ":", " : ", ", ", " ", "\n", " | ", "="]),
       lead=st.sampled_from(["- AWS creds: {k}{s}{p}", "{k}{s}{p}", "aws keys {k}{s}{p} (prod)", "`{k}{s}{p}`"]))
def test_property_an_aws_secret_beside_its_access_key_id_is_redacted(seed: int, sep: str, lead: str) -> None:
    """OBS-57: an AWS secret access key (40 base64 characters, no prefix of its own) written after its access key
    id and a separator (``AKIA… / wJalr…``, ``AKIA…:wJalr…``, on the next line) is redacted, and so is the id; the
    text around them stays (after a label such as ``creds:`` the pair may be one value, with one marker)."""
    r = random.Random(seed)
    key_id = r.choice(["AKIA", "ASIA"]) + rand(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    secret = rand(r, _B64_CHARS, 40)
    text = lead.format(k=key_id, s=sep, p=secret)
    apart = text.replace(key_id, redaction_marker(key_id)).replace(secret, redaction_marker(secret))
    assert scrub_text(text) in (apart, text.replace(key_id + sep + secret, redaction_marker(key_id + sep + secret)))


def test_a_path_or_a_word_run_after_an_access_key_id_stays() -> None:
    """OBS-58: what follows an access key id but is no 40-character secret (a signing scope, a path) stays."""
    key_id = "AKIA70TXSL8RHBPY0Q6U"
    for after in [" /aaaa/bbbb/cccc/dddd/eeee/ffff/gggg/hhhh", "/20240101/us-east-1/s3/aws4_request",
                  " and the bucket is my-bucket-name-for-the-logs-of-prod-01"]:
        assert scrub_text(key_id + after) == redaction_marker(key_id) + after


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["RSA ", "OPENSSH ", "EC ", "ENCRYPTED ", ""]),
       lead=st.sampled_from(["echo {b} | base64 -d > ~/.ssh/id_rsa", "  tls.key: {b}\n", '{{"key": "{b}"}}']))
def test_property_a_base64_encoded_private_key_is_redacted(seed: int, kind: str, lead: str) -> None:
    """OBS-57: a PEM private key encoded in base64 on one line (a Kubernetes secret's ``tls.key``, ``echo … |
    base64 -d``) is redacted whole; the command and the key's name stay."""
    r = random.Random(seed)
    body = base64.b64encode(r.randbytes(r.randint(48, 600))).decode()
    pem = f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----\n"
    encoded = base64.b64encode(pem.encode()).decode()
    text = lead.format(b=encoded)
    assert scrub_text(text) == text.replace(encoded, redaction_marker(encoded))


def test_a_base64_encoded_certificate_stays() -> None:
    """OBS-58: a certificate is public: its base64 encoding in a Kubernetes secret's ``tls.crt`` stays."""
    der = base64.b64encode(bytes(range(200))).decode()
    cert = base64.b64encode(f"-----BEGIN CERTIFICATE-----\n{der}\n-----END CERTIFICATE-----\n".encode()).decode()
    assert scrub_text(f"  tls.crt: {cert}\n") == f"  tls.crt: {cert}\n"


def test_obs58_a_teams_webhook_url_loses_its_secret_path() -> None:
    """OBS-58: a Microsoft Teams incoming webhook's URL names its group and tenant, then holds its secret after
    ``/IncomingWebhook/`` (32 characters, the connector's UUID, in the newer form a signature): that path goes, the
    host and the ids stay, as a Slack webhook's."""
    r = random.Random(7)
    group, tenant, connector = (str(uuid.UUID(int=r.getrandbits(128), version=4)) for _ in range(3))
    secret = rand(r, ALNUM, 32) + "/" + connector
    for tail in ("", "/V2" + rand(r, URLSAFE, 40)):
        url = f"https://contoso.webhook.office.com/webhookb2/{group}@{tenant}/IncomingWebhook/"
        for wrap in ("{u}", '{{"webhook_url": "{u}"}}', "curl -X POST {u} -d @msg.json"):
            text = wrap.format(u=url + secret + tail)
            assert scrub_text(text) == wrap.format(u=url + redaction_marker(secret + tail)), text
