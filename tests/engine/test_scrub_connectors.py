"""What stands between a credential's name and its value in notes and chat (OBS-55, OBS-58, OBS-59; stop 56 soak).

A soak of forms built from an owner (``the``, ``our new``), a name, a connector and a value of six kinds (a
password as people make them, hex, base64, base64url, a UUID, letters and digits) found these readings missing:
``equals`` as a copula, a dash between blanks in the middle of a sentence (``my session token — P ok?``), a question
answered with ``it's`` (``the API key? it's P``), two words between the owner and the name after a verb (``I changed
the new admin password to P``), letters alone of both cases stated as the value (``the token equals BTssSukpLskDNFu``),
a capitalised word and a number stated (``the DB password — River52``), a weak name made strong by the word before
it (``API key=P``, ``Here's our API key: P, thanks``), a quoted value after a label with more words after it
(``API key: 'P' btw``), and the ``!`` or ``?`` people end a password of a word and a number with (``Summer2024!``),
which belong to it (a generated token's stay the sentence's).

Every planted value loses exactly its span; texts whose value is a word or a name stay as they are."""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
import uuid

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

_WORDS = ("summer", "winter", "dragon", "monkey", "sunshine", "welcome", "football", "shadow", "purple", "falcon")


def _human(r: random.Random) -> str:
    word = r.choice(_WORDS)
    word = word.capitalize() if r.random() < 0.6 else word
    if r.random() < 0.3:
        word = word.replace("a", "@").replace("o", "0").replace("e", "3")
    return word + str(r.randint(1, 2025)) + r.choice(("", "!", "!!", "?", "#", "$"))


def _hex(r: random.Random) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(r.choice((32, 40, 64))))


def _b64(r: random.Random) -> str:
    return base64.b64encode(bytes(r.getrandbits(8) for _ in range(r.choice((18, 24, 30))))).decode()


def _urlsafe(r: random.Random) -> str:
    return base64.urlsafe_b64encode(bytes(r.getrandbits(8) for _ in range(r.choice((16, 24))))).decode().rstrip("=")


def _uuid(r: random.Random) -> str:
    return str(uuid.UUID(int=r.getrandbits(128), version=4))


def _alnum(r: random.Random) -> str:
    while True:
        value = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(r.randint(12, 28)))
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value) and any(c.islower() for c in value):
            return value


_KINDS = {"human": _human, "hex": _hex, "base64": _b64, "base64url": _urlsafe, "uuid": _uuid, "alnum": _alnum}
_NAMES = ("password", "passphrase", "API key", "token", "secret", "access token", "app password", "DB password",
          "root password", "admin password", "client secret", "webhook secret", "bot token", "API token")
_FORMS = ("{own}{n} equals {P}", "{own}{n} — {P}", "{own}{n} - {P}", "{own}{n}? it's {P}", "{own}{n} is {P}",
          "I changed {own}{n} to {P}", "use {own}{n} {P} for the mirror", "{own}{n}: '{P}' btw",
          "Here's {own}{n}: {P}, thanks", "{own}{n} was set to {P}", "{own}{n} → {P}", "{P} is {own}{n}")
_OWNERS = ("the ", "my ", "our ", "your ", "the new ", "our new staging ")
_ENDS = ("", ".", " (rotate monthly)", ", thanks", "\nNext line", " btw")


@settings(max_examples=500, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(sorted(_KINDS)), form=st.sampled_from(_FORMS),
       name=st.sampled_from(_NAMES), owner=st.sampled_from(_OWNERS), end=st.sampled_from(_ENDS))
@example(seed=2180, kind="base64", form="I changed {own}{n} to {P}", name="token", owner="the new ", end="")
def test_property_obs58_59_a_value_after_any_connector_loses_exactly_its_span(
        seed: int, kind: str, form: str, name: str, owner: str, end: str) -> None:
    """OBS-58 / OBS-59: each connector, owner and value kind of the soak: the value goes, and only the value."""
    secret = _KINDS[kind](random.Random(seed))
    if " - " in form and kind == "human":
        form = form.replace(" - ", " — ")  # a hyphen gives a value that looks generated; prose's dash states it
    if form.endswith("{P}") and end == "." and secret[-1] in "!?":
        end = " ok"  # P!. reads as a password ending its sentence twice; not a form people write
    text = form.format(own=owner, n=name, P=secret) + end
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret)), text


@pytest.mark.parametrize("text", [
    "the password is HelloWorld", "The token is JavaScript", "the password is PostgreSQL", "the password is Win10",
    "The key is AES256", "the token equals zero", "the password — see the vault", "the API key? it's on the fridge",
    "I changed the new admin password to something longer", "sort key=name", "primary key: id", "the key=value pairs",
    "the API key: see vault", "Password: 'see the vault' please", "my session token — which expired — was reissued",
    "the token - River52", 'and state.tokens[endDelim.token - 1].content == "~"',
    "# and CLI-style surfaces pass allow_install_tree_fallback=True because",
    "# No default host block and no root-level API key = Honcho not configured"])
def test_obs55_words_and_names_after_those_connectors_stay(text: str) -> None:
    """OBS-55: a word, a CamelCase name, an encoding's name or a sentence after those connectors stays."""
    assert scrub_text(text) == text


