"""Where a credential's value starts and ends in free text (OBS-57, OBS-58): typographic and CJK quotes around it,
Markdown emphasis, arrows, symbols and emoji after it, symbols glued inside a generated password, ``=~`` glued to a
name, and a password holding a backslash. The redaction replaces the value and nothing else: the quotes, the marks
and the decoration stay, and the same secret gets the same marker however it is shown."""

from __future__ import annotations

import random
import re
import string

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text
from hermes_pipeline.engine.scrub_tokens import KEY_FORMATS, MORE_KEY_FORMATS

from ._scrub_support import KEY_SAMPLES, discord_bot_token, note_password, password
from .test_scrub_key_formats_more import MORE_SAMPLES

_PAIRS = [("“", "”"), ("‘", "’"), ("「", "」"), ("『", "』"), ("【", "】"), ("《", "》"), ("«", "»"), ("＂", "＂")]
_LEADS = ["password: {o}{p}{c}", "The password is {o}{p}{c}.", "API key: {o}{p}{c}", "密码是{o}{p}{c}",
          "密码：{o}{p}{c}", "パスワードは{o}{p}{c}です。", "パスワード{o}{p}{c}", "DB_PASSWORD={o}{p}{c}",
          "- token: {o}{p}{c}\n", "我的新令牌是{o}{p}{c}，请保存。"]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), pair=st.sampled_from(_PAIRS), lead=st.sampled_from(_LEADS))
def test_property_value_in_typographic_or_cjk_quotes_is_redacted_inside_them(
        seed: int, pair: tuple[str, str], lead: str) -> None:
    """OBS-57: a value standing in typographic or CJK quotes or brackets (``“P”``, ``「P」``, ``【P】``, ``«P»``) after
    a credential name, in a label, an assignment or an English, Chinese or Japanese sentence, is replaced inside
    its quotes; the quotes and the sentence stay."""
    p = password(random.Random(seed))
    text = lead.format(o=pair[0], p=p, c=pair[1])
    assert scrub_text(text) == text.replace(p, redaction_marker(p))


def test_typographic_quotes_around_words_stay() -> None:
    """OBS-58: quoted words that are no credential stay (``“hunter”`` is a word; a quoted phrase is prose)."""
    for text in ["The password is “hunter”.", "他说“密码”很重要", "token: ‘not a secret’", "パスワード「を忘れた」場合",
                 "密码是「password」"]:
        assert scrub_text(text) == text


_DECORATIONS = ["→next", "← done", " ✓ verified", "✓ verified", "🔑", "✅", " ⇒ ok", "⟶", "»", "·"]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), decoration=st.sampled_from(_DECORATIONS),
       lead=st.sampled_from(["password: {p}", "token={p}", "API_KEY={p}", "--password {p}", "ghp token→{p}"]))
def test_property_arrow_symbol_or_emoji_after_a_value_stays(seed: int, decoration: str, lead: str) -> None:
    """OBS-58: an arrow, a check mark, a symbol or an emoji after a value is the text's decoration: it stays, and
    so does what follows it."""
    r = random.Random(seed)
    p = "ghp_" + "".join(r.choice(string.ascii_letters + string.digits) for _ in range(36)) if "ghp" in lead \
        else password(r)
    text = lead.format(p=p) + decoration
    assert scrub_text(text) == text.replace(p, redaction_marker(p))


@example(inner="😀")
@given(inner=st.sampled_from(["😀", "€", "ß", "ñ", "Ж", "§", "°"]))
def test_a_symbol_inside_a_password_is_part_of_it(inner: str) -> None:
    """OBS-57: a non-ASCII character inside a password (not at its end) is one of its characters: the whole is
    replaced, no piece after it stays."""
    p = f"Xk9{inner}mQ2vLp8"
    assert scrub_text(f"password: {p} done") == f"password: {redaction_marker(p)} done"


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), mark=st.sampled_from(["**", "__", "***"]),
       lead=st.sampled_from(["password: {v}", "The password is {v}.", "- **Token:** {v}", "| password | {v} |",
                             "API_KEY={v}"]))
def test_property_markdown_emphasis_stays_outside_the_value(seed: int, mark: str, lead: str) -> None:
    """OBS-58: Markdown emphasis around a value (``**P**``) is the text's formatting: the marks stay, and the marker
    is the one the bare secret gets (the same secret, the same marker)."""
    p = password(random.Random(seed))
    text = lead.format(v=f"{mark}{p}{mark}")
    assert scrub_text(text) == text.replace(p, redaction_marker(p))


