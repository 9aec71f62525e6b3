"""Every walker of mappings and lists judges a value with the context the text rules read (OBS-58, OBS-59, OBS-56).

The credential scrubber finds a password in ``sshpass -p P ssh h`` from the option before it, and the value of
``{"name": "API_KEY", "value": P}`` from the sibling that names it. Tool arguments arrive as lists and mappings,
and every walker of them (the payload sanitizer, the export walk of FMT-33, the JSON Lines log's extras of BOOK-47,
the dashboard's door of BOOK-38, alert messages of BOOK-45, Hermes' payloads) must hide exactly what the text of
the same structure hides, with the same marker, and keep every other item byte for byte; a structure without
credentials comes back as it went in.
"""

from __future__ import annotations

import json
import logging
import shlex
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.alerts.delivery import _scrub_all as alerts_scrub_all
from hermes_pipeline.dashboard.scrubbed import scrub_all as dashboard_scrub_all
from hermes_pipeline.engine.sanitize import sanitize
from hermes_pipeline.engine.scrub import MARKER_RE, REDACTED, redaction_marker, scrub_text
from hermes_pipeline.engine.walk_context import argv_context, sibling_value
from hermes_pipeline.export.redaction import redact_value
from hermes_pipeline.hermes.payloads import scrubbed as hermes_scrubbed
from hermes_pipeline.logs.jsonl import JsonLinesFormatter

SECRETS = st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=12, max_size=40) \
    .filter(lambda s: any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s))
"""Generated-looking passwords (the shape a credential name never keeps)."""
USERS = st.sampled_from(["me", "root", "admin", "deploy", "bob"])
HOSTS = st.sampled_from(["h", "db.example.com", "10.0.0.7", "prod-1", "localhost"])

Argv = Callable[[str, str, str], list[str]]
ARGV_FORMS: list[Argv] = [
    lambda p, u, h: ["sshpass", "-p", p, "ssh", f"{u}@{h}"],
    lambda p, u, h: ["mysql", f"-u{u}", f"-p{p}", "-h", h],
    lambda p, u, h: ["mysql", "--user", u, f"--password={p}", "app"],
    lambda p, u, h: ["curl", "-u", f"{u}:{p}", f"https://{h}/api"],
    lambda p, u, h: ["curl", "--user", f"{u}:{p}", f"https://{h}/api"],
    lambda p, u, h: ["mytool", "--api-key", p, "--host", h],
    lambda p, u, h: ["--password", p],
    lambda p, u, h: ["deploy", "--token", p],
    lambda p, u, h: ["redis-cli", "-h", h, "-a", p, "ping"],
    lambda p, u, h: ["docker", "login", "-u", u, "-p", p, h],
    lambda p, u, h: ["ldapsearch", "-x", "-D", f"cn={u}", "-w", p],
    lambda p, u, h: ["sqlcmd", "-S", h, "-U", u, "-P", p],
    lambda p, u, h: ["keytool", "-list", "-storepass", p],
    lambda p, u, h: ["smbclient", f"//{h}/share", "-U", f"{u}%{p}"],
    lambda p, u, h: ["openssl", "enc", "-aes256", "-pass", f"pass:{p}"],
    lambda p, u, h: ["ssh-keygen", "-t", "ed25519", "-N", p],
    lambda p, u, h: ["xfreerdp", f"/u:{u}", f"/p:{p}", f"/v:{h}"],
    lambda p, u, h: ["sqlplus", f"{u}/{p}@{h}"],
    lambda p, u, h: ["setx", "API_KEY", p],
    lambda p, u, h: ["aws", "configure", "set", "aws_secret_access_key", p],
]
"""Command lines whose password the text rules read from its neighbours (``scrub_clients``' options, ``--name X``
flags, keyword forms), none of which holds a credential on its own."""
HOLDERS: list[Callable[[Any], Any]] = [
    lambda argv: {"cmd": argv},
    lambda argv: {"args": argv, "cwd": "/srv/app"},
    lambda argv: [argv],
    lambda argv: {"tool": {"argv": argv, "timeout": 30}},
]

PAIR_KEYS = [("name", "value"), ("Name", "Value"), ("key", "value"), ("Key", "Value"),
             ("ParameterKey", "ParameterValue"), ("OptionName", "Value")]
"""Name/value spellings the text rules pair (Kubernetes/ECS env entries, key/value lists, CloudFormation, Beanstalk)."""
CREDENTIAL_NAMES = st.sampled_from(["API_KEY", "DB_PASSWORD", "password", "GITHUB_TOKEN", "client_secret",
                                    "STRIPE_SECRET_KEY", "aws_secret_access_key", "SigningKey"])
