"""A credential loses the same span whatever encloses the text that gives it (OBS-57, OBS-58, OBS-59): quotes and
typographic quotes, parentheses, brackets and braces, backticks, a list, quote-block or comment mark, a log line's
stamp and level, a short label, an HTML element, a sentence going on around it. What encloses the text is never part
of the span: the same secret gets the same marker, and the text around it is kept as it was."""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

from ._scrub_support import KEY_SAMPLES, password

WRAPPERS = ('"{t}"', "'{t}'", 'User said: "{t}"', "({t})", "> {t}", "- {t}", "1. {t}", "# {t}", "<p>{t}</p>",
            "<td>{t}</td>", "<li>{t}</li>", "<code>{t}</code>", "<pre>{t}</pre>", "[2026-12-06 10:00] {t}", "“{t}”",
            "「{t}」", "**Note:** {t}", "`{t}`", "2026-12-06T10:00:00Z INFO {t}", "[{t}]", "{{{t}}}", "See {t} for details.",
            "{t}, then restart")
SHAPES = ("API_KEY={p}", "export API_KEY={p}", "password: {p}", "DB_PASSWORD={p}", "token={p}", "--password {p}",
          "--api-key={p}", "Authorization: Bearer {p}", "https://admin:{p}@db.example.com/app",
          "https://x.io/cb?token={p}", '"password": "{p}"', "api_key = '{p}'", "{k}", "key {k}", "GITHUB_TOKEN={k}",
          "Bearer {k}")
_KEYS = tuple(KEY_SAMPLES.values())


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32), shape=st.sampled_from(SHAPES), wrapper=st.sampled_from(WRAPPERS))
def test_property_obs59_a_credential_loses_the_same_span_whatever_encloses_it(seed: int, shape: str,
                                                                              wrapper: str) -> None:
    """OBS-59: a generated password or a published key format in a setting, an option, a header, a URL, a JSON or
    Python pair, or alone, loses exactly its span, with or without what encloses the text."""
    r = random.Random(seed)
    secret = r.choice(_KEYS)(r) if "{k}" in shape else password(r)
    text = shape.format(p=secret, k=secret)
    assume(text.count(secret) == 1)
    wrapped = wrapper.format(t=text)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))
    assert scrub_text(wrapped) == wrapped.replace(secret, redaction_marker(secret)), wrapped


def test_obs59_a_schemes_credential_ends_at_a_typographic_quote() -> None:
    """OBS-59: ``“Authorization: Bearer P”``, ``「Bearer P」``: no scheme's credential holds a quote of any kind."""
    for text in ("“Authorization: Bearer FUTPLk8u2JzHZgAFaFLx4”", "「Bearer FUTPLk8u2JzHZgAFaFLx4」",
                 "‘Basic FUTPLk8u2JzHZgAFaFLx4’"):
        assert scrub_text(text) == text.replace("FUTPLk8u2JzHZgAFaFLx4", redaction_marker("FUTPLk8u2JzHZgAFaFLx4"))


def _positional_forms() -> tuple[str, ...]:
    """The one-line statements, commands, labels and sentences of the positional and layout tests."""
    from . import test_scrub_positional_and_layouts as layouts

    forms = layouts._STATEMENTS + layouts._COMMANDS + layouts._LABELS + layouts._SENTENCES + layouts._ASCII_SENTENCES
    return tuple(form.strip("\n") for form in forms if "\n" not in form.strip("\n"))


_POSITIONAL_WRAPPERS = ('"{t}"', 'User said: "{t}"', "({t})", "> {t}", "- {t}", "# {t}", "<p>{t}</p>", "<li>{t}</li>",
                        "[2026-12-06 10:00] {t}", "“{t}”", "**Note:** {t}", "`{t}`", "2026-12-06T10:00:00Z INFO {t}",
                        "// {t}", "Ran: {t}", "- [ ] {t}", "    {t}")


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_positional_forms()),
       wrapper=st.sampled_from(_POSITIONAL_WRAPPERS))
