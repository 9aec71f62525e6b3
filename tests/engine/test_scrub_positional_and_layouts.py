"""Passwords given by position, by SQL keywords, after a label that ends its line, and in sentences of other
languages (OBS-57, OBS-58): each loses exactly its password; the command, the user, the statement and the
sentence stay, and the look-alikes in prose stay whole."""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import find_spans, redaction_marker, scrub_text

from ._scrub_support import password

_SYMBOLS = "!#%^*+-_.~"


def _secret(seed: int) -> str:
    """A generated password, with a symbol now and then (no quote, blank or shell metacharacter)."""
    r = random.Random(seed)
    p = password(r)
    if r.random() < 0.5:
        k = r.randrange(1, len(p) - 1)
        p = p[:k] + r.choice(_SYMBOLS) + p[k:]
    return p


def _assert_hidden_once(template: str, seed: int) -> None:
    """``template`` with a generated password put in: scrubbing replaces that password, once, and nothing else."""
    p = _secret(seed)
    text = template.format(p=p)
    assert scrub_text(text) == text.replace(p, redaction_marker(p), 1)


_STATEMENTS = [
    "ALTER USER 'root'@'localhost' IDENTIFIED BY '{p}';",
    "GRANT ALL ON *.* TO 'app'@'%' IDENTIFIED BY '{p}';",
    'CREATE USER "u"@"%" IDENTIFIED WITH caching_sha2_password BY "{p}";',
    "create user scott identified by {p};",
    "ALTER USER app IDENTIFIED BY {p}",
    '{{"cmd": "mysql -e \\"CREATE USER \'a\'@\'%\' IDENTIFIED BY \'{p}\'\\""}}',
]


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), statement=st.sampled_from(_STATEMENTS))
def test_property_sql_identified_by_loses_its_password(seed: int, statement: str) -> None:
    """OBS-58: MySQL's and Oracle's ``IDENTIFIED BY 'P'`` (quoted, or bare in a ``CREATE`` / ``ALTER USER``)."""
    _assert_hidden_once(statement, seed)


_COMMANDS = [
    "rabbitmqctl add_user admin {p}",
    "rabbitmqctl change_password admin '{p}'",
    "net user admin {p} /add",
    "C:\\> net user svc_backup {p} /add /y",
    "net use \\\\fileserver\\share {p} /user:CORP\\bob",
    "net use Z: \\\\fileserver\\share /user:alice {p} /persistent:no",
    "[smtp.gmail.com]:587 me@gmail.com:{p}",
    "smtp.sendgrid.net:587 apikey:{p}\n",
    'echo "admin:{p}" | chpasswd',
    "echo 'deploy:{p}' | sudo chpasswd",
    "nmcli dev wifi connect HomeNet password {p}",
    "nmcli con modify wlan0 wifi-sec.psk '{p}'",
    "wpa_passphrase HomeNet {p}",
    "mysqladmin -u root password '{p}'",
    "auth = HTTPBasicAuth('admin', '{p}')",
    'mail.login("bot@x.io", "{p}")',
    'server.login(user, "{p}")',
    'requests.get(url, auth=("user", "{p}"))',
    'conn.simple_bind_s("cn=admin,dc=example,dc=org", "{p}")',
    'aiohttp.BasicAuth("u", "{p}")',
    'network={{\n    ssid="HomeNet"\n    psk="{p}"\n}}',
    'metadata = [("x-api-key", "{p}")]',
    "headers = [('X-Auth-Token', '{p}'), ('Accept', 'application/json')]",
]


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), command=st.sampled_from(_COMMANDS))
def test_property_a_password_given_by_position_is_hidden(seed: int, command: str) -> None:
    """OBS-58: commands and calls that take a user and a password by position (``net user NAME P``,
    ``net use \\\\srv\\share P /user:NAME``, a mail relay's ``[host]:port user:P``, ``rabbitmqctl add_user NAME P``,
    ``echo NAME:P | chpasswd``, ``HTTPBasicAuth('u', 'P')``, ``smtp.login(u, 'P')``) and WPA's ``psk``: the password
    alone is replaced."""
    _assert_hidden_once(command, seed)


