"""Settings, rows, rotations and logins that left their value (OBS-55, OBS-58, OBS-59; stop 57 soak).

The notes soak of the previous session listed what it still found kept: a Gradle signing config's ``storePassword P``
(a ``name value`` setting whose name is CamelCase, not ``snake_case``), an export's row without blanks around its bar
(``Password|P``), a sentence naming the value (``the key's value is P``), the new value after a rotation (``Token
rotated; new value P``), letters alone drawn in both cases after a name made strong by the word before it (``your API
key: fPXqndYCAMrXlUV``) or in a login sentence (``Log into grafana (admin / IcgGwUprCXeZ)``), an administrator's
``root:P`` line, and a URL userinfo password holding an ``@`` before a ``#`` or ``?`` (``https://bob:p@ss#w0rd99@
github.com``).

Every planted value loses exactly its span (and its percent-encoded form in a search query); what reads as code, a
word, a name or a host stays."""

from __future__ import annotations

import json
import random
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

from ._scrub_support import assert_only_secret_hidden, note_password, password


_CONSONANTS = "".join(c for c in string.ascii_letters if c.lower() not in "aeiouy")


def _drawn_letters(r: random.Random) -> str:
    """Letters alone as a generator draws them: both cases, a capital after the first letter, and (so that no piece
    reads as a word of a CamelCase name) consonants only, as often in a drawn token's runs."""
    while True:
        value = "".join(r.choice(_CONSONANTS) for _ in range(r.randint(12, 24)))
        if any(c.isupper() for c in value[1:]) and any(c.islower() for c in value) and not value[0].isupper():
            return value


def _value(r: random.Random, kind: str) -> str:
    if kind == "letters":
        return _drawn_letters(r)
    if kind == "note":
        return note_password(r, symbols="%^*_+", share=0.3)
    return password(r)


_KINDS = ("alnum", "note", "letters")
_SETTINGS = ("storePassword {P}", "    keyPassword {P}", "clientSecret {P}", "apiToken {P}", "- authToken {P}")
_ROWS = ("Password|{P}", "API token|{P}|", "db password|{P}", "> Secret|{P}")
_SENTENCES = ("the key's value is {P}", "The password's value is {P}.", "the token value is {P}",
              "Token rotated; new value {P}", "Password changed, the new one is {P}.", "API key rotated. New value: {P}",
              "your API key: {P}", "Here's your API key: {P}, thanks", "our API key={P}",
              "Bob reuses {P} as his password", "she uses {P} as her API key", "the router admin password is admin / {P}",
              "the password is bob@example.com / {P}.", "GitHub password is stored as {P}.",
              "the password is saved as {P} in the vault")
_LOGINS = ("Log into grafana (admin / {P})", "Log in as admin / {P}", "sign in to the NAS as admin / {P}",
           "the credentials are admin / {P}", "root:{P}", "admin: {P}", "creds\nroot:{P}\nthanks")
_MEMORY = ("router: admin / {P}", "staging db: bob@example.com / {P}", "Login for GitHub is bob@example.com with {P}",
           "Login for the staging db is admin with {P}", "the NAS pw {P}", "Remember Grafana token {P}",
           "Grafana: {P} (password)", "DB_PASSWORD for Jira is {P}", "Jira login: bob / {P}", "Postgres key: {P}")
"""Notes as an agent's memory file keeps them (entries between ``§`` lines): a service's login line, a login sentence
naming the service, a bare name then the value."""


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(_KINDS),
       form=st.sampled_from(_SETTINGS + _ROWS + _SENTENCES + _LOGINS + _MEMORY))
@example(seed=1, kind="letters", form="Log into grafana (admin / {P})")
@example(seed=2, kind="alnum", form="storePassword {P}")
def test_property_obs58_59_settings_rows_rotations_and_logins_lose_exactly_their_value(
        seed: int, kind: str, form: str) -> None:
    """OBS-58 / OBS-59: each form with a generated value, letters alone or a password with a symbol: exactly the
    value's span goes; the same note inside a JSON string loses the same span."""
    r = random.Random(seed)
    secret = _value(r, kind)
    if kind == "letters" and form in _SETTINGS + _ROWS + ("root:{P}", "admin: {P}", "creds\nroot:{P}\nthanks"):
        secret = password(r)  # a setting's or a row's value is judged as generated: letters alone may be a word there
    text = form.format(P=secret)
    assert_only_secret_hidden(text, secret)
    encoded = json.dumps({"content": text})
    assert scrub_text(encoded) == json.dumps({"content": text.replace(secret, redaction_marker(secret))})


@pytest.mark.parametrize(("text", "secret"), [
    ("git clone https://bob:p@ss#w0rd99@github.com/o/r.git", "p@ss#w0rd99"),
    ("https://alice:f@lc0n659?@gitlab.com", "f@lc0n659?"),
    ("remote = https://ci:Xk9@mPq2#vL7@git.example.org/team/app.git", "Xk9@mPq2#vL7"),
])
def test_obs58_a_userinfo_password_holding_an_at_sign_before_a_hash_or_question_mark_goes_whole(
        text: str, secret: str) -> None:
    """OBS-58: the ``@`` before ``ss`` is the password's when a real host follows a later ``@`` (no path, query pair or
    ``=`` between): the whole password goes, the user and the host stay."""
    assert_only_secret_hidden(text, secret)