@example(seed=0, form="Kata sandi: {p}", wrapper="2026-12-06T10:00:00Z INFO {t}")  # a two-word name after a stamp
def test_property_obs57_59_a_command_or_statement_loses_the_same_span_whatever_encloses_it(
        seed: int, form: str, wrapper: str) -> None:
    """OBS-57 / OBS-59: a password given by position (``net user admin P /add``, ``rabbitmqctl add_user admin P``,
    SQL's ``IDENTIFIED BY P``), after a label or in another language's sentence, loses its span and nothing else
    when the line is quoted, parenthesised, a list item, a comment, an element's text, after a log line's stamp and
    level or a label (``Ran: …``): the closing quote, bracket or tag stays."""
    from .test_scrub_positional_and_layouts import _secret

    secret = _secret(seed)
    text = form.format(p=secret)
    assume(text.count(secret) == 1)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))
    wrapped = wrapper.format(t=text)
    assert scrub_text(wrapped) == wrapped.replace(secret, redaction_marker(secret)), wrapped


def test_obs59_a_closing_bracket_or_quote_of_the_text_stays_and_a_values_own_stays_in_it() -> None:
    """OBS-59: ``(rabbitmqctl add_user admin P)`` keeps its ``)``; ``Password: (P)`` and ``Xk9(ab)`` are values whose
    brackets are their own."""
    secret = "6E01Y0_pMptHPpFa"
    for text in (f"(rabbitmqctl add_user admin {secret})", f"“ALTER USER app IDENTIFIED BY {secret}”",
                 f"<li>ALTER USER app IDENTIFIED BY {secret}</li>", f"`[smtp.gmail.com]:587 me@gmail.com:{secret}`",
                 f"- net user admin {secret} /add", f"2026-12-06T10:00:00Z INFO net user admin {secret} /add"):
        assert scrub_text(text) == text.replace(secret, redaction_marker(secret)), text
    assert scrub_text("password=Xk9(ab)") == "password=" + redaction_marker("Xk9(ab)")


_NOTES_AFTER = (" # prod", " // staging", " (guest network)", " [1]", " — rotate it monthly", " <br>", " ✅", " 🔑")
_LINE_VALUE_FORMS = ("Password - {p}", "- wifi password - {p}", "client_secret {p}", "- **Password:** {p}",
                     "Login for grafana: admin / {p}", "Password — {p}", "API key -> {p}",
                     "[smtp.gmail.com]:587 me@gmail.com:{p}")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_LINE_VALUE_FORMS), note=st.sampled_from(_NOTES_AFTER))
def test_property_obs57_58_a_note_after_a_lines_value_stays_and_the_value_goes(seed: int, form: str,
                                                                               note: str) -> None:
    """OBS-57 / OBS-58: a line that gives a credential's value (a label, a ``name value`` setting, a login's user
    and password, a relay's login line) may go on with a note apart from the value by a blank: a comment, a note in
    parentheses, a footnote, a dash and a phrase, a line break tag, an emoji. The value goes, the note stays."""
    secret = password(random.Random(seed))
    text = form.format(p=secret) + note
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret)), text


def test_obs59_a_schemes_credential_ends_at_full_width_punctuation() -> None:
    """OBS-59: ``Bearer P，然后重启``: a sentence in a language written without blanks goes on after the credential."""
    secret = "Xk9mQ2vLp7RtYy8nR3wM"
    for text in (f"Bearer {secret}，然后重启", f"Authorization: Bearer {secret}。"):
        assert scrub_text(text) == text.replace(secret, redaction_marker(secret)), text


@pytest.mark.parametrize("text", ["Password: the one from 1Password (see vault)", "# Password - see wiki (internal)",
                                  "client_secret rotated_yesterday # prod", "Password - changeme (default) ✅"])
def test_obs55_a_line_with_a_note_and_no_generated_value_stays(text: str) -> None:
    """OBS-55: a note after a line's value makes no value of a word, a placeholder or a sentence."""
    assert scrub_text(text) == text


_HTML_FIELDS = ('<input type="password" value="{p}">', '<input name="api_key" type="text" value="{p}"/>',
                '<meta name="api-key" content="{p}">', '<param name="token" value="{p}">',
                "<td>DB_PASSWORD</td><td>{p}</td>", "<tr><th>password</th>\n  <td>{p}</td></tr>",
                "<dt>API key</dt><dd>{p}</dd>", '<td class="k">client_secret:</td> <td class="v">{p}</td>',
                "<b>Token</b><dd>{p}</dd>")


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_HTML_FIELDS))
def test_property_obs57_59_an_html_pages_field_loses_its_value_only(seed: int, form: str) -> None:
    """OBS-57 / OBS-59: what an HTML page gives a credential (a password input's value, a named ``meta``, ``input``
    or ``param`` attribute, the table cell or the definition after one naming a credential) loses its value's span,
    the markup and the names stay."""
    secret = password(random.Random(seed))
    text = form.format(p=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret)), text


