"""A redaction replaces exactly the secret's span (issue #25 deliverable 3; spec 01 OBS-59, spec 04 FMT-33a).

Property: ordinary text (prose, code, configs, shell, logs, hashes ...) with N credentials of known shapes planted
at random token boundaries, each in its own context (a vendor key alone, ``NAME=secret``, ``NAME: secret``,
``"name": "secret"``, ``--password secret``, ``scheme://u:secret@host``, ``Authorization: Bearer secret`` ...), then
wrapped plain, JSON-escaped one to three times (the whole text ``json.dumps``-ed, or a JSON document whose string
holds it) or percent-encoded. The scrubbed text must equal the wrapped text with exactly each secret's encoded
span replaced by ``redaction_marker(secret)``: every other byte, every line and the JSON structure unchanged;
distinct secrets get distinct markers, the same secret the same marker in every wrapper.
"""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import MARKER_RE, redaction_marker, scrub_text

from tests.engine._scrub_support import ALNUM, KEY_SAMPLES, password, rand, unwrap, wrapper
from .test_scrub_false_positives import corpus

_LABEL_END = re.compile(r"(?i)\b(?:password|passphrase|pass|pin|token|secret|key|credentials?):[ \t]*$", re.MULTILINE)
POOL = [text for _, text in corpus(3000, seed=2512) if _LABEL_END.search(text) is None]
"""Ordinary text the secrets are planted in (the false-positive corpus's generators; none of it is redacted). Without
the texts with a line that ends as a label naming a credential does (``… private password:``): the lines of the pool
are shuffled, and whatever line came after it would be that label's value (OBS-59 L3)."""

_ENV_NAMES = ("API_KEY", "OPENAI_API_KEY", "DB_PASSWORD", "SECRET_TOKEN", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
              "STRIPE_SECRET", "PASSWD", "client_secret", "auth_token", "SMTP_PASS", "accessToken")
_KEY_NAMES = ("password", "api_key", "apiKey", "token", "secret", "access_token", "client_secret", "passphrase",
              "private_key", "refresh_token", "db_password")
_FLAGS = ("--password", "--api-key", "--token", "--secret", "--db-password", "--client-secret", "--auth-token")
_SCHEMES = ("postgres", "postgresql", "mysql", "redis", "amqp", "mongodb+srv", "https", "ftp")


def _secret(r: random.Random) -> str:
    """A generated password; sometimes with the symbols passwords carry (encoded differently by each wrapper)."""
    s = password(r)
    if r.random() < 0.3:
        i = r.randrange(1, len(s))
        s = s[:i] + r.choice("!*._-~") + s[i:]
    return s


_CLIENTS = ("sshpass -p '{s}' ssh host", 'redis-cli -a "{s}" ping', "ldapsearch -x -w '{s}' -b dc=x",
            "docker login -u me -p '{s}' registry", "smbclient //h/s -U 'me%{s}'", "curl -u 'alice:{s}' https://x",
            '["sshpass", "-p", "{s}", "ssh", "h"]', "openssl enc -pass pass:{s} -in f", "zip -P {s} out.zip f")
_STRINGS = ("{{'password': b'{s}'}}", "{{'password': r'{s}'}}", '{{"token": u"{s}"}}', "password = rb'{s}'")
_CODE = ("'password' => '{s}',", ":password => '{s}'", "define('DB_PASSWORD', '{s}');", "os.environ['API_KEY'] = '{s}'",
         'config["password"] = "{s}"', '{{user:"a",password:"{s}"}}', 'args: ["--token", "{s}"]',
         'os.getenv("API_KEY", "{s}")', 'api_keys: ["{s}"]', "password: ${{DB_PASSWORD:-{s}}}", "password: !!str {s}",
         "password: &pw {s}", "password：{s}", "password＝{s}", "Пароль: {s}", "密码：{s}", "senha={s}", "DB_PW={s}",
         "<password><![CDATA[{s}]]></password>", "<Authorization>Bearer {s}</Authorization>",
         "(Authorization: Bearer {s})", "API_KEY={s}，下一个", "CONNECTION_STRING={s}")
_LINES = ("password: |\n  {s}\nnext: 1", "password: >-\n  {s}\nnext: 1", "password:\n  {s}\nnext: 1",
          "passwords:\n  - {s}\nnext: 1", "- name: DB_PASSWORD\n  value: \"{s}\"", "Cookie: theme=dark; sid={s}; a=1",
          'Authorization: Digest username="bob", response="{s}"', "machine h login me password {s}")