def test_look_alikes_of_positional_passwords_stay() -> None:
    """OBS-58: prose and calls that give no password stay."""
    for text in ["Use net user to list accounts.", "net user admin /delete", "net user admin * /add",
                 "net use \\\\fileserver\\share /delete", "net use Z: \\\\fileserver\\share * /user:alice",
                 "db.example.com:5432 connected:yes", "localhost:8080 GET:/index.html",
                 "The API key expired yesterday.", 'choices = [("token", "Token"), ("password", "Password")]',
                 "The user is identified by their email address.", 'log.auth("user", "logged in")',
                 'page.login("alice", "password")']:
        assert scrub_text(text) == text


_LABELS = ["Password:\n{p}\n", "Here is your token:\n```\n{p}\n```\n", "**API key:**\n{p}", "Your new password:\n  {p}",
           "Password (prod) = {p}", "- Token (staging) = {p}"]


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), label=st.sampled_from(_LABELS))
def test_property_a_value_alone_on_the_line_after_its_label_is_hidden(seed: int, label: str) -> None:
    """OBS-57: a label that ends its line with a colon and names a credential with its last words, then the value
    alone on the next line (in a code fence too); and ``Password (prod) = P``."""
    _assert_hidden_once(label, seed)


def test_a_list_or_a_paragraph_under_a_label_stays() -> None:
    """OBS-58: what follows a heading-like label is not a value unless it looks generated and stands alone."""
    for text in ["Password:\n- must be 12 chars", "## API key:\nUse the dashboard to create one.",
                 "Token:\nabc-def-ghi", "Key:\n/home/alice/.ssh/id_rsa.pub"]:
        assert scrub_text(text) == text


_SENTENCES = ["Das Passwort lautet {p}.", "Das Kennwort ist {p}", "la contraseña es {p}", "a senha é {p}",
              "le mot de passe est {p}", "het wachtwoord is {p}", "hasło jest {p}", "пароль — {p}",
              "La contraseña de la base de datos es {p}", "Le mot de passe du serveur est {p}",
              "Das WLAN-Passwort lautet {p}", "Der API-Schlüssel ist {p}", "A senha do banco é {p}", "La password è {p}",
              "La password del database è {p}", "Мой пароль {p}", "Het wachtwoord van de server is {p}",
              "Hasło do bazy to {p}", "El token de acceso es {p}", "La clé API est {p}", "La clave API es {p}",
              "Il token è {p}", "O token é {p}", "Identifiant : admin — mot de passe : {p}", "Il token API è {p}",
              "Lösenordet är {p}", "Passordet er {p}"]


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), sentence=st.sampled_from(_SENTENCES))
@example(seed=17004129, sentence="Das Passwort lautet {p}.")  # KI0Iejqzs_FV0 read as a name (Iejqzs an English word)
def test_property_a_password_in_a_sentence_of_another_language_is_hidden(seed: int, sentence: str) -> None:
    """OBS-57: German, Spanish, Portuguese, French, Dutch, Polish and Russian sentences giving a password."""
    _assert_hidden_once(sentence, seed)


@pytest.mark.parametrize("value", ["sommer24", "hunter2", "GubabkRB3Oyt", "wachtwoord1"])
@pytest.mark.parametrize("sentence", ["Das Passwort ist {p}", "het wachtwoord is {p}.", "la contraseña es {p}",
                                      "Lösenordet är {p}", "La clé API est {p}"])
def test_obs58_a_word_and_a_number_or_a_name_like_draw_stated_in_another_language_is_hidden(
        sentence: str, value: str) -> None:
    """OBS-58: a sentence of another language that states the value (a copula, a colon) gives it as the English one
    does: a word and a number, and letters and digits read as a CamelCase name's, are the password."""
    text = sentence.format(p=value)
    assert scrub_text(text) == text.replace(value, redaction_marker(value))


@pytest.mark.parametrize("text", ["Das Passwort ist utf8mb4", "le mot de passe est incorrect",
                                  "la contraseña es base64"])
def test_obs55_what_a_foreign_sentence_says_a_password_is_stays(text: str) -> None:
    assert scrub_text(text) == text