@pytest.mark.parametrize("text", [
    "storePassword myPassword", "apiKey getApiKey()", "accessKey process.env.KEY", "keyAlias myalias",
    "authToken Xk9mPq2vL7;", "x = a|b", "FLAG_PASSWORD|FLAG_OTHER", "Token|abc", "the key's value is a string",
    "the API key value is 42", "Cache updated; new value 42", "token rotated; new value is pending",
    "your API key: NotConfigured", "Log into grafana (admin / HelloWorld)", "log in as admin / password",
    "Use GitHubDesktop to sign in", "root:x:0:0:root:/root:/bin/bash", "admin: enabled", "Root: /var/www",
    "admin:some_setting_name", "postgres:postgres", "https://u@host?email=bob@example.com",
    "https://host/x?email=bob@example.com", "see https://example.com/a#b@c for details"])
def test_obs55_code_words_names_and_hosts_in_those_forms_stay(text: str) -> None:
    """OBS-55: a call, a word, a CamelCase name, a passwd line, a setting's name or a query's address stays."""
    assert scrub_text(text) == text


def test_obs59_a_userinfo_password_before_a_query_holding_an_address_stays_the_password() -> None:
    """OBS-59: ``?email=bob@example.com`` after the host is the query's: the password ends at the first host's
    ``@``, and the address stays."""
    secret = "Xk9mPq2vL7"
    assert_only_secret_hidden(f"https://u:{secret}@host?email=bob@example.com", secret)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(_KINDS), form=st.sampled_from(_MEMORY),
       other=st.sampled_from(("User prefers concise answers.", "Project uses Python 3.11.")), first=st.booleans())
def test_property_obs58_59_a_memory_entry_loses_its_value_and_the_other_entries_stay(
        seed: int, kind: str, form: str, other: str, first: bool) -> None:
    """OBS-58 / OBS-59: an entry of a memory file (``§`` between entries) holding a login or a bare name's value
    loses exactly the value; the other entry and the separators stay byte for byte."""
    secret = _value(random.Random(seed), kind)
    entries = [form.format(P=secret), other]
    assert_only_secret_hidden("\n§\n".join(entries if first else entries[::-1]), secret)


@pytest.mark.parametrize("text", [
    "Ratio: 3 / 4", "Path: src / lib", "Roles: admin / editor", "Grafana: admin / admin",
    "The login for Jira is bob with the SSO button", "Login for GitHub is bob@example.com with 2FA enabled",
    "key: someIdentifierName", "primary_key: UserAccount", "sort key: createdAt",
    "- BROWSERBASE_API_KEY: API key for direct Browserbase cloud mode",
    "ntske\t\t4460/tcp\t# Network Time Security Key Establishment",
    "Key's Asymmetric Key Type is not registered for use in the", "encryptTmpSecretKey → tmpSecretKey",
    'async def set_tokens(self, tokens: "OAuthToken") -> None:', "It uses bcrypt as its password hash",
    "we use Redis as the token store", "the password ratio is 50 / 50", "the password is admin / admin",
    "the password is stored as a bcrypt hash", "the token is stored as plaintext", "the key is stored as base64"])
def test_obs55_roles_ratios_paths_names_and_capitalised_words_stay(text: str) -> None:
    """OBS-55: a ratio, a path, two roles, a user's own name as its password's placeholder, a sentence about a login, an
    identifier, and a capitalised word after a weak name (false positives of the corpora) stay."""
    assert scrub_text(text) == text


@pytest.mark.parametrize("secret", ["RnkLQONQZihm", "fPXqndYCAMrXlUV", "IcgGwUprCXeZ", "tWQVyNLOZWbkmA"])
def test_obs58_letters_drawn_at_random_are_hidden_though_a_piece_reads_as_a_word(secret: str) -> None:
    """OBS-58: letters drawn at random whose runs read as an acronym and a word (``LQONQ``, ``Zihm``) after a short
    piece are a value, not a CamelCase name after a prefix as ``tmpSecretKey`` is (a memory soak's draw)."""
    assert_only_secret_hidden(f"User said the Jira password changed to {secret} — rotate monthly", secret)


_SEED_WORDS = ("abandon", "ability", "able", "about", "above", "absent", "absorb", "abstract", "absurd", "abuse",
               "access", "accident", "legal", "winner", "thank", "year", "wave", "sausage", "worth", "useful",
               "letter", "advice", "cage", "amount", "doctor", "acoustic", "avoid", "zoo", "wrong", "yellow")
_SEED_FORMS = ("seed phrase: {P}", "Recovery phrase = {P}", 'My wallet recovery phrase is "{P}"', "MNEMONIC={P}",
               "- secret recovery phrase: `{P}`", "mnemonic: {P}\nnext: 1")


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.sampled_from(_SEED_WORDS), min_size=12, max_size=24).filter(
    lambda w: len(w) in (12, 15, 18, 21, 24)), form=st.sampled_from(_SEED_FORMS))
def test_property_obs58_59_a_seed_phrase_goes_whole(words: list[str], form: str) -> None:
    """OBS-58 / OBS-59: a wallet's seed phrase (12 to 24 BIP-39 words) after its name goes as one value, plain and
    inside a JSON string; its name and what follows stay."""
    secret = " ".join(words)
    text = form.format(P=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))
    encoded = json.dumps({"content": text})
    assert scrub_text(encoded) == json.dumps({"content": text.replace(secret, redaction_marker(secret))})


@pytest.mark.parametrize("text", [
    "seed phrase: the words are kept in the vault and must never be shared with anyone else",
    "seed: 42", "random seed: abandon ability able", "the mnemonic is a list of words that encodes the wallet seed",
    "Write your recovery phrase on paper and keep it somewhere safe, away from any device you own"])
def test_obs55_sentences_about_seed_phrases_stay(text: str) -> None:
    """OBS-55: a sentence about a seed phrase, a random seed's number and too few words stay."""
    assert scrub_text(text) == text
