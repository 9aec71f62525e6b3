"""A name's value is only its own: an inner pair, a user name and a sentence's punctuation stay (spec 01 OBS-59;
spec 04 FMT-33a; review s44 O7, O8 / R12).

An outer name swallowed what follows it: ``# Key: session_key=agent:main:…`` lost ``session_key=`` (the outer
``Key`` took the whole inner pair as its value), ``credentials: admin:P`` and ``user/pass: admin/P`` lost the user
name, ``Your token=P. Next`` lost the sentence's full stop and ``password=P... done`` its ellipsis. Now an inner
``NAME=`` judges its own value, a user name before ``:`` or ``/`` under a name that holds a user and a password
stays, and the end of a sentence after an unquoted value is not part of it.
"""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

OUTER = ("# Key", "Key", "Note", "token", "Secret", "auth", "Credential")
INNER = ("session_key", "api_key", "app_key", "DB_PASSWORD", "access_token", "client_secret", "PASSWD")
USERS = ("admin", "bob", "deploy", "root", "svc_backup", "alice@example.com", "postgres", "ci-runner")
PAIR_NAMES = ("credentials", "DB_CREDENTIALS", "basic_auth", "BASIC_AUTH_CREDENTIALS", "proxyCredentials")


def _secret(r: random.Random) -> str:
    return "".join(r.choice(string.ascii_letters + string.digits) for _ in range(r.randint(12, 24))) + "9Xq"


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), outer=st.sampled_from(OUTER), inner=st.sampled_from(INNER),
       sep=st.sampled_from([": ", " = ", "="]))
def test_property_obs59_an_inner_pair_keeps_its_name(seed: int, outer: str, inner: str, sep: str) -> None:
    """OBS-59 (O7): ``OUTER: INNER=secret``: the inner name judges its value; the inner name and ``=`` stay."""
    secret = _secret(random.Random(seed))
    text = f"{outer}{sep}{inner}={secret}"
    assert scrub_text(text) == f"{outer}{sep}{inner}={redaction_marker(secret)}"


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(PAIR_NAMES), user=st.sampled_from(USERS),
       sep=st.sampled_from([": ", "="]))
def test_property_obs59_a_user_name_before_its_password_stays(seed: int, name: str, user: str, sep: str) -> None:
    """OBS-59 (O7): under a name that holds a user and a password (``credentials: admin:P``), the user stays."""
    secret = _secret(random.Random(seed))
    assert scrub_text(f"{name}{sep}{user}:{secret}") == f"{name}{sep}{user}:{redaction_marker(secret)}"


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), user=st.sampled_from(USERS), pair=st.sampled_from(["user/pass", "username/password",
                                                                                     "login/password"]))
def test_property_obs59_user_slash_pass_keeps_the_user(seed: int, user: str, pair: str) -> None:
    """OBS-59 (O7): ``user/pass: admin/P``: the user stays, the password goes."""
    secret = _secret(random.Random(seed))
    assert scrub_text(f"{pair}: {user}/{secret}") == f"{pair}: {user}/{redaction_marker(secret)}"


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(["token", "password", "API_KEY", "secret", "passwd"]),
       end=st.sampled_from([". Next, run the job.", "! Keep it safe.", "? Check it.", "... done", "…", "...",
                            ": it expires tomorrow"]))
def test_property_obs59_the_end_of_a_sentence_after_a_value_stays(seed: int, name: str, end: str) -> None:
    """OBS-59 (O8): ``Your token=P. Next`` keeps its full stop, ``password=P... done`` its ellipsis."""
    secret = _secret(random.Random(seed))
    text = f"Your {name}={secret}{end}"
    assert scrub_text(text) == f"Your {name}={redaction_marker(secret)}{end}"


@pytest.mark.parametrize("text", [
    'logger.warning("re-signing token: app_key=****%s", app_key[-4:])',
    "credentials: ChannelCredentials | None", "credentials: /home/u/.config/gcloud/sa.json",
    "OPENAI_API_KEY=sk-...", "password: your-password-here.",
])
def test_obs59_reviewed_lines_around_nested_names_are_kept(text: str) -> None:
    """OBS-59 (O7): an inner name's masked value (``app_key=****%s``) is kept; types, paths and placeholders after
    such names too."""
    assert scrub_text(text) == text


def test_obs59_the_reviewed_nested_cases() -> None:
    """OBS-59 (O7, O8): the review's cases, exactly."""
    p = "Xk9mQ2vLp7Rt"
    m = redaction_marker(p)
    session = "sk_9f3Kq2LmZx81"
    assert scrub_text(f"# Key: session_key={session}") == f"# Key: session_key={redaction_marker(session)}"
    hermes = "agent:main:discord:group:987654321"  # the Hermes Agent's own session key: no secret (F-hermes-id)
    assert scrub_text(f"# Key: session_key={hermes}") == f"# Key: session_key={hermes}"
    assert scrub_text(f"user/pass: admin/{p}") == f"user/pass: admin/{m}"
    assert scrub_text(f"credentials: admin:{p}") == f"credentials: admin:{m}"
    assert scrub_text(f"Your token={p}. Next, run the job.") == f"Your token={m}. Next, run the job."