_SYMBOLS = ")]}>;,&<"


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), stop=st.sampled_from(_SYMBOLS),
       lead=st.sampled_from(["password: {p}", "PASSWORD={p}", "db_password: {p}", "--password {p}",
                             "export DB_PASSWORD={p}"]))
def test_property_a_stop_symbol_glued_inside_a_strong_names_value_is_part_of_it(
        seed: int, stop: str, lead: str) -> None:
    """OBS-57: after a strong credential name, a generated password holding ``) ] } > ; , & <`` between runs of
    letters of both cases (no digit needed: ``btmV)EBEs``) is replaced whole: no piece after the symbol stays. A
    run after the symbol starts with a capital (a lower-case word after it is a command, as below)."""
    r = random.Random(seed)
    upper, lower = "BCDFGHJKLMNPQRSTVWXZ", "bcdfghjklmnpqrstvwxz"  # no vowels: no run spells a word
    head = r.choice(upper) + r.choice(lower) + "".join(r.choice(upper + lower) for _ in range(r.randint(1, 6)))
    tail = r.choice(upper) + "".join(r.choice(upper + lower) for _ in range(r.randint(1, 7)))
    p = head + stop + tail
    text = lead.format(p=p)
    assert scrub_text(text) == text.replace(p, redaction_marker(p))


def test_a_command_after_a_shell_assignment_stays() -> None:
    """OBS-58: ``PASSWORD=P;ls`` (a command after the value) keeps the command; code after a value stays."""
    assert scrub_text("PASSWORD=Xk9mQ2vLp8;ls -la") == f"PASSWORD={redaction_marker('Xk9mQ2vLp8')};ls -la"
    for text in ["password=getValue).toString()", "token = getToken(); next()", "f(password=Pw),g(x)"]:
        assert scrub_text(text) == text


@given(seed=st.integers(0, 2**32), lead=st.sampled_from(["PASSWORD=~{p}", "export DB_PASSWORD=~{p}",
                                                          "app --password=~{p}", "?token=~{p}&x=1"]))
def test_property_tilde_glued_to_a_name_is_the_values_first_character(seed: int, lead: str) -> None:
    """OBS-57: ``NAME=~P`` glued to its name is an assignment of a value starting with ``~``, not the match
    operator; ``$x =~ /re/`` and ``[[ $TOKEN =~ ^ghp_ ]]`` stay."""
    p = "~" + password(random.Random(seed))
    text = lead.format(p=p[1:])
    assert scrub_text(text) == text.replace(p, redaction_marker(p))


def test_the_match_operator_stays() -> None:
    """OBS-58: Perl's and Bash's ``=~`` match a pattern, no value is given."""
    for text in ["if [[ $TOKEN =~ ^ghp_[A-Za-z0-9]+$ ]]; then", "$password=~/^Xk9mQ2/", "if ($password =~ m/Xk9/) {",
                 "${password}=~m/Xk9/"]:
        assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), escape=st.sampled_from(["\\d", "\\S", "\\w", "\\."]),
       lead=st.sampled_from(["password: {p}", "PASSWORD={p}", '{{"password": "{p}"}}']))
def test_property_a_password_holding_a_backslash_is_no_pattern(seed: int, escape: str, lead: str) -> None:
    """OBS-57: a generated password may hold a backslash (``Ab\\d9xQzz``): it is replaced, not kept as a regular
    expression; a pattern of words and classes stays (below)."""
    r = random.Random(seed)
    p = password(r, 6) + escape + password(r, 6)
    text = lead.format(p=p if not lead.startswith("{") else p.replace("\\", "\\\\"))
    out = scrub_text(text)
    assert p[:6] not in out and p[-6:] not in out


def test_patterns_under_a_password_name_stay() -> None:
    """OBS-58: a password rule written as a regular expression is kept."""
    for text in ["password: ^\\d{4,}$", '{"password": "^(?=.*[A-Z])(?=.*\\\\d).{8,}$"}', "password: \\bsecret\\b",
                 "PASSWORD_REGEX=^[A-Za-z0-9!@#]{12,64}$"]:
        assert scrub_text(text) == text


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), lead_symbol=st.sampled_from(list("<>[](){};,&")),
       form=st.sampled_from(["password: {p}", "--password {p}", "db_password: {p} (rotated)", "token: {p}\n"]))