PLAIN_ENTRIES: list[dict[str, Any]] = [{"name": "LOG_LEVEL", "value": "debug"}, {"name": "PORT", "value": 8080},
                 {"name": "REGION", "value": "eu-west-1"}]

WORDS = st.sampled_from(["hello", "world", "status", "main", "README.md", "src/app.py", "build", "ls", "-la", "git",
                         "commit", "--amend", "docker", "ps", "name", "value", "key", "LOG_LEVEL", "debug", "info",
                         "PORT", "eu-west-1", "a b c", "it's fine", "x=1", "50%", "/tmp/out.txt", ""])
ORDINARY_KEYS = st.sampled_from(["name", "value", "Value", "key", "cmd", "args", "argv", "path", "count", "items",
                                 "env", "mode", "default_value", "ParameterValue", "title"])
ORDINARY = st.recursive(
    st.one_of(WORDS, st.integers(-2**31, 2**31), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
              st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.lists(WORDS, min_size=2, max_size=6),
                            st.dictionaries(ORDINARY_KEYS, inner, max_size=5)),
    max_leaves=20,
)
"""Structures of ordinary words and numbers (command-like lists among them): nothing any walker may change."""


def _log_line(extra: dict[str, Any]) -> dict[str, Any]:
    record = logging.getLogger("hermes_pipeline.test").makeRecord(
        "hermes_pipeline.test", logging.INFO, __file__, 1, "walked", (), None, extra=extra)
    line: dict[str, Any] = json.loads(JsonLinesFormatter().format(record))
    return line


WALKERS: list[tuple[str, Callable[[Any], Any]]] = [
    ("sanitize", sanitize), ("redact_value", redact_value), ("dashboard", dashboard_scrub_all),
    ("alerts", alerts_scrub_all), ("hermes payloads", hermes_scrubbed),
]


def _every_walk(value: Any, expected: Any) -> None:
    """Each walker gives ``expected`` for ``value``; the JSON Lines log writes it as an extra's text."""
    for name, walk in WALKERS:
        assert walk(value) == expected, name
    assert _log_line({"payload": value})["payload"] == str(expected)


@settings(max_examples=250, deadline=None)
@given(form=st.sampled_from(ARGV_FORMS), secret=SECRETS, user=USERS, host=HOSTS, holder=st.sampled_from(HOLDERS))
def test_obs_58_a_command_line_list_hides_its_password_as_its_text_does(
        form: Argv, secret: str, user: str, host: str, holder: Callable[[Any], Any]) -> None:
    """OBS-58/59, FMT-33, BOOK-38, BOOK-45, BOOK-47: an argument list whose password the text rules read from its
    neighbours loses exactly that password's span, in the item that holds it (``-p<marker>``, ``me:<marker>``),
    with the marker scrubbing the command line's text gives it; every other item is kept byte for byte."""
    argv = form(secret, user, host)
    marker = redaction_marker(secret)
    expected_argv = [item.replace(secret, marker) for item in argv]
    line = shlex.join(argv)
    assert line == " ".join(argv)  # no item needs quoting: the text is the items and their spaces
    assert scrub_text(line) == " ".join(expected_argv)  # the text rules hide exactly the password
    _every_walk(holder(argv), holder(expected_argv))
    assert redact_value(tuple(argv)) == tuple(expected_argv)  # a tuple stays a tuple


@settings(max_examples=250, deadline=None)
@given(keys=st.sampled_from(PAIR_KEYS), name=CREDENTIAL_NAMES, secret=SECRETS, before=st.integers(0, 3),
       k8s=st.booleans())
def test_obs_58_a_name_value_pair_hides_its_value_as_its_json_text_does(
        keys: tuple[str, str], name: str, secret: str, before: int, k8s: bool) -> None:
    """OBS-58/59, FMT-33, BOOK-38, BOOK-45, BOOK-47: the value of a name/value entry named for a credential is hidden
    with the marker scrubbing the structure's JSON text gives it; the other entries (ordinary names, a number) are
    kept as they are."""
    name_key, value_key = keys
    entries = [{name_key: e["name"], value_key: e["value"]} for e in PLAIN_ENTRIES]
    entries.insert(before % (len(entries) + 1), {name_key: name, value_key: secret})
    value: Any = {"containers": [{"name": "app", "env": entries}]} if k8s else entries
    expected = json.loads(scrub_text(json.dumps(value)))
    assert secret not in json.dumps(expected) and redaction_marker(secret) in json.dumps(expected)
    _every_walk(value, expected)