_URLS = ("https://{s}@github.com/org/repo.git", "git clone https://x-access-token:{s}@github.com/org/repo.git",
         "https://__token__:{s}@pypi.example.com/simple", "//alice:{s}@db.internal/path",
         "https://x.example/cb?jwt={s}&page=2", "https://x.example/?session_id={s}",
         "https://x.example/app;jsessionid={s}?a=1", "https://sso.example/?ticket={s}&service=x")


def _shape(template: str, s: str) -> tuple[str, str, str]:
    before, after = template.split("{s}")
    return before.replace("{{", "{").replace("}}", "}"), s, after.replace("{{", "{").replace("}}", "}")


def _context(r: random.Random) -> tuple[str, str, str]:
    """``(before, secret, after)``: one credential in one of the shapes the scrubber knows (OBS-57, OBS-58): the
    name-keyed, userinfo and scheme shapes, the clients' options (quoted too), string prefixes, code and YAML forms,
    full-width separators, foreign names, cookies, parameter defaults and session parameters."""
    kind = r.randrange(16)
    s = _secret(r)
    if kind == 11:
        return _shape(r.choice(_CLIENTS), rand(r, ALNUM, r.randint(12, 30)))
    if kind == 12:
        return _shape(r.choice(_STRINGS + _CODE), s)
    if kind == 13:
        return _shape(r.choice(_CODE), rand(r, ALNUM, r.randint(12, 30)))
    if kind == 14:
        return _shape(r.choice(_LINES), rand(r, ALNUM, r.randint(12, 30)))
    if kind == 15:
        return _shape(r.choice(_URLS), rand(r, ALNUM, r.randint(12, 30)))
    if kind == 0:
        return "", KEY_SAMPLES[r.choice(sorted(KEY_SAMPLES))](r), ""
    if kind == 1:
        return f"{r.choice(_ENV_NAMES)}=", s, ""
    if kind == 2:
        return f"{r.choice(_KEY_NAMES)}: ", s, ""
    if kind == 3:
        return f'"{r.choice(_KEY_NAMES)}": "', s, '"'
    if kind == 4:
        return f"'{r.choice(_KEY_NAMES)}': '", s, "'"
    if kind == 5:
        return f"{r.choice(_FLAGS)}{r.choice([' ', '='])}", s, ""
    if kind == 6:
        s = rand(r, ALNUM, r.randint(12, 30))
        return f"{r.choice(_SCHEMES)}://{r.choice(['u', 'admin', 'deploy'])}:", s, f"@db{r.randint(1, 9)}.internal/app"
    if kind == 7:
        return f"Authorization: {r.choice(['Bearer', 'bearer', 'Token'])} ", s, ""
    if kind == 8:
        return "Bearer ", s, ""
    if kind == 9:
        return f"https://api.example.com/v1/items?limit={r.randint(1, 99)}&{r.choice(['api_key', 'token'])}=", s, \
            f"&page={r.randint(1, 9)}"
    return "mysql -u root -p", s, f" app{r.randint(1, 9)}"


_UNSAFE_BEFORE = re.compile(r"(?:[:=]|^--\S*|^-[a-zA-Z]|^(?:bearer|basic|token|authorization|mysql\S*)\b.*)$",
                            re.IGNORECASE)


_ALONE = tuple(t.split("{s}")[0] for t in _CLIENTS) + ("Cookie:", "Authorization: Digest", "machine")
"""Shapes that read on to the end of their line (a command's options, a header's pairs): planted alone."""


def _closed(head: str) -> bool:
    """Whether the text before a boundary closed every quote and bracket it opened (a secret planted inside a
    string or a template would become part of that value)."""
    return (head.count('"') % 2 == 0 and head.count("'") % 2 == 0 and head.count("{") == head.count("}")
            and head.count("(") == head.count(")") and head.count("[") == head.count("]"))