_ASCII_SENTENCES = ["Das Passwort lautet {p}.", "Das Kennwort ist {p}", "la contrasena es {p}", "la clave es {p}",
                    "le mot de passe est {p}", "het wachtwoord is {p}", "haslo jest {p}", "losenord er {p}",
                    "passord er {p}", "adgangskode er {p}", "salasana on {p}", "la parola es {p}",
                    "Die Zugangsdaten sind admin / {p}", "la chiave API es {p}", "mot de passe : {p}",
                    "Passwort {p}", "the credentials are admin / {p}", "il token API: {p}", "passordet er {p}",
                    "le jeton est {p}", "A chave da API é {p}", "la clave de la API es {p}", "Kata sandi: {p}",
                    "kata laluan: {p}"]


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), sentence=st.sampled_from(_ASCII_SENTENCES),
       case=st.sampled_from(["as is", "upper", "title"]), lead=st.sampled_from(["", "Note: ", "x = 1\n"]))
def test_property_the_foreign_sentences_pre_check_is_exact(seed: int, sentence: str, case: str, lead: str) -> None:
    """OBS-57: an ASCII text is read for these sentences only when it holds one of their names (a pre-check): in
    any case, the spans are those of the reader run without it (``gated=False``), and the value is hidden, also
    after a name no credential hint is part of (``clave``, ``parola``: these leaked before)."""
    secret = password(random.Random(seed))
    words = {"as is": sentence, "upper": sentence.upper(), "title": sentence.title()}[case].replace(
        "{P}", "{p}")
    text = lead + words.format(p=secret)
    assert find_spans(text) == find_spans(text, gated=False)
    assert secret not in scrub_text(text)


_MORE_LANGUAGES = ("كلمة المرور: {p}", "كلمة السر: {p}", "รหัสผ่าน: {p}", "Mật khẩu: {p}", "Jelszó: {p}", "पासवर्ड: {p}",
                   "Парола: {p}", "Лозинка: {p}", "Κωδικός: {p}", "Kata sandi: {p}", "le jeton est {p}",
                   "A chave da API é {p}")


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_MORE_LANGUAGES), human=st.booleans())
def test_property_obs58_59_a_password_named_in_more_languages_loses_its_value_only(
        seed: int, form: str, human: bool) -> None:
    """OBS-58 / OBS-59 (stop 56 soak): the word for password in Arabic, Thai (its vowel signs are marks, not letters:
    the name was cut at them), Vietnamese, Hungarian, Hindi (a virama), Bulgarian, Serbian, Greek, Indonesian, and
    French ``jeton`` and Portuguese ``chave da API``: the value goes, generated or a word and a number."""
    r = random.Random(seed)
    secret = f"{r.choice(('Summer', 'dragon', 'Falcon'))}{r.randint(10, 2025)}" if human else password(r)
    text = form.format(p=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


def test_sentences_about_a_password_stay() -> None:
    """OBS-58: a sentence that says something of the password gives no value."""
    for text in ["Das Passwort ist falsch.", "la contraseña es incorrecta", "a senha é obrigatória", "Passwort vergessen",
                 "The credentials are in the vault / ask ops", "Пароль изменён", "La contraseña de Juan es secreta",
                 "Il token è scaduto", "El token de acceso es válido", "Der API-Schlüssel ist ungültig"]:
        assert scrub_text(text) == text


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), header=st.sampled_from(["| service | password |", "| Name | Token | Notes |",
                                                          "| host | user | API key |"]),
       separator=st.sampled_from(["|---|---|---|", "| :--- | :---: | --- |"]))
