"""Percent-encoded values are judged, and marked, as what they encode (spec 01 OBS-58, OBS-59; spec 04 FMT-33a;
review s44 O3, O6 / R11).

A URL's query value and userinfo password are percent-encoded: ``?password=Xk9m%2BQ2v%2FLp7%3DRt`` is the password
``Xk9m+Q2v/Lp7=Rt``. The text's own reading of such a value used to win over the decoded view's: the secret got the
marker of its encoded text (another marker than the same password written plainly), and the rules that keep a value
(a placeholder, an AWS or Google Cloud Storage credential scope) judged ``%24%7BTOKEN%7D`` rather than ``${TOKEN}``.
Now one secret gets one marker whether it is written plainly, in JSON or percent-encoded, and an encoded placeholder
or credential scope is kept as the decoded one is. Outside a URL, ``%2B`` is three characters of a literal.
"""

from __future__ import annotations

import json
import random
import string
import urllib.parse

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import MARKER_RE, redaction_marker, scrub_text

A = "AKIAIOSFODNN7ABCDEF2"
H = "0123456789abcdef" * 4
SYMBOLS = "!#$%()*+-./:<=>?@[]^_{|}~&;, '\"é€"
NAMES = ("password", "api_key", "token", "client_secret", "access_token", "secret", "passwd", "auth_token")


def _secret(r: random.Random) -> str:
    """A generated password holding characters a URL encodes (``+ / = & # ? %``, a space, non-ASCII letters)."""
    chars = [r.choice(string.ascii_letters + string.digits) for _ in range(r.randint(10, 18))]
    for _ in range(r.randint(1, 4)):
        chars.insert(r.randrange(len(chars) + 1), r.choice(SYMBOLS))
    return "".join(chars) + r.choice(string.digits)


def _markers(text: str) -> list[str]:
    return MARKER_RE.findall(scrub_text(text))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(NAMES))
@example(seed=571266, name="password")  # LLNeraOiq|ojXL6ozPl4 read as a union of types (CI, stop 47)
def test_property_obs59_encoded_and_plain_forms_of_a_secret_get_the_same_marker(seed: int, name: str) -> None:
    """OBS-59 (C-marker): the same secret as a percent-encoded query value, as a percent-encoded userinfo password,
    quoted after its name and in JSON gets one and the same marker: the marker of the secret itself; only the
    value's span is replaced."""
    r = random.Random(seed)
    secret = _secret(r)
    marker = redaction_marker(secret)
    encoded = urllib.parse.quote(secret, safe="")
    query = f"https://api.example.com/v1/x?user=bob&{name}={encoded}&page=2"
    assert scrub_text(query) == query.replace(encoded, marker)
    userinfo = f"postgres://bob:{encoded}@db.internal:5432/app"
    assert scrub_text(userinfo) == userinfo.replace(encoded, marker)
    plain = json.dumps({name: secret})
    assert _markers(plain) == [marker]
    in_doc = json.dumps({"url": query})
    assert _markers(in_doc) == [marker]


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(("pw", "pass", "token", "secret", "key", "pwd", "apikey")),
       sep=st.sampled_from(("=", "%3D", ":", "%3A", "%20%3A", "%3D%27")))
@example(seed=0, name="pw", sep="%3D")  # postgres://bob:w8pw%3DygNqcBDgvBR9@db...: the host went with it (CI, stop 47)
@example(seed=3, name="pw", sep="%3A")  # FtIE%5BOS~%273CRY9pw%3A6: the decoded view found no userinfo, read pw: on
@example(seed=13011977, name="secret", sep="%20%3A")  # %253iXecret…: %25 then 3iX read as a printf field
@example(seed=52017761, name="pwd", sep="%20%3A")  # Of%20q%20pwd%20%3AX…: decoded, three words read as a note
def test_property_obs59_a_name_inside_a_userinfo_password_marks_no_value(seed: int, name: str, sep: str) -> None:
    """OBS-59: a userinfo password holding a credential's name and ``=`` or ``:`` (``w8pw=ygNq…``, encoded or not,
    after symbols the decoded view reads as quotes and blanks) is one password: only its span goes, the host, port and
    path after its ``@`` stay."""
    r = random.Random(seed)
    pieces = list(string.ascii_letters + string.digits) + ["%27", "%20", "%5B", "%21", "%2F", "%22", "%25"]
    head = "".join(r.choice(pieces) for _ in range(r.randint(0, 5)))
    tail = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(r.randint(8, 14)))
    password = f"{head}{name}{sep}{tail}"
    for scheme in ("postgres", "redis", "https", "amqp"):
        text = f"{scheme}://bob:{password}@db.internal:5432/app"
        assert scrub_text(text) == text.replace(password, redaction_marker(urllib.parse.unquote(password)))