def _plant(r: random.Random, n: int) -> list[tuple[str, str | None]]:
    """Ordinary lines with ``n`` credentials planted at token boundaries: ``(piece, secret or None)`` pieces."""
    lines: list[list[tuple[str, str | None]]] = [[(line, None)] for text in r.sample(POOL, r.randint(1, 6))
                                                 for line in text.split("\n")]
    for _ in range(n):
        before, secret, after = _context(r)
        planted: list[tuple[str, str | None]] = [(before, None), (secret, secret), (after, None)]
        where = r.randrange(3)
        if where == 0 or "\n" in before + after or before.startswith(_ALONE):  # a line of its own
            lines.insert(r.randrange(len(lines) + 1), planted)
            continue
        line = lines[r.randrange(len(lines))]
        first = line[0][0]
        if len(line) == 1 and where == 1 and " " in first:  # an ordinary line, nothing planted in it yet  # between two words of an ordinary line
            words = first.split(" ")
            k = r.randrange(1, len(words))
            head, tail = " ".join(words[:k]), " ".join(words[k:])
            # not where the ordinary words before would read the secret (or its name) as their value
            if head and _closed(head) and not _UNSAFE_BEFORE.search(words[k - 1]) and not words[k][:1] in ("=", ":") and not (
                    k >= 2 and (words[k - 2].lower() in ("bearer", "basic") or words[k - 2][-1:] in (":", "="))):
                line[:1] = [(head + " ", None), *planted, (" " + tail, None)]
                continue
        line[:0] = [*planted, (" ", None)]  # at the start of a line
    pieces: list[tuple[str, str | None]] = []
    for i, line in enumerate(lines):
        if i:
            pieces.append(("\n", None))
        pieces.extend(line)
    return pieces


def _expected(pieces: list[tuple[str, str | None]], kind: str, level: int) -> tuple[str, str]:
    """The wrapped text, and the same with each secret's encoded span replaced by its marker."""
    encode, left, right = wrapper(kind, level)
    text = left + "".join(encode(p) for p, _ in pieces) + right
    expected = left + "".join(encode(p) if s is None else redaction_marker(s) for p, s in pieces) + right
    return text, expected


WRAPPERS = [("plain", 1), ("json", 1), ("json", 2), ("json", 3), ("doc", 1), ("doc", 2), ("doc", 3), ("url", 1)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), n=st.integers(1, 5), wrap=st.sampled_from(WRAPPERS))
@example(seed=1_017_513_615, n=1, wrap=("plain", 1))  # "--db-password P https://…": a URL's "://" is no label's colon
@example(seed=2_780_090_889, n=5, wrap=("json", 1))  # tr ':' '\n': a quoted argument ends at an escaped line break
@example(seed=11_001_985, n=5, wrap=("plain", 1))  # "Password DB_PW=P": the setting's name stays
def test_property_fmt33a_only_the_secrets_spans_change(seed: int, n: int, wrap: tuple[str, int]) -> None:
    """OBS-59 / issue #25: the scrubbed text is the input with exactly the planted secrets' spans replaced by
    their markers, whatever the wrapper; lines and JSON structure are those of the input."""
    kind, level = wrap
    pieces = _plant(random.Random(seed), n)
    text, expected = _expected(pieces, kind, level)
    out = scrub_text(text)
    assert out == expected
    assert out.count("\n") == text.count("\n")
    if kind != "url":
        assert unwrap(kind, level, out).count("\n") == unwrap(kind, level, text).count("\n")
    if kind == "doc":
        got, want = json.loads(out), json.loads(text)
        assert set(got) == set(want) and {k: v for k, v in got.items() if k != "content"} == {
            k: v for k, v in want.items() if k != "content"}


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), n=st.integers(2, 5))
@example(seed=79447720, n=2)  # --db-password P sha256:<hex>: a line holding a generated word has no label
def test_property_fmt33a_markers_are_distinct_per_secret_and_equal_across_wrappers(seed: int, n: int) -> None:
    """Distinct secrets get distinct markers; the same secret the same marker in every wrapper (rows keyed by a
    redacted value never merge, and a value is recognisable across the records that hold it)."""
    pieces = _plant(random.Random(seed), n)
    secrets = [s for _, s in pieces if s is not None]
    seen: set[tuple[str, ...]] = set()
    for kind, level in WRAPPERS:
        text, _ = _expected(pieces, kind, level)
        seen.add(tuple(m.group(0) for m in MARKER_RE.finditer(scrub_text(text))))
    assert len(seen) == 1
    [markers] = seen
    assert len(markers) == len(secrets)
    assert len(set(markers)) == len(set(secrets))