@example(seed=8011357, header="| host | user | API key |", separator="| :--- | :---: | --- |")  # …_xxx
def test_property_a_column_a_header_names_holds_credentials(seed: int, header: str, separator: str) -> None:
    """OBS-57: a Markdown table whose header names a credential in a column (``| service | password |``): each row's
    cell in that column is replaced when it looks generated; the header, the other columns and a note stay."""
    r = random.Random(seed)
    names = [c.strip() for c in header.strip("|").split("|")]
    column = next(i for i, n in enumerate(names) if n.lower() in ("password", "token", "api key"))
    secrets, rows = [], []
    for row in range(3):
        cells = [f"item{row}{i}" for i in range(len(names))]
        cells[column] = _secret(r.randrange(2**32)) if row < 2 else "(set via SSO)"
        secrets += [cells[column]] if row < 2 else []
        rows.append("| " + " | ".join(cells) + " |")
    text = "\n".join([header, separator, *rows])
    expected = text
    for p in secrets:
        expected = expected.replace(f"| {p} |", f"| {redaction_marker(p)} |")
    assert scrub_text(text) == expected


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), noun=st.sampled_from(["auth token", "API key", "access token", "client secret"]))
def test_property_a_two_word_credential_name_then_a_long_value_is_hidden(seed: int, noun: str) -> None:
    """OBS-57: ``twilio sid AC… auth token P``: a credential's two-word name then a long generated value, no verb."""
    p = password(random.Random(seed), 24)
    text = f"twilio sid AC9209dcb468e07e032fd0db161b56bb9a {noun} {p} (prod)"
    assert scrub_text(text) == text.replace(p, redaction_marker(p))


_NOTES = ["copy it now, it won't be shown again", "valid for 1h, scope: read", "prod, rotated 2026-11-02",
          "don't share it", "the new one, not the old one"]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), note=st.sampled_from(_NOTES),
       name=st.sampled_from(["API key", "password", "access token", "client secret", "token"]),
       lead=st.sampled_from(["Here's your new {n} ({o}): {p}", "- {n} ({o}): {p}\n", "Your {n} ({o}): {p}."]))
def test_property_a_credential_name_with_a_note_in_parentheses_labels_its_value(
        seed: int, note: str, name: str, lead: str) -> None:
    """OBS-57: a credential name with a note in parentheses, commas and apostrophes in it, then a colon, labels the
    value after it (``your new API key (copy it now, it won't be shown again): P``); the note stays."""
    p = password(random.Random(seed))
    text = lead.format(n=name, o=note, p=p)
    assert scrub_text(text) == text.replace(p, redaction_marker(p))


def test_a_note_in_parentheses_before_a_word_stays() -> None:
    """OBS-58: after such a label a word or a sentence stays: it is no generated value."""
    for text in ["API key (see docs, page 4): required", "password (min 8 chars, one digit): yes it is"]:
        assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32),
       lead=st.sampled_from(["Use {p} as the password.", "use `{p}` as your new API key", "Set {p} as the token",
                             "try {p} as the admin password", 'Use "{p}" as the client secret.']))
def test_property_a_value_named_after_it_as_a_credential_is_redacted(seed: int, lead: str) -> None:
    """OBS-57: a sentence that gives the value first and then the credential it is used as (``Use P as the
    password.``): the value is replaced, the sentence stays."""
    p = password(random.Random(seed))
    text = lead.format(p=p)
    assert scrub_text(text) == text.replace(p, redaction_marker(p))


def test_a_word_used_as_a_credential_stays() -> None:
    """OBS-58: ``use this as the password``, ``We use Redis as the session store``: no generated value."""
    for text in ["use this as the password", "We use Redis as the session store",
                 "Use PASSWORD_ENV as the password variable"]:
        assert scrub_text(text) == text


@pytest.mark.parametrize("value", ["KI0Iejqzs_FV0", "Xq9Tzqkv_Ab1", "tualkieqad3"])
def test_obs58_a_q_no_u_follows_makes_no_english_word(value: str) -> None:
    """OBS-58: English writes ``u`` after ``q`` inside a word, so runs such as ``Iejqzs`` are no word of a name and
    the value is a password's; ``seq``, ``req``, ``faq`` (a final ``q``) and ``queue_size``, ``squad_id`` stay names."""
    for text in (f"Das Passwort lautet {value}.", f"Password:\n{value}\n"):
        assert scrub_text(text) == text.replace(value, redaction_marker(value)), text
    for kept in ("password = seq_req_id", "the token is freq_faq", "Password:\nsquad_queue_size\n"):
        assert scrub_text(kept) == kept


# ------------------------------------------------------------------------------------------------------------------
# Several codes after one name, a value in angle brackets (OBS-58, OBS-59)
# ------------------------------------------------------------------------------------------------------------------