def test_obs_58_a_number_named_by_its_sibling_or_in_a_command_line_becomes_the_marker_string() -> None:
    """OBS-58, OBS-56: a number the context hides becomes the marker, a JSON string, in every walker; the number
    under a strong or sensitive key too; the containers keep their shape."""
    marker = redaction_marker("483920")
    named = {"env": [{"name": "PIN", "value": 483920}, {"name": "PORT", "value": 8080}]}
    argv = {"cmd": ["sshpass", "-p", 483920, "ssh", "h"]}
    keyed = {"pin": 483920, "password": 12345678, "n": 3}
    for _, walk in WALKERS:
        assert walk(named) == {"env": [{"name": "PIN", "value": marker}, {"name": "PORT", "value": 8080}]}
        assert walk(argv) == {"cmd": ["sshpass", "-p", marker, "ssh", "h"]}
        assert walk(keyed) == {"pin": marker, "password": REDACTED, "n": 3}
    line = _log_line({"password": "Xk9mQ2vLp7Rt", "api_key": "Xk9mQ2vLp7Rt", "pin": 483920, "count": 3})
    assert (line["password"], line["api_key"], line["pin"], line["count"]) == (REDACTED, REDACTED, marker, 3)


@settings(max_examples=300, deadline=None)
@given(value=ORDINARY)
def test_obs_58_walking_keeps_a_structure_without_credentials_as_it_is(value: Any) -> None:
    """OBS-58/59: ordinary words and numbers, command-like lists and name/value entries among them, come back equal
    from every walker (the export walk gives the very object back) and the log writes them as they are."""
    for name, walk in WALKERS:
        assert walk(value) == value, name
    assert redact_value(value) is value
    if isinstance(value, list):
        assert argv_context(value) is None
    line = _log_line({"payload": value})
    assert line.get("payload") == (value if value is None or isinstance(value, bool | int | float) else str(value))


def test_obs_59_only_the_secrets_span_inside_an_item_is_replaced() -> None:
    """OBS-59: ``-pSECRET`` keeps ``-p``, ``me:SECRET`` keeps ``me:``, an item holding a blank is one (quoted) word
    of the command; a value named by a sibling keeps what the pair's text keeps (an authorization scheme word)."""
    secret = "Xk9mQ2vLp7Rt"
    marker = redaction_marker(secret)
    assert argv_context(["mysql", "-uroot", f"-p{secret}"]) == ["mysql", "-uroot", f"-p{marker}"]
    assert argv_context(["curl", "-u", f"me:{secret}", "https://x"]) == ["curl", "-u", f"me:{marker}", "https://x"]
    assert argv_context(["read", "write"]) is None and argv_context(["hello world", "-p", secret]) is None
    spaced = f"{secret} it's"  # one item with a blank and a quote: one word of the command, quoted
    whole = redaction_marker(spaced)
    assert scrub_text(f"sshpass -p \"{spaced}\" ssh") == f"sshpass -p \"{whole}\" ssh"
    assert argv_context(["sshpass", "-p", spaced, "ssh"]) == ["sshpass", "-p", whole, "ssh"]
    pair = {"name": "Authorization", "value": f"Bearer {secret}"}
    assert sanitize(pair) == redact_value(pair) == json.loads(scrub_text(json.dumps(pair)))
    assert sibling_value({"name": "LOG_LEVEL", "value": secret}, "value", secret) == secret
    assert MARKER_RE.fullmatch(str(sibling_value({"key": "password", "value": secret}, "value", secret)))


# --- weak credential names: a mapping hides what its JSON text hides (OBS-58, OBS-59) -----------------------------

WEAK_NAMES = st.sampled_from(["key", "session", "sig", "signature", "jwt", "code", "pat"])
"""Weak credential names outside the sensitive-key rule of 01 §8.2.4 (``auth`` is in it: its value is `<redacted>`)."""


@settings(max_examples=150, deadline=None)
@given(name=WEAK_NAMES, secret=SECRETS)
def test_property_obs58_a_weak_name_hides_a_generated_value_in_a_mapping_as_in_its_text(name: str,
                                                                                      secret: str) -> None:
    """``{"key": P}``: the JSON text hides a generated value under a weak name; the sanitizer and the export walk
    hide it too, with the same marker."""
    text = scrub_text(json.dumps({name: secret}))
    assert secret not in text
    marker = redaction_marker(secret)
    assert marker in text
    assert sanitize({name: secret}) == {name: marker}
    assert redact_value({name: secret}) == {name: marker}


def test_obs55_a_weak_name_keeps_a_word_or_an_identifier_in_a_mapping_as_in_its_text() -> None:
    """``{"key": "ArrowUp"}``, ``{"code": "en-US"}``: words and identifiers stay, in text and in a mapping."""
    for name, value in (("key", "ArrowUp"), ("code", "en-US"), ("session", "default"), ("signature", "none"),
                        ("key", "user_profile"), ("code", "print('hi')")):
        assert scrub_text(json.dumps({name: value})) == json.dumps({name: value})
        assert sanitize({name: value}) == {name: value}
        assert redact_value({name: value}) == {name: value}