def test_property_a_strong_names_value_may_start_with_a_symbol(seed: int, lead_symbol: str, form: str) -> None:
    """OBS-57: after a strong name, a generated password that starts with what ends or opens a value
    (``<2onfZq7``, ``}6BlOHlU{Ud``, ``&XR>yEbcj``) is replaced whole, as its blank-separated run."""
    r = random.Random(seed)
    p = lead_symbol + password(r, r.randint(8, 16))
    text = form.format(p=p)
    assert scrub_text(text) == text.replace(p, redaction_marker(p), 1)


def test_placeholders_notes_and_code_led_by_a_symbol_stay() -> None:
    """OBS-58: ``<your-password>``, ``[REDACTED]``, ``(none)``, ``{password}``, ``$(cat pw)``, ``<%= pw %>`` stay."""
    for text in ["password: <your-password>", "PASSWORD=[REDACTED]", "password: (none)", "password = {password}",
                 "PASSWORD=$(cat /run/secrets/pw)", "password: <%= @pw %>", "f(password=(a, b))"]:
        assert scrub_text(text) == text


_CONSONANTS = "bcdfghjklmnpqrstvwxzBCDFGHJKLMNPQRSTVWXZ"  # no vowels: no run of letters spells a word
_MANAGER_SYMBOLS = "!#$%&()*+,-./:;<=>?@[]^_{|}~"
_PLACEHOLDER_TAG = re.compile(r"<[a-z][a-z0-9_-]*>")
_NEXT_PAIR = re.compile(r"[;&,][A-Za-z_$][A-Za-z_.$\[\]-]*[0-9]{0,3}=")
_LEADING_CODE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=|[bBrRuUfF]{1,2}['\"]")
_COMMAND = re.compile(r"[;&](?:ls|cd|rm|cp|mv|sh)(?![A-Za-z0-9])")  # the commands spelt without a vowel
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.\w+)+")


def _manager_password(r: random.Random, symbols: str = _MANAGER_SYMBOLS) -> str:
    """A password manager's password: runs of letters and digits with single symbols between them (printable
    ASCII), starting and ending with a letter or a digit, with both cases and a digit. Not generated: what a text
    cannot tell from more text after a value, a placeholder tag (``<k>``), a next pair (``;Xy=``), and a start that
    is a pair of its own (``Pw=583G``) or a string prefix (``r'9Q4``), a command after ``;`` (``;cp``) and a dotted
    name (``pw.W52_tmq``)."""
    while True:
        runs = ["".join(r.choice(_CONSONANTS + string.digits) for _ in range(r.randint(1, 4)))
                for _ in range(r.randint(3, 6))]
        p = "".join(run + r.choice(symbols) for run in runs[:-1]) + runs[-1]
        if any(c.isupper() for c in p) and any(c.islower() for c in p) and any(c.isdigit() for c in p) \
                and _PLACEHOLDER_TAG.search(p) is None and _NEXT_PAIR.search(p) is None \
                and _LEADING_CODE.match(p) is None and _COMMAND.search(p) is None and not _DOTTED_NAME.fullmatch(p):
            return p


_STRONG_FORMS = ["PASSWORD={p}", "password: {p}", "cmd --password {p}", "export DB_PASSWORD={p}",
                 "db_password = {p}", "- secret: {p}\n"]


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_STRONG_FORMS))
def test_property_a_password_managers_password_after_a_strong_name_is_replaced_whole(seed: int, form: str) -> None:
    """OBS-57: after a strong name, an unquoted password of letters, digits and the symbols of printable ASCII
    (``m/=w;Y?r%qMU``, ``K#O&{yp(^u``, ``x*ZuoF=LrT;E]z%D``) is replaced whole: a stop symbol followed by a short run
    of lower-case letters (``;Y?r``), or by a one-letter name and ``=`` (``;V=1k``), is more of the password."""
    p = _manager_password(random.Random(seed))
    text = form.format(p=p)
    assert scrub_text(text) == text.replace(p, redaction_marker(p), 1)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), quote=st.sampled_from(["'", '"', "`"]), form=st.sampled_from(_STRONG_FORMS))