_CODE_LIST_NAMES = ("Recovery codes", "recovery codes", "Backup codes", "One-time codes", "2FA backup codes",
                    "MFA recovery codes", "Recovery codes (GitHub)", "**Backup codes**", "scratch codes")


def _code(r: random.Random, kind: str) -> str:
    if kind == "digits":
        return str(r.randint(10**7, 10**8 - 1))
    if kind == "groups":
        return f"{r.randint(1000, 9999)}-{r.randint(1000, 9999)}"
    return password(r, r.randint(10, 16))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(_CODE_LIST_NAMES), n=st.integers(1, 6),
       kind=st.sampled_from(("digits", "groups", "password")), sep=st.sampled_from((" ", ", ", "  ", "; ", "、")),
       lead=st.sampled_from(("", "- ", "> ", "Note: ")), end=st.sampled_from(("", ".", "\nkeep them offline")))
@example(seed=182631, name="Recovery codes", n=3, kind="password", sep=" ", lead="", end="")  # DB46HoleSanv: words
@example(seed=1606, name="Recovery codes", n=4, kind="password", sep=", ", lead="", end="")  # OQ21IzrbIilt, after ", "
def test_property_obs58_several_codes_after_one_name(seed: int, name: str, n: int, kind: str, sep: str, lead: str,
                                                     end: str) -> None:
    """OBS-58, OBS-59: recovery, backup or one-time codes listed after one name (``Recovery codes: P1 P2 P3``,
    ``Backup codes: P1, P2``): every code is hidden, the separators stay (``Backup codes: 8 remaining``, ``Backup
    codes: stored offline`` stay: test_scrub_false_positives)."""
    r = random.Random(seed)
    codes = []
    while len(codes) < n:
        code = _code(r, kind)
        if all(code not in c and c not in code for c in codes):
            codes.append(code)
    text = f"{lead}{name}: {sep.join(codes)}{end}"
    expected = text
    for code in codes:
        expected = expected.replace(code, redaction_marker(code))
    out = scrub_text(text)
    assert out == expected, (text, out)
    assert scrub_text(out) == out


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(("password", "Password", "token", "API key", "client_secret",
                                                          "DB_PASSWORD", "secret")),
       sep=st.sampled_from((": ", "=", " = ", " -> ")), end=st.sampled_from(("", ".", " (prod)")))
def test_property_obs59_a_value_in_angle_brackets_keeps_them(seed: int, name: str, sep: str, end: str) -> None:
    """OBS-59: ``password: <P>``: only the value inside the angle brackets is hidden, the brackets stay
    (``password: <password>``, a placeholder, stays whole: test_scrub_false_positives)."""
    secret = _secret(seed)
    if " " in name and "=" in sep:
        sep = ": "  # API key=P: a name of two words is a label's, before a colon
    text = f"{name}{sep}<{secret}>{end}"
    out = scrub_text(text)
    assert out == text.replace(secret, redaction_marker(secret)), (text, out)
    assert scrub_text(out) == out


@pytest.mark.parametrize("template", [
    "GitHub recovery codes:\n{a}\n{b}\n{c}\n\nKeep them offline.", "Backup codes:\n- {a}\n- {b}\n- {c}",
    "2FA backup codes - {a} {b} {c}", "- Recovery codes: `{a}` `{b}` `{c}`", "Recovery codes: {a} {b} {c} (keep safe)",
    "recovery codes (Google):\n1. {a}\n2. {b}\n3. {c}\nThen sign in."])
def test_obs58_codes_on_the_lines_below_their_name(template: str) -> None:
    """OBS-58, OBS-59: codes listed on the lines below their name (one a line, after a bullet or a number too), in
    backticks, or after a dash: every code, the list's marks and the prose around it stay."""
    r = random.Random(template)
    codes = [_code(r, kind) for kind in ("password", "digits", "groups")]
    text = template.format(a=codes[0], b=codes[1], c=codes[2])
    expected = text
    for code in codes:
        expected = expected.replace(code, redaction_marker(code))
    out = scrub_text(text)
    assert out == expected, (text, out)
    assert scrub_text(out) == out
