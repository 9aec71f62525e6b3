"""A token drawn at random that a note says to use, with no credential's name (OBS-57, OBS-58).

An agent's memory holds notes such as ``Use 7kr8D!DnW1wSqfyWFokfNqXyVK for Jira``: nothing names a password, but the
value is one. Such a value is hidden when it is a token drawn at random (``drawn_token``); a name made of words, a
version, a path, a host or a git commit used for something stays.
"""

from __future__ import annotations

import base64
import random
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text
from hermes_pipeline.engine.scrub_names import drawn_token

FORMS = ["Use {p} for Jira", "Use {p} for the NAS.", "use {p} for staging db — rotate monthly",
         "Using {p} on the router", "Use `{p}` for Gmail.", "Project uses Python 3.11.\n§\nUse {p} for AWS\n",
         '{{"content": "Use {p} for Vault"}}', "- use **{p}** to log into Grafana", "Use {p} with the backup account"]


def _token(r: random.Random, kind: str) -> str:
    if kind == "hex":
        return "".join(r.choice("0123456789abcdef") for _ in range(r.choice((32, 64))))
    if kind == "base64":
        return base64.b64encode(bytes(r.getrandbits(8) for _ in range(r.choice((18, 24, 30))))).decode()
    alphabet = string.ascii_letters + ("" if kind == "letters" else string.digits)
    token = "".join(r.choice(alphabet) for _ in range(r.randint(12, 28)))
    for _ in range(r.randint(1, 3) if kind == "symbols" else 0):  # inside: at an edge a sentence's mark is ambiguous
        k = r.randrange(1, len(token) - 1)
        token = token[:k] + r.choice("!#^*_+&") + token[k:]
    return token


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(("hex", "base64", "alnum", "letters", "symbols")),
       form=st.sampled_from(FORMS))
def test_property_a_drawn_token_used_for_something_is_hidden_alone(seed: int, kind: str, form: str) -> None:
    """The token is hidden, and only the token, whenever it is one a generator draws (most draws: the others hold
    words or lack a class, and are judged as any text)."""
    token = _token(random.Random(seed), kind)
    text = form.format(p=token)
    if drawn_token(token):
        assert scrub_text(text) == text.replace(token, redaction_marker(token))


def test_most_drawn_tokens_are_drawn_tokens() -> None:
    """How often the judge knows a draw: a floor, so that a change that makes it blind fails (measured at 0.92 for
    letters and digits, 0.95 for base64, 0.72 for letters alone, 1.0 for hexadecimal)."""
    r = random.Random(11)
    for kind, floor in (("hex", 1.0), ("base64", 0.9), ("alnum", 0.85), ("letters", 0.6), ("symbols", 0.85)):
        tokens = [_token(r, kind) for _ in range(1000)]
        share = sum(map(drawn_token, tokens)) / len(tokens)
        assert share >= floor, (kind, share)


@pytest.mark.parametrize("text", [
    "Use iPhone15ProMax for testing", "Use utf8mb4_unicode_ci for MySQL", "Use MyCompanyVPN2024 for the VPN",
    "use 3f7abe29d9888eb86fd02979c0d2e0bb72aa7f5c for the rebase", "Use claude-3-5-sonnet-20241022 for coding",
    "Use ECDHE-RSA-AES128-GCM-SHA256 for TLS", "Use src/components/NavBar.tsx for the header",
    "Use OAuth2PasswordBearer for the login route", "Use XMLHttpRequest for old browsers", "Use Python3.11 for this",
    "Use ghcr.io/org/image:v1.2 for deploys", "Use HttpClientFactory2 in the service", "Use getUserById to load it",
    "Use TestCase_LoginPage01 for the login", "Use x86_64-unknown-linux-gnu for the target",
    "Use bob@example.com for GitHub",
])
def test_what_is_used_but_no_drawn_token_stays(text: str) -> None:
    """OBS-55: names made of words, versions, paths, images, hosts, addresses and git commits are kept."""
    assert scrub_text(text) == text


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(("hex", "base64", "alnum", "symbols")),
       form=st.sampled_from(["AWS login bob {p}.", "Jira login bob {p} — rotate monthly", "the NAS login admin {p}\n",
                             '{{"content": "staging db login bob@example.com {p}"}}', "router: log in root {p}"]))
@example(seed=399, kind="symbols", form="AWS login bob {p}.")  # kTNbNog^kRfIdc: letters drawn, a symbol, no digit
@example(seed=5511, kind="symbols", form="AWS login bob {p}.")  # egsPai^+&Hlutzo: a plus beside other symbols
def test_property_a_notes_login_and_password_lose_the_password(seed: int, kind: str, form: str) -> None:
    """A note's ``<service> login <user> <password>``: a password that looks generated goes, the user stays."""
    token = _token(random.Random(seed), kind)
    text = form.format(p=token)
    assert scrub_text(text) == text.replace(token, redaction_marker(token))


@pytest.mark.parametrize("text", [
    "login bob server01", "Login failed for user bob", "docker login ghcr.io -u bob --password-stdin",
    "vault login -method=userpass username=bob", "gh auth login --with-token < token.txt", "login page loads slowly",
    "npm login --registry https://registry.npmjs.org/",
])
def test_a_login_without_a_generated_value_stays(text: str) -> None:
    assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(["Vault personal access token {p}.", "the token {p}",
                                                          "GitHub access token {p} — rotate monthly", "password {p}"]))
def test_property_a_base64_value_may_start_with_a_plus_after_its_name(seed: int, form: str) -> None:
    """A base64 draw after a credential's name with no verb may start with ``+`` as with ``/`` (it leaked whole); a
    telephone number after a name stays."""
    token = "+" + _token(random.Random(seed), "base64")[1:]
    text = form.format(p=token)
    assert scrub_text(text) == text.replace(token, redaction_marker(token))
    assert scrub_text("the token +15550100, call me at +1 555 0100") == "the token +15550100, call me at +1 555 0100"