def test_property_a_quote_inside_an_unquoted_password_is_part_of_it(seed: int, quote: str, form: str) -> None:
    """OBS-57: a quote or a backtick glued inside an unquoted password after a strong name (``kQ!('@7G``,
    ``Xk9m"Q2vL``) is one of its characters: no piece after it stays."""
    r = random.Random(seed)
    while True:
        p = _manager_password(r, _MANAGER_SYMBOLS.replace("(", "").replace("[", "").replace("{", "")
                              .replace("=", "").replace(",", "") + quote * 6)
        if quote in p:
            break
    text = form.format(p=p)
    assert scrub_text(text) == text.replace(p, redaction_marker(p), 1)


def test_quotes_that_close_or_open_a_string_around_a_value_stay() -> None:
    """OBS-58: a quote that closes a string opened before the name, or opens one in code after the value, is not
    the password's: the value ends before it, and code reading a password stays."""
    p = "Xk9mQ2vLp8"
    m = redaction_marker(p)
    assert scrub_text(f'echo "PASSWORD={p}" > .env') == f'echo "PASSWORD={m}" > .env'
    assert scrub_text(f"echo 'password: {p}'") == f"echo 'password: {m}'"
    assert scrub_text(f"Bob's password: {p}' was old") == f"Bob's password: {m}' was old"
    for text in ['password=os.environ["DB_PASS"]', "secret=config['secret']", "password=request.form['password']",
                 'password=getpass("Password: ")', "PASSWORD=$(cat \"/run/secrets/db\")"]:
        assert scrub_text(text) == text
    assert scrub_text(f"PASSWORD={p}`date`") == f"PASSWORD={m}`date`"
    # a JSON document on one long line: the string's closing quote ends the value however far its line starts
    for pad in (10, 300, 3000):
        doc = '{"pad": "' + "x" * pad + '", "token": [["API_KEY=' + p + '", 0]]}'
        assert scrub_text(doc) == doc.replace(p, m)


def test_a_next_pair_and_prose_after_a_strong_value_stay() -> None:
    """OBS-58: ``;Database=app``, ``&u=bob`` (a query's one-letter name), ``,user=bob``, ``, then`` and ``;echo``
    after a password are not the password's."""
    p = "Xk9mQ2vLp8"
    m = redaction_marker(p)
    for after in [";Database=app", "&u=bob", ",user=bob", ";then echo ok", ";echo ok", ",and more"]:
        assert scrub_text(f"password={p}{after}") == f"password={m}{after}"


_WORD_PASSWORDS = ["root", "hunter", "dragon", "letmein", "admin", "monkey", "sunshine", "Hunter", "Welcome"]


@given(word=st.sampled_from(_WORD_PASSWORDS), lead=st.sampled_from(["mysql --password={p} db", "app --password={p}",
                                                                      "x --db-password={p} --verbose"]))
def test_a_word_given_to_a_long_password_option_is_the_password(word: str, lead: str) -> None:
    """OBS-57: ``--password=root`` gives a command its password: a word there is no identifier of code (as
    ``password=root`` in a call may be); placeholders (``--password=secret``, ``$PW``, ``PASSWORD``) stay."""
    text = lead.format(p=word)
    assert scrub_text(text) == text.replace("=" + word, "=" + redaction_marker(word), 1)


def test_placeholders_given_to_a_long_password_option_stay() -> None:
    """OBS-58: a placeholder given to a long option (``--password=secret``, ``$PW``, ``<your-password>``) stays."""
    for text in ["app --password=secret", "app --password=$PW", "app --password=PASSWORD", "x --api-key=YOUR_KEY",
                 "x --token=none", "app --password=<your-password>"]:
        assert scrub_text(text) == text


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32),
       form=st.sampled_from(["- **Password:** {p}", "Password: {p}", "DB password: {p}\n",
                             "§ **Staging DB password:** {p}",
                             "ENV DB_PASSWORD {p}\nRUN make", '"ENV API_TOKEN {p}"', "<password>{p}</password>",
                             '{{"cmd": "export API_TOKEN={p}"}}', "  - API_TOKEN={p}\n",
                             '{{"note": "Password: {p}"}}', '"line 1\\n\\u5bc6\\u7801\\uff1a{p}"']))
