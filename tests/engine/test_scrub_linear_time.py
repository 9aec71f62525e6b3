"""The scrubber's work grows linearly with adversarial text (OBS-58, OBS-59: every string is scrubbed before it is cut).

Each family is a credential name followed by a long run of one short piece, the shapes that made a pattern
backtrack over the run once per position (quadratic) or once per way of splitting it (exponential). The check is
a ratio, not a time budget: the processor time at 4n is less than 8 times the time at n (linear gives about 4,
quadratic 16). Each size is timed as the best of 3 runs of enough distinct texts to take a measurable time.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import pytest

from hermes_pipeline.engine.sanitize import sanitize
from hermes_pipeline.engine.scrub import scrub_text

FAMILIES: dict[str, tuple[Callable[[int], str], int]] = {
    # name: (text of size about n, n)
    "range-like value of dashes": (lambda n: '{"password": "[' + "-" * n + 'a"}', 6),
    "range-like value of [a-": (lambda n: '{"password": "' + "[a-" * (n // 3) + '"}', 5_000),
    "option names of -a": (lambda n: "token " + "-a" * (n // 2) + "!", 5_000),
    "option names of -a.": (lambda n: "token " + "-a." * (n // 3) + "!", 5_000),
    "tabs after a name": (lambda n: "token " + "\t" * n + "x", 5_000),
    "blanks after a block key": (lambda n: "password:" + " " * n + "x", 5_000),
    "blanks after an auth parameter": (lambda n: "Authorization: Digest realm=x" + " " * n + "!", 5_000),
    "blanks in a list item": (lambda n: "password:\n  - a" + " " * n + "b\n", 5_000),
    "a path of /a": (lambda n: "password=/" + "/a" * (n // 2), 5_000),
    # layouts (scrub_layouts): labels, tables, sentences, setters, typed declarations, next-line values
    "blanks in a bold label": (lambda n: "- **password**" + " " * n + "x", 5_000),
    "words before a label's colon": (lambda n: "Password for" + " the db" * (n // 7) + ": x", 5_000),
    "cells of a table row": (lambda n: "| password | " + "a | " * (n // 4), 5_000),
    "bars of a box row": (lambda n: "│ API_KEY " + "│" * n, 5_000),
    "rows of a column table": (lambda n: "Name  Value\n----  -----\n" + "API_KEY  x\n" * (n // 11), 5_000),
    "credential words on one line": (lambda n: "key " * (n // 4), 5_000),
    "blanks after a CJK word": (lambda n: "密码" + " " * n + "x", 5_000),
    "blanks before a setter's bracket": (lambda n: "x.setPassword" + " " * n + '("x")', 5_000),
    "blanks before a declared type": (lambda n: "token" + " " * n + 'string = "x"', 5_000),
    "codes after words of a door": (lambda n: "door code " * (n // 10) + "1234", 5_000),
    "glued slashes after login labels": (lambda n: "login: " + "ab:c/" * (n // 5), 5_000),
    "dashed words after a password's name": (lambda n: "password: " + "abc-" * (n // 4) + "x", 5_000),
    "words after a passphrase's label": (lambda n: "passphrase: " + "abc " * (n // 4) + "X", 5_000),
    "rows of an SQL insert": (lambda n: "INSERT INTO t (password) VALUES " + "('a')," * (n // 6) + "x", 5_000),
    "inserts without their values": (lambda n: "insert into t (a) " * (n // 18) + "values", 5_000),
    "capitals glued to a password's name": (lambda n: "Set " + "PG" * (n // 2) + "PASSWORD to hunter22", 5_000),
    "blank lines after a name": (lambda n: "password=" + "\n " * (n // 2) + '"x"', 5_000),
    "quote references in values": (lambda n: "password=&quot;Xk9fPq2Z&quot; " * (n // 32), 5_000),
    "quote references inside a value": (lambda n: "token=&#39;" + "a9&#39;" * (n // 7), 5_000),
    "a password's initial, again and again": (lambda n: "u: bob" + " p:x" * (n // 4), 5_000),
    "dots before a builder call": (lambda n: "." * n + 'password("x")', 5_000),
    "options of a login command": (lambda n: "vault login" + " -a" * (n // 3) + " x", 5_000),
    "blanks after a sentence's copula": (lambda n: "the password is" + " " * n + "x", 5_000),
    "words before a sentence label's colon": (lambda n: "password for" + " db" * (n // 3) + ": x", 5_000),
    "names after use": (lambda n: "use the token " * (n // 14) + "x", 5_000),
    "copulas in a sentence": (lambda n: "password is " * (n // 12) + "x", 5_000),
    "words before a set sentence's noun": (lambda n: "set the " + "a " * (n // 2) + "password to x", 5_000),
    "blanks after a weak key": (lambda n: "new key" + "\t" * n + ":x", 5_000),
    "blanks after a put key": (lambda n: "Added the key" + "\t" * n + "Xk9mQ2vLp7Rt to y", 5_000),
    "codes of a recovery list": (lambda n: "Recovery codes: " + "a1b2c3 " * (n // 7) + "word", 5_000),
    "values before a CJK verb": (lambda n: "把 " * (n // 2) + "a", 5_000),
    "values before a separator": (lambda n: "abcdef1, " * (n // 9) + "which is the password", 5_000),
    "users before a hash": (lambda n: "a" * n + ":$apr1$abcdefghijk", 5_000),
    "headers of a CSV": (lambda n: "password,login\n" * (n // 15), 5_000),
    "blanks in a call's string": (lambda n: 'print("' + " " * n + 'x")', 5_000),
    "names of four letters": (lambda n: "pass " * (n // 5) + "\n", 5_000),
    "words before a foreign copula": (lambda n: "mật khẩu " + "wifi " * (n // 5) + "là x", 5_000),
    "foreign names, again and again": (lambda n: "heslo k " * (n // 8) + "x", 5_000),
    "foreign names with owners": (lambda n: "kata sandi saya " * (n // 16) + "adalah x", 5_000),
    "uses without a purpose": (lambda n: "use " * (n // 4) + "x", 5_000),
    "a long value after use": (lambda n: "use " + "aB3" * (n // 3) + " for x", 5_000),
    "codes and their siblings": (lambda n: "Recovery codes: " + "a1b2c3d4e5 DB46HoleSanv " * (n // 24), 5_000),
    "purpose words before no colon": (lambda n: "the following password " * (n // 23) + ":\nXk9mQ2vLp7Rt", 5_000),
    "a long line after a purpose": (lambda n: "Password for " + "a" * n + ":\nXk9mQ2vLp7Rt", 5_000),
    "lines of purposes": (lambda n: "your new token x:\n" * (n // 18) + "Xk9mQ2vLp7Rt", 5_000),
    "password words on one line": (lambda n: "password " * (n // 9) + "\n", 5_000),
    "account lines in a string": (lambda n: 'a@b.co:Xk9mQ2vLp7Rt"' * (n // 20) + "\n", 5_000),
    "headings over values": (lambda n: "token\nXk9mQ2vLp7Rt\n" * (n // 19), 5_000),
    "addresses and slashes": (lambda n: "x@y.com / " * (n // 10), 5_000),
    "words after a seed phrase's name": (lambda n: "seed phrase: " + "abcdefgh " * (n // 9), 5_000),
    "seed phrase names again and again": (lambda n: "mnemonic: abcdefghijk " * (n // 22), 5_000),
    "administrator lines": (lambda n: "root:" * (n // 5) + "\n", 5_000),
    # the stop 58 readers: printed credentials, redis-cli's prompt, brackets after names, connection strings
    "prompts before a cat": (lambda n: "$ " * (n // 2) + "cat token\nXk9mQ2vLp7Rt\n", 5_000),
    "cat lines of a credential file": (lambda n: "cat token\n" * (n // 10), 5_000),
    "a printed value's trailing blanks": (lambda n: "$ cat token\nXk9mQ2vLp7Rt" + " " * n + "x", 5_000),
    "redis prompts": (lambda n: "a:6379> auth " * (n // 13), 5_000),
    "CJK credential words before brackets": (lambda n: "密码（" * (n // 3) + "x", 5_000),
    "pairs of a connection string": (lambda n: 'connectionString="' + "a=b;" * (n // 4) + '"', 5_000),
    "scheme strings added": (lambda n: '"Basic " + ' * (n // 11) + '"x"', 5_000),
    # the stop 61 readers: validation errors, a key's owner, a value's last mark
    "validation inputs again and again": (lambda n: "x\n  m [type=t, input_value=" * (n // 28), 5_000),
    "validation locations before one input": (lambda n: "api_key\n" * (n // 8)
                                              + "  Input [type=t, input_value='x', input_type=str]", 5_000),
    "validation records without an input": (lambda n: "{'loc': ('password',), 'msg': 'm', " * (n // 36), 5_000),
    "validation locations that do not close": (lambda n: '"loc": [' + '"password", ' * (n // 12), 5_000),
    "owners before a key": (lambda n: "my key " * (n // 7) + "Xk9mQ2vLp7Rt", 5_000),
    "marks before words in lower case": (lambda n: "password=Xk9mQ2! a " * (n // 19), 5_000),
    "a password's URL parameter with fragments": (lambda n: "?password=" + "a#" * (n // 2), 5_000),
    "sed parts again and again": (lambda n: "sed 's/" + "token=x/" * (n // 8), 5_000),
    "pairs in one long word": (lambda n: "s" + "/token=x" * (n // 8) + " ", 5_000),
    "keys named again as one": (lambda n: "key, new one is " * (n // 16), 5_000),
    "apostrophes in a label": (lambda n: "jeton d'a" * (n // 9) + " : Xk9mQ2vLp7Rt", 5_000),
    "login calls with blanks": (lambda n: 'smtp.login("a", "abcd ' * (n // 20), 5_000),
    "hashes under names again and again": (lambda n: "pw_hash: $2b$" * (n // 13), 5_000),
    "a long name before a hash": (lambda n: "a" * n + "_hash: $2b$12$abcdefgh", 5_000),
    "OpenVPN markers again and again": (lambda n: "-----BEGIN OpenVPN Static key V1-----\n0123456789abcdef\n"
                                        * (n // 55), 5_000),
    "verbs of setting with no article": (lambda n: "set password to " * (n // 16) + "Xk9mQ2vLp7Rt", 5_000),
    "words joined by dashes stated": (lambda n: "the password is " + "Blue-" * (n // 5) + "77", 5_000),
    "command substitutions unclosed": (lambda n: "TOKEN=$(echo " * (n // 13), 5_000),
    "character references of equals": (lambda n: "api_key&#61;" * (n // 12) + "Xk9mQ2vLp7Rt", 5_000),
    "invisible characters in a name": (lambda n: "token\u200b" * (n // 6) + ": Xk9mQ2vLp7Rt", 5_000),
    "percent signs encoded twice": (lambda n: "?next=" + "%2525" * (n // 5) + "x", 5_000),
    "digests that start like keys": (lambda n: "sha256=sk_" * (n // 10) + "Xk9mQ2vLp7Rt" * 4, 5_000),
    "app password groups in sentences": (lambda n: "the app password is " + "abcd " * (n // 5), 5_000),
    "echoes before a credential's file": (lambda n: "echo x " * (n // 7) + "> token", 5_000),
    "values piped to stores again and again": (lambda n: "echo x | secret put " * (n // 20), 5_000),
    "a Square token's run of short pieces": (lambda n: "EAAA" + "a_" * (n // 2) + "X", 5_000),
    "wrapped literals unclosed": (lambda n: "password=SecretStr('" + "x" * n, 5_000),
}
ENTRY_POINTS: dict[str, Callable[[str], object]] = {
    "scrub_text": scrub_text,
    "sanitize": lambda text: sanitize({"log": text}),
}
_MIN_SECONDS = 0.01


_SERIAL = itertools.count()


def _best(fn: Callable[[str], object], make: Callable[[int], str], n: int, count: int) -> float:
    """The best of 3 times of ``count`` texts of the family, each never seen before (a result cache must not
    answer for the scrubber)."""
    best = float("inf")
    body = make(n)
    for _ in range(3):
        texts = [f"{next(_SERIAL)} {body}" for _ in range(count)]
        start = time.process_time()
        for text in texts:
            fn(text)
        best = min(best, time.process_time() - start)
    return best


def _calibrated(fn: Callable[[str], object], make: Callable[[int], str], n: int) -> tuple[int, float]:
    """How many texts of size ``n`` take at least :data:`_MIN_SECONDS` (a cheap text is timed many times over), and
    their time."""
    count = 1
    while True:
        seconds = _best(fn, make, n, count)
        if seconds >= _MIN_SECONDS or count >= 1024:
            return count, seconds
        count *= 4


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_work_grows_linearly_with_the_run(family: str, entry: str) -> None:
    make, n = FAMILIES[family]
    fn = ENTRY_POINTS[entry]
    count, small = _calibrated(fn, make, n)
    large = _best(fn, make, 4 * n, count)
    for _ in range(2):  # a ratio disturbed once (a busy machine's caches) is measured again; a super-linear scan is
        if large < 8 * max(small, 1e-3):  # slow every time
            break
        small, large = _best(fn, make, n, count), _best(fn, make, 4 * n, count)
    assert large < 8 * max(small, 1e-3), (family, entry, small, large)