@pytest.mark.parametrize("text", ['<meta name="description" content="An API key manager">',
                                  '<input type="password" value="">', "<td>password</td><td>required</td>",
                                  "<th>Token</th><td>string</td>",
                                  "<dt>API key</dt><dd>The key you got from the dashboard.</dd>"])
def test_obs55_html_fields_without_a_generated_value_stay(text: str) -> None:
    """OBS-55: a description, an empty input, a table's type or requirement column and a definition's prose stay."""
    assert scrub_text(text) == text


def test_obs57_a_labels_value_ends_where_a_sentence_in_a_wide_script_goes_on() -> None:
    """OBS-57: ``- **Password:** P，然后重启``: the value is the run of ASCII, the Chinese sentence after it stays
    (``Password - none，稍后设置``: a word is no value)."""
    secret = "va1iX7qMxRTwEr5BLGdacdIVRu8Fm"
    for text in (f"- **Password:** {secret}，然后重启", f"Password - {secret}。次に再起動", f"API key -> {secret}、보관하세요"):
        assert scrub_text(text) == text.replace(secret, redaction_marker(secret)), text
    assert scrub_text("Password - none，稍后设置") == "Password - none，稍后设置"


_CELL_FORMS = _LINE_VALUE_FORMS + ("password: {p}", "`password: {p}`", "**API key:** `{p}`", "Token (prod): {p}",
                                   "密码：{p}", "パスワードは{p}です", "the password is {p}", "API_KEY={p}")
_ROWS = ("| db | {t} |", "| {t} | prod |", "│ db │ {t} │", "> | db | {t} | x |", "| a | b | {t} |",
         "| service | notes |\n|---|---|\n| db | {t} |")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_CELL_FORMS), row=st.sampled_from(_ROWS))
def test_property_obs57_59_a_line_in_a_table_cell_loses_its_value(seed: int, form: str, row: str) -> None:
    """OBS-57 / OBS-59: each cell of a table's row is a line of its own for the line readers (a label, a ``name
    value`` setting, a login's user and password, a relay's login line): ``| db | Password - P |`` loses P only."""
    secret = password(random.Random(seed))
    text = row.format(t=form.format(p=secret))
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret)), text


@pytest.mark.parametrize("table, user", [
    ("| service | credentials |\n|---|---|\n| db | admin:{p} |", "admin:"),
    ("| creds | admin / {p} |", "admin / "),
    ("| 服务 | 账号/密码 |\n|---|---|\n| db | root / {p} |", "root / ")])
def test_obs59_a_column_of_users_and_passwords_keeps_the_user(table: str, user: str) -> None:
    """OBS-59: under a header or beside a cell naming a user and a password together, the user stays."""
    secret = password(random.Random(table))
    text = table.format(p=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))
    assert user in scrub_text(text)


@pytest.mark.parametrize("bullet", ["・", "●", "◆", "■", "▶", "※", "★", "☆"])
@pytest.mark.parametrize("form", ["API key: {p}", "Password - {p}", "client_secret {p}", "**Token:** {p}"])
def test_obs57_59_a_line_after_a_bullet_loses_its_value(bullet: str, form: str) -> None:
    """OBS-57 / OBS-59: the bullets of Japanese and Chinese lists and notes (``・``, ``●``, ``※``, ``★``) stand before
    a line's own text as a list's ``-`` does."""
    secret = password(random.Random(bullet + form))
    text = f"{bullet} " + form.format(p=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", ["| Password | see vault |", "| note | password: see the wiki |",
                                  "| service | creds |\n|---|---|\n| db | see vault / ask ops |",
                                  "| client_secret | required |", "| token: none | password: n/a |"])
def test_obs55_table_cells_without_a_value_stay(text: str) -> None:
    assert scrub_text(text) == text