def test_property_a_password_managers_password_in_a_label_a_dockerfile_or_markup_is_replaced_whole(
        seed: int, form: str) -> None:
    """OBS-57: a password of letters, digits and symbols is replaced whole where a label gives it (the line's one
    remaining run: ``- **Password:** 2]NS@Cf?BG``), in Dockerfile's ``ENV NAME value`` (the rest of the line: no
    shell reads it), in an element's text (``>`` is a character there) and inside a JSON string, whose brackets close
    nothing outside it (``{"cmd": "export API_TOKEN=Ohp}fVb7S"}``)."""
    r = random.Random(seed)
    while True:
        p = _manager_password(r)
        if "<" not in p or not form.startswith("<"):  # an element's text holds no "<" (XML escapes it)
            break
    text = form.format(p=p)
    assert scrub_text(text) == text.replace(p, redaction_marker(p), 1)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_property_a_bracket_in_a_urls_password_is_part_of_it(seed: int) -> None:
    """OBS-57: ``postgres://app:ZEmdei>lAy8X@db``: a ``<`` or ``>`` written unencoded in a URL's password, an ``@``
    and a host after it, is the password's; a URL in angle brackets keeps its brackets."""
    r = random.Random(seed)
    p = _manager_password(r, _MANAGER_SYMBOLS.replace("/", "").replace("?", "").replace("#", "").replace("@", "")
                          .replace("%", "") + "<>" * 4)
    text = f"postgres://app:{p}@db:5432/x"
    assert scrub_text(text) == text.replace(p, redaction_marker(p), 1)
    q = password(r)
    assert scrub_text(f"see <https://user:{q}@host/x>, ok") == f"see <https://user:{redaction_marker(q)}@host/x>, ok"


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32),
       lead=st.sampled_from(["const key = process.env.API_KEY || '{p}';", "const t = cfg.token ?? \"{p}\";",
                             'token = os.environ.get("GITHUB_TOKEN") or "{p}"', "secret = settings.secret or '{p}'"]))
def test_property_the_literal_standing_in_for_a_credential_variable_is_redacted(seed: int, lead: str) -> None:
    """OBS-57: the literal after ``||``, ``??`` or ``or`` that a credential read from the environment falls back to
    is the credential; placeholders, an empty string and the fallbacks of other variables stay."""
    p = password(random.Random(seed))
    text = lead.format(p=p)
    assert scrub_text(text) == text.replace(p, redaction_marker(p))


def test_fallbacks_of_other_variables_and_placeholders_stay() -> None:
    """OBS-58: the fallback of a variable that names no credential, an empty one and a placeholder stay."""
    for text in ["const k = process.env.API_KEY || ''", "x = process.env.API_KEY || 'your-api-key'",
                 "x = process.env.PORT || '3000'", "name = user.name or 'Xk9mQ2vLp8Zz'"]:
        assert scrub_text(text) == text


@given(seed=st.integers(0, 2**32))
def test_property_a_hash_in_a_connection_strings_password_is_part_of_it(seed: int) -> None:
    """OBS-57: ``;Password=0QZ#1zw…;`` in a connection string: ``#`` is the password's character (a URL's fragment
    only ends a path parameter, ``/app;jsessionid=X#top``)."""
    r = random.Random(seed)
    p = password(r, 8) + "#" + password(r, 10)
    text = f"Server=db;Database=app;User Id=sa;Password={p};"
    assert scrub_text(text) == text.replace(p, redaction_marker(p))
    sid = password(r, 24)
    assert scrub_text(f"https://x.com/app;jsessionid={sid}#top") == \
        f"https://x.com/app;jsessionid={redaction_marker(sid)}#top"


_SENTENCE_ENDS = [("Token: ", "."), ("API key: ", "!"), ("GITHUB_TOKEN=", "."), ("token=", "?"), ("- secret: ", ".\n"),
                  ("Your new key: ", ":\nnext"), ("export API_TOKEN=", ";"), ("password: ", "."), ("Token: ", "..."),
                  ("Here it is: ", "."), ("creds/", ".json"), ("auth_token: ", ",")]


_NAME_LIKE_IN_PATHS = {"Mailgun keys", "Mailgun keys (current form)", "Fal keys (key id and secret)",
                       "HashiCorp Vault legacy service tokens"}
"""Formats of hex digits, or with a one-letter prefix, that a path's content-addressed names share
(``objects/key-<md5>``, ``cache/<uuid>:<md5>``, ``s.<id>``): in a path they stay (``docs/privacy.md``)."""


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), provider=st.sampled_from(sorted({**KEY_SAMPLES, **MORE_SAMPLES, "discord": None})),
       end=st.sampled_from(_SENTENCE_ENDS))