@pytest.mark.parametrize("level", [0, 1, 2])
def test_fmt33a_issue_example_read_file_result_keeps_every_line(level: int) -> None:
    """Issue #25's example: a JSON-encoded ``read_file`` result loses only the value of ``API_KEY``, not the lines
    after it (it used to become ``{"content":"1|API_KEY=<redacted>"}``)."""
    text = '{"content":"1|API_KEY=abc123\\n2|HOST=example.org\\n3|PORT=5432"}'
    for _ in range(level):
        text = json.dumps(text)
    out = scrub_text(text)
    assert out == text.replace("abc123", redaction_marker("abc123"))
    inner = out
    for _ in range(level):
        inner = json.loads(inner)
    assert json.loads(inner) == {"content": f"1|API_KEY={redaction_marker('abc123')}\n2|HOST=example.org\n3|PORT=5432"}


def _quoted_pairs_reference(text: str) -> list[tuple[int, int]]:
    """The quoted-pair finder as a left-to-right search of its key regex (a quoted key and its separator: ``:``,
    ``=>``, ``] =``), each sensitive key's value judged by the finder's own value rule, a weak name's (``"key"``) by
    what it looks like (what the key-end-driven finder must equal)."""
    from hermes_pipeline.engine import scrub_shapes as sh

    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        m = sh._QUOTED_KEY_RE.search(text, pos)
        if m is None:
            return spans
        if not sh.is_sensitive_pair(m.group("key"), ""):
            pos = m.end()
            if sh.credential_name(m.group("key")) == sh.WEAK:  # a weak name's value: judged by what it looks like
                sh._weak_pair_value(text, m.group("key"), pos, spans)
            continue
        pos = sh._pair_value(text, m.group("key"), m.end(), spans)


_PAIR_TEXT = st.lists(st.sampled_from(['"', "'", ":", " ", "\\", "\n", "password", "x", "key", "1", "{", ",", "}",
                                       "ab9Cd8eF7gH6", "token", "null", "\t", '\\"', "=>", "]", "=", "[", "(", ")",
                                       "b", "f", "max_tokens"]), max_size=40).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=_PAIR_TEXT)
def test_property_quoted_pairs_equal_their_regex_reference(text: str) -> None:
    """The quoted-pair finder (driven by the ends of keys, for speed) finds exactly what a left-to-right search of
    the key regex finds (``"k": v``, ``'k' => v``, ``["k"] = v``; OBS-58)."""
    from hermes_pipeline.engine import scrub_shapes as sh

    spans: list[tuple[int, int]] = []
    sh._quoted_pairs(text, spans)
    assert spans == _quoted_pairs_reference(text)


_CLIENT_TEXT = st.lists(st.sampled_from(["mysql", "MySQLdump", "curl", "az", " ", "-p", "x", ".", "_", "-", "mongo",
                                         "sh", "ldap", "search", "lazy", "\n", "İ", "K", "docker", "login", "1", "7z",
                                         "unzip", "psql", "keytool", "sqlplus", "xfreerdp", "ConvertTo-SecureString",
                                         "ssh-keygen", "bcp", "zip"]),
                        max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=_CLIENT_TEXT)
def test_property_client_commands_equal_their_regex_search(text: str) -> None:
    """Client names found through ``str.find`` (only those the pre-check's hints name) are exactly those a search of
    the client regex finds (OBS-58)."""
    from hermes_pipeline.engine import scrub_clients as cl

    hints = cl.client_hints(text.lower())
    assert [m.span() for m in cl._client_commands(text, hints)] == [
        m.span() for m in cl._CLIENT_RE.finditer(text) if cl._named(m.group("cmd").lower(), hints)]


@pytest.mark.parametrize("text, name", [("Password DB_PW={p} reset link sent.", "DB_PW="),
                                        ("the password is pw:{p}", "pw:"), ("password token={p}", "token=")])
def test_obs59_a_setting_given_after_a_credentials_name_keeps_its_own_name(text: str, name: str) -> None:
    """OBS-59: ``Password DB_PW=P``: the value a sentence gives is itself a setting; only its value is hidden."""
    p = "GKynGil3yDTbKX1YnW33"
    out = scrub_text(text.format(p=p))
    assert out == text.format(p=redaction_marker(p)) and name in out