@pytest.mark.parametrize("text", [
    "https://x/cb?token=%24%7BTOKEN%7D", "https://x/?api_key=%3CYOUR_API_KEY%3E", "https://x/?password=%2A%2A%2A%2A",
    "https://x/?token=%7B%7B%20secrets.TOKEN%20%7D%7D&a=1", "https://x/?password=your%2Dpassword%2Dhere",
    "https://u:%24%7BDB_PASSWORD%7D@db.internal/app",
])
def test_obs59_encoded_placeholders_are_kept(text: str) -> None:
    """OBS-59 (O3): a placeholder percent-encoded (``${TOKEN}``, ``<YOUR_API_KEY>``, ``****``, a template) is kept,
    as it is decoded."""
    assert scrub_text(text) == text


def test_obs59_an_encoded_aws_credential_scope_keeps_all_but_the_key_id() -> None:
    """OBS-59 (O3): in a presigned S3 URL only the access key id and the signature go; the encoded credential scope
    (date, region, service) stays, as it does unencoded."""
    scope = "%2F20240101%2Fus-east-1%2Fs3%2Faws4_request"
    text = (f"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={A}{scope}"
            f"&X-Amz-Date=20240101T000000Z&X-Amz-Signature={H}")
    expected = text.replace(A, redaction_marker(A)).replace(H, redaction_marker(H))
    assert scrub_text(text) == expected
    plain = urllib.parse.unquote(text)
    assert scrub_text(plain) == plain.replace(A, redaction_marker(A)).replace(H, redaction_marker(H))


@pytest.mark.parametrize("encode", [True, False])
def test_obs59_a_gcs_credential_scope_is_no_credential(encode: bool) -> None:
    """OBS-59 (O6): a Google Cloud Storage V4 signature's credential is a service account's e-mail and a scope: it
    stays; the signature goes."""
    credential = "sa@my-project.iam.gserviceaccount.com/20240101/auto/storage/goog4_request"
    value = urllib.parse.quote(credential, safe="") if encode else credential
    signature = "Xk9mQ2vLp7Rt" + H
    text = f"https://storage.googleapis.com/b/o?X-Goog-Signature={signature}&X-Goog-Credential={value}&X-Goog-Date=1"
    assert scrub_text(text) == text.replace(signature, redaction_marker(signature))


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(NAMES))
def test_property_obs59_percent_signs_of_a_literal_stay_its_own(seed: int, name: str) -> None:
    """OBS-59: outside a URL a quoted value holding ``%XX`` is a literal: it gets the marker of what is written (a
    value starting with a space is another thing in quotes after a name: ``print("password: " + pw)``)."""
    r = random.Random(seed)
    secret = "".join(c for c in _secret(r) if c not in "'\" ") + "%2B" + r.choice(string.ascii_letters) + "9"
    for text in (f'{name.upper()}="{secret}"', json.dumps({name: secret}, ensure_ascii=False)):
        assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


_HTML_FORMS = ('<pre>{{&quot;{n}&quot;: &quot;{p}&quot;}}</pre>', "&lt;{n}&gt;{p}&lt;/{n}&gt;",
               "<code>{{&#34;{n}&#34;: &#34;{p}&#34;}}</code>", "<td>{{&#x22;{n}&#x22;:&#x22;{p}&#x22;}}</td>",
               "<code>{N}=&#39;{p}&#39;</code>", "<pre>{n} = &quot;{p}&quot;;</pre>", "{N}=&#x27;{p}&#x27;",
               "export {N}=&quot;{p}&quot;", "<span>{n}: &apos;{p}&apos;</span>", "{n}=&#039;{p}&#039;)",
               # the separator itself a reference, or a no-break space after it
               "{n}&#61;{p}", "{N}&#x3D;{p}&amp;page=2", "{n}&#58; {p}", "{n}&colon; {p}", "<td>{n}:&nbsp;{p}</td>",
               "{n}&equals;{p}", "<p>{n}:&#160;{p}</p>")


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(NAMES), form=st.sampled_from(_HTML_FORMS),
       wrapped=st.booleans())