def test_property_a_published_key_format_ends_where_the_key_does_before_a_sentence_end(
        seed: int, provider: str, end: tuple[str, str]) -> None:
    """OBS-58 / OBS-59: a key of a published format (every provider's, and a Discord bot token's) after a label, a
    name or a path, with a sentence's or a file name's ending right after it (``Token: ghp_….``, ``GITHUB_TOKEN=…!``,
    ``creds/<token>.json``), loses the key and nothing else: the format says where the key ends, so the punctuation
    stays (a value of no known format after ``password:`` keeps such a character: a YAML scalar ``abc.``)."""
    assume(not (end[0] == "creds/" and provider in _NAME_LIKE_IN_PATHS))
    r = random.Random(seed)
    key = discord_bot_token(r) if provider == "discord" else {**KEY_SAMPLES, **MORE_SAMPLES}[provider](r)
    text = end[0] + key + end[1]
    assert scrub_text(text) == end[0] + redaction_marker(key) + end[1], text


def test_an_assignment_of_no_known_format_keeps_a_closing_dot_at_the_end_of_its_line() -> None:
    """The counterpart: ``DB_PASSWORD=Xk9mQ2vLp7.`` in a ``.env`` file is the value ``Xk9mQ2vLp7.``, dot included."""
    for text in ["DB_PASSWORD=Xk9mQ2vLp7.\n", "export API_TOKEN=Xk9mQ2vLp7.", "password=Xk9mQ2vLp7."]:
        value = "Xk9mQ2vLp7."
        assert scrub_text(text) == text.replace(value, redaction_marker(value))


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from([
    "new db password: {P}.", "password: {P}.", "Password - {P}.", "密码：{P}.", "- API token: {P}.\nnext",
    "The admin credentials: admin/{P}.", "API key (prod): {P}.", "Token → {P}.\n"]))
def test_property_obs59_a_full_stop_ending_a_label_line_stays(seed: int, form: str) -> None:
    """OBS-59 (stop 56): a label's or a sentence's value that ends its line with a full stop (``new db password:
    P.``, a note's last sentence) loses the value and keeps the stop; the label, the user name and the line break
    stay too. (Before, a value of no known format after a blank took the stop, as a YAML scalar would.)"""
    secret = note_password(random.Random(seed), "!#%^*-_+@$", 0.3)
    text = form.format(P=secret)
    assert scrub_text(text) == form.format(P=redaction_marker(secret)), text


def _closed_alphabet(provider: str) -> bool:
    """A format whose body holds neither ``_`` nor ``-`` (so where its key ends is known: ``ghp_``, ``AKIA``,
    ``sk_live_``); Mailgun's hex key glued into a name is left out on purpose (docs/privacy.md)."""
    body = _BODIES.get(provider, "")
    plain = body.replace("A-Z", "").replace("a-z", "").replace("0-9", "").replace("a-f", "").replace("A-F", "")
    return bool(body) and "_" not in body and "-" not in plain and not provider.startswith("Mailgun")


_BODIES = {provider: body for provider, _, body in KEY_FORMATS + MORE_KEY_FORMATS}
_CLOSED = sorted(p for p in KEY_SAMPLES if _closed_alphabet(p))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), provider=st.sampled_from(_CLOSED),
       tail=st.sampled_from(["_backup", "-old", "_prod_v2", "-2024", "_copy-2", "-staging"]),
       form=st.sampled_from(["file_{k}{t}.json", "/tmp/{k}{t}/creds", "name: {k}{t}", "{k}{t}", "mv {k}{t}.txt x"]))
@example(seed=0, provider="GitHub tokens (classic, OAuth, user-to-server, server-to-server, refresh)", tail="_backup",
         form="file_{k}{t}.json")
@example(seed=32000000, provider="Meta (Facebook) access tokens", tail="_backup", form="file_{k}{t}.json")  # EAAA…
def test_property_obs58_a_names_words_glued_after_a_published_key_stay(
        seed: int, provider: str, tail: str, form: str) -> None:
    """OBS-58 / OBS-59: a key of a format whose alphabet has no ``_`` or ``-`` (``ghp_…``, ``AKIA…``, ``sk_live_…``)
    inside a name (``file_ghp_…_backup.json``) loses exactly its span: the name's words glued after it by ``_`` or
    ``-`` are no part of it (a generated run glued after it still is: another key written right after it)."""
    assert len(_CLOSED) >= 30
    key = KEY_SAMPLES[provider](random.Random(seed))
    text = form.format(k=key, t=tail)
    assert scrub_text(text) == text.replace(key, redaction_marker(key))
