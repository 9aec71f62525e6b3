"""Values in brackets after their name, and a JWT glued to a name (OBS-55, OBS-58, OBS-59; stop 58 soak).

A soak of vendor keys in many places and of credentials named in Chinese and Japanese notes found three shapes that
kept their value:

* a JWT glued to a name by ``-`` or ``_`` (``deploy-eyJ…``, ``backup_eyJ….json``): the JWT's pattern refused any
  base64url character before it;
* a value in brackets after its name: parentheses after a Chinese or Japanese credential word (``密码（P）``,
  ``パスワード (P)``, ``密码：（P）``), full-width parentheses or square brackets after an English one (``token（P）``,
  ``the API key [P]``);
* ``password: (P)``: the parentheses went with the value.

A value holding a bracket it closes took the rest of a Chinese or Japanese sentence glued to it (``密码 P(k)别忘了``).
And a word and a number after a credential's name is a password people made, save an authentication scheme's name
(``auth: oauth2``, found by a draw of the precision property).

Every planted value loses exactly its span, plain and inside a JSON string; a note in brackets, a placeholder, a
Markdown link and a name stay."""

from __future__ import annotations

import base64
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

from ._scrub_support import URLSAFE, assert_only_secret_hidden, note_password, rand

_BRACKETED = (
    "密码（{P}）", "我的密码({P})别忘了", "数据库密码 ({P})", "パスワード（{P}）です", "密码：（{P}）", "API密钥（{P}）",
    "GitHub token（{P}）", "the API key [{P}]", "login with token [{P}] now", "password: ({P})", "token: [{P}], next",
    "- password: ({P})\n- user: bob", "he sent the password ({P}) by mail",
)


def _jwt(r: random.Random) -> str:
    claims = {"sub": rand(r, URLSAFE, r.randint(4, 12)), "iat": r.randint(1, 2 * 10 ** 9)}
    header = base64.urlsafe_b64encode(json.dumps({"alg": r.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode())
    return f"{header.decode().rstrip('=')}.{payload.decode().rstrip('=')}.{rand(r, URLSAFE, r.choice([43, 86]))}"


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_BRACKETED))
def test_property_obs58_59_a_value_in_brackets_after_its_name_loses_exactly_its_span(seed: int, form: str) -> None:
    """OBS-58 / OBS-59: the value inside the brackets goes, the brackets and the name stay; the same inside JSON."""
    secret = note_password(random.Random(seed), symbols="#^*-_.+", share=0.3)  # no %28: read as a bracket
    text = form.format(P=secret)
    assert_only_secret_hidden(text, secret)
    encoded = json.dumps({"content": text}, ensure_ascii=False)
    assert scrub_text(encoded) == json.dumps({"content": text.replace(secret, redaction_marker(secret))},
                                             ensure_ascii=False)


@pytest.mark.parametrize(("text", "secret"), [
    ("密码 xdIZewNT7EFWSur(k)别忘了", "xdIZewNT7EFWSur(k)"), ("パスワードはQv8(Lm2)Zt9wです", "Qv8(Lm2)Zt9w"),
    ("密码是Hunter2(xyz)，别忘了", "Hunter2(xyz)"),
])
def test_obs59_a_value_closing_its_own_bracket_ends_where_the_sentence_resumes(text: str, secret: str) -> None:
    """OBS-59: a value holding a bracket it closes (``P(k)``) ends with that bracket when the sentence's own script
    follows glued to it (the rest of the sentence was cut with it)."""
    assert_only_secret_hidden(text, secret)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(["deploy-", "backup_", "x_", "svc-prod-", "token_", " -"]),
       after=st.sampled_from(["", ".json", ".txt", " expired", "/state"]))
def test_property_obs58_a_jwt_glued_to_a_name_goes_and_the_name_stays(seed: int, name: str, after: str) -> None:
    """OBS-58: a JWT after a name's ``-`` or ``_`` (a file, a skill, a session named for it) is the token: it goes,
    the name and what follows stay."""
    token = _jwt(random.Random(seed))
    assert_only_secret_hidden(f"saved {name}{token}{after}", token)


@pytest.mark.parametrize("text", [
    "密码（prod）", "密码（MySQL）", "密码（见下文）", "パスワード（本番）", "see the token [docs](https://x.io/a)",
    "password manager (1Password)", "token [REDACTED]", "token [YOUR_TOKEN]", "password: (none)",
    "the API key (see below)", "api_key[index]", "Password (required)", "token [optional]",
])
def test_obs55_notes_placeholders_links_and_names_in_brackets_stay(text: str) -> None:
    """OBS-55: a note, a placeholder, a Markdown link's text, an index or a product's name in brackets stays."""
    assert scrub_text(text) == text


@pytest.mark.parametrize("text", [
    "//alice@db.internal/path auth: oauth2", "auth: oauth2", "AUTH_TYPE=ntlmv2", "authentication: kerberos5",
    "- auth: saml2\n- sso: true", "password_auth: totp", '{"auth": "sigv4"}',
])
def test_obs55_an_authentication_scheme_after_a_credential_name_stays(text: str) -> None:
    """OBS-55: the scheme a setting names (``oauth2``, ``ntlmv2``, ``kerberos5``, ``saml2``, ``sigv4``) is no secret
    (a hypothesis draw of the precision test found ``auth: oauth2`` redacted)."""
    assert scrub_text(text) == text