def test_property_obs59_a_pair_a_page_shows_escaped_loses_its_value_only(seed: int, name: str, form: str,
                                                                          wrapped: bool) -> None:
    """OBS-59: a page or a listing showing JSON or markup with its quotes and brackets as character references
    (``{&quot;password&quot;: &quot;P&quot;}``, ``API_KEY=&#39;P&#39;``) is read as the text it shows, in a tool
    result's JSON too: exactly the value becomes the marker it gets written plainly; the references around it stay
    (the text's own reading, which sees ``&#39;P&#39;`` as one run, gives them back)."""
    r = random.Random(seed)
    secret = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(16)) + "Xk9"
    text = form.format(n=name, N=name.upper(), p=secret)
    if wrapped:
        text = json.dumps({"output": text})
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


_INVISIBLE_FORMS = ("{n}\u200b: {p}", "{N}\u200b={p}", "\ufeff{N}={p}\nHOST=db", "pass\u00adword: {p}",
                    "{n}\u200d = '{p}'", "{n}:\u2060 {p}")


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(NAMES), form=st.sampled_from(_INVISIBLE_FORMS),
       wrapped=st.booleans())
def test_property_obs58_a_name_holding_a_character_shown_as_nothing_still_names_its_value(
        seed: int, name: str, form: str, wrapped: bool) -> None:
    """OBS-58: a zero-width space, a joiner, a byte order mark or a soft hyphen in or after a credential's name
    (text copied from a page, a hostile file) is read as the page shows it: the value goes alone, the invisible
    character stays where it was."""
    r = random.Random(seed)
    secret = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(16)) + "Xk9"
    text = form.format(n=name, N=name.upper(), p=secret)
    if wrapped:
        text = json.dumps({"output": text}, ensure_ascii=False)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", ["héllo\u200bworld", "👨\u200d👩\u200d👧 family", "\ufeffplain text", "a&nbsp;b &#61; c",
                                  "x &#58; y", "AT&amp;T&nbsp;&colon;&nbsp;TV"])
def test_obs55_invisible_characters_and_references_of_separators_alone_stay(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize("text", ["AT&amp;T &quot;hello&quot;", "&lt;password&gt;&lt;/password&gt;",
                                  "{&quot;password&quot;: &quot;&quot;}", "&lt;token&gt;${TOKEN}&lt;/token&gt;"])
def test_obs55_escaped_markup_without_a_credential_stays(text: str) -> None:
    """OBS-55: references around no value, an empty one or a placeholder keep every character."""
    assert scrub_text(text) == text


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(NAMES), times=st.sampled_from((1, 2)),
       outer=st.sampled_from(("https://app.example.com/cb?next={u}", "redirect_uri={u}&state=x",
                              "Location: /sso?r={u}")))
def test_property_obs58_a_url_inside_a_urls_parameter_encoded_twice_loses_its_secret(seed: int, name: str,
                                                                                      times: int, outer: str) -> None:
    """OBS-58: a URL carried in another URL's parameter is percent-encoded once more (``%253D`` is ``%3D``, which is
    ``=``); its credential's value is found in the text decoded twice, and only its encoded span is replaced."""
    r = random.Random(seed)
    secret = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(16)) + "Xk9"
    inner = f"https://api.example.com/v1?{name}={secret}&page=2"
    for _ in range(times):
        inner = urllib.parse.quote(inner, safe="")
    text = outer.format(u=inner)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", ["discount 50%25 off", "x=%2525", "progress=100%2525done", "a%252Fb%252Fc"])
def test_obs55_percent_signs_encoded_twice_without_a_credential_stay(text: str) -> None:
    assert scrub_text(text) == text