def test_obs59_the_marks_a_password_of_a_word_and_a_number_ends_with_are_its_own() -> None:
    """OBS-59: ``Summer2024!`` is the password (people add the mark to meet a policy); after a generated token the
    ``!`` is the sentence's. The marker is the same for the value wherever it stands."""
    human, token = "Summer2024!", "Xk9mQ2vLp7Rt"
    assert scrub_text(f"The password is {human}") == f"The password is {redaction_marker(human)}"
    assert scrub_text(f"Use {human}! as the passphrase") == f"Use {redaction_marker(human + '!')} as the passphrase"
    assert scrub_text(f'{{"password": "{human}"}}') == f'{{"password": "{redaction_marker(human)}"}}'
    assert scrub_text(f"The password is {token}!") == f"The password is {redaction_marker(token)}!"
    drawn = "AEWPkoGFjUXJG06"  # letters drawn in both cases, then a digit: no word people chose
    assert scrub_text(f"The password is {drawn}!") == f"The password is {redaction_marker(drawn)}!"
    url = "https://x.example/app;jsessionid={}?a=1"
    assert scrub_text(url.format(drawn)) == url.format(redaction_marker(drawn))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(sorted(_KINDS)),
       form=st.sampled_from(_FORMS + ("{own}{n}: {P}", "{own}{n} = {P}")), name=st.sampled_from(_NAMES),
       end=st.sampled_from(("", ".", " btw")), depth=st.integers(1, 3))
def test_property_obs59_those_notes_inside_json_lose_the_same_span(
        seed: int, kind: str, form: str, name: str, end: str, depth: int) -> None:
    """OBS-59 (#25's wrappers): the same notes as a tool result's JSON content, encoded one to three times: only
    the value's written form goes (a full stop before the escaped quote that closes an inner string stays)."""
    secret = _KINDS[kind](random.Random(seed))
    if " - " in form and kind == "human":
        form = form.replace(" - ", " — ")
    note = form.format(own="our ", n=name, P=secret) + end
    text = note
    marked = note.replace(secret, redaction_marker(secret))
    for _ in range(depth):
        text, marked = json.dumps({"content": text}), json.dumps({"content": marked})
    assert scrub_text(text) == marked, note


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(sorted(_KINDS)), form=st.sampled_from(_FORMS),
       name=st.sampled_from(_NAMES), end=st.sampled_from(("", ".", " btw")))
def test_property_obs58_those_notes_as_a_searched_query_hide_the_value(
        seed: int, kind: str, form: str, name: str, end: str) -> None:
    """OBS-58 (#25's URL-encoded wrapper): a note sent as a search (``?q=`` percent-encoded) hides the value, the
    value first too (``?q=P%20is%20our%20API%20key``); the query's next pair is never read as a value (``key btw``)."""
    secret = _KINDS[kind](random.Random(seed))
    if " - " in form and kind == "human":
        form = form.replace(" - ", " — ")
    note = form.format(own="our ", n=name, P=secret) + end
    out = scrub_text("GET https://example.com/search?q=" + urllib.parse.quote(note, safe="") + "&page=2")
    assert secret not in out and urllib.parse.quote(secret, safe="") not in out, (note, out)
    assert out.endswith("&page=2") and "<redacted" in out


def test_obs55_a_query_after_a_name_and_a_word_stays() -> None:
    """OBS-55: ``?q=our%20API%20key%20btw&page=2`` decoded reads ``key btw&page=2``: the word and the next pair stay."""
    text = "GET https://example.com/search?q=our%20API%20key%20btw&page=2"
    assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(sorted(_KINDS)), form=st.sampled_from((
    "1. Log into grafana (admin / {P})", "sign in to the NAS as admin / {P}", "Log into the wiki with bob / {P}.",
    "| Service | Username | Password |\n|---|---|---|\n| jenkins | ci | {P} |",
    "| host | password |\n|---|---|\n| db1 | {P} |\n| db2 | `{P}` |")))
def test_property_obs58_59_a_login_in_parentheses_and_a_password_column_lose_the_value_only(
        seed: int, kind: str, form: str) -> None:
    """OBS-58 / OBS-59 (stop 56 soak of structured notes): a login sentence with the user and the password in
    parentheses or after ``sign in to … as``, and a table's password column whose cell is a password as people make
    them or letters alone (``River52!``, ``djTJEvVIGxSNjKR``): the value goes, the user and the table stay."""
    secret = _KINDS[kind](random.Random(seed))
    if "Log" in form or "sign" in form:
        secret = _alnum(random.Random(seed)) if kind == "human" else secret  # a login sentence wants a random value
    text = form.format(P=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret)), text


@pytest.mark.parametrize("text", [
    "| Service | Username | Password |\n|---|---|---|\n| z | w | HelloWorld |\n| a | b | see vault |",
    "Log into grafana (admin / see vault)", "login page (user / pass) fields"])
def test_obs55_a_password_column_of_words_and_a_login_without_a_value_stay(text: str) -> None:
    """OBS-55: a CamelCase name and words in a password column, a login sentence without a generated value."""
    assert scrub_text(text) == text
