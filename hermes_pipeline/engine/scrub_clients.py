"""Passwords given to command-line clients on their command line (OBS-58, spec 04 FMT-33a).

``mysql -pX``, ``sshpass -p X``, ``redis-cli -a X``, ``ldapsearch -w X``, ``curl -u user:X``, ``openssl -passin
pass:X`` / ``-k X``, ``smbclient -U user%X``, ``docker login -p X``, ``keytool -storepass X``, ``sqlcmd -P X``,
``zip -P X``, ``7z -pX``, ``ssh-keygen -N X``, ``sqlplus user/X@db``, ``xfreerdp /p:X`` and PowerShell's
``ConvertTo-SecureString "X" -AsPlainText``: each client has the options that carry its password, read only within
the same command (to a newline, ``;``, ``|``, ``&`` or the next client's name). The password may be quoted
(``sshpass -p 'X'``) and the command may be an argument list (``["sshpass", "-p", "X"]``). Only the password's span
is appended; a value a password name would not hide (a placeholder, ``$VAR``) stays.

:func:`find_keyword_pairs` reads the forms where a keyword, not a separator, introduces a named value: ``.netrc``
(``machine host login alice password X``), Dockerfile ``ENV NAME X``, ``setx NAME X``, fish's ``set -x NAME X``
and ``aws configure set NAME X``.
"""

from __future__ import annotations

import re
from typing import Final

from .scrub_names import STRONG, credential_name, kept_value

__all__ = ["CLIENT_HINTS", "client_hints", "find_client_passwords", "find_keyword_pairs"]

Span = tuple[int, int]

# Command-line clients and the option that carries a password.
_CLIENT_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<cmd>(?ai:mysql[a-z_-]*|mariadb[a-z_-]*|sshpass|redis-cli|ldap[a-z]+|curl|wget"
    r"|docker|podman|helm|az|openssl|smbclient|psql|mongo(?:sh|dump|restore)?|keytool|jarsigner|sqlcmd|zip"
    r"|unzip|7za?|7zz|ssh-keygen|sqlplus|xfreerdp|wlfreerdp|convertto-securestring))(?![A-Za-z0-9_])",
)
_CLIENT_STARTS: Final = ("mysql", "mariadb", "sshpass", "redis-cli", "ldap", "curl", "wget", "docker", "podman",
                         "helm", "az", "openssl", "smbclient", "psql", "mongo", "keytool", "jarsigner", "sqlcmd",
                         "zip", "unzip", "7z", "ssh-keygen", "sqlplus", "xfreerdp", "wlfreerdp",
                         "convertto-securestring")
"""How every client name of :data:`_CLIENT_RE` starts (in ASCII lower case: ``(?ai:``, no Unicode folding)."""
_DASH_OPTION: Final = re.compile(r"-[a-z-]")
_GUARDED_HINTS: Final = (
    (frozenset({"-p"}), ("mysql", "mariadb", "sshpass", "mongo", "7z", "sqlcmd", "zip", "ssh-keygen", "openssl",
                         "docker", "podman", "helm", "az")),  # -p, -pX, -P, -pass
    (frozenset({"-u", "--"}), ("curl", "wget", "smbclient")),  # -u, -U, --user
    (frozenset({"-a"}), ("redis-cli",)),
    (frozenset({"-w"}), ("ldap",)),
    (frozenset({"-n"}), ("ssh-keygen",)),
    (frozenset({"-k"}), ("openssl", "keytool", "jarsigner")),  # -k, -keypass
    (frozenset({"-s", "-d"}), ("keytool", "jarsigner", "securestring")),  # -storepass, -destkeypass, ConvertTo-Secure…
)
"""Each client with the options (a dash and a letter, in lower case) one of which its password option starts with:
sought only when the text holds one (all of them found in one scan)."""
CLIENT_HINTS: Final = ("sqlplus", "freerdp") + tuple(dict.fromkeys(h for _, hints in _GUARDED_HINTS for h in hints))
"""Lowercase substrings without one of which no text holds a client with a password option (the pre-check)."""
_STARTS_BY_HINT: Final = {hint: tuple(start for start in _CLIENT_STARTS if hint in start) for hint in CLIENT_HINTS}
"""The client names each hint is part of (``psql`` has no password option: no hint, never sought)."""
_SEGMENT_END_RE: Final = re.compile(r"[\n;|&]|\\n")
_BEFORE: Final = r"(?<![^\s\"'\[(,])"
"""An option starts a word, a quoted argument or an item of an argument list."""
_NEXT_ARG: Final = r"(?:[ \t]+|(?P<aq>[\"'])[ \t]*,[ \t]*)"
"""What separates an option from its value: spaces, or the end of a quoted list item and a comma."""
_ARG: Final = r"(?:'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<v>[^\s\"';|&`\\-][^\s\"';|&`\\]*))"
_GLUED: Final = r"(?:'(?P<q1>[^'\s,][^'\n]*)'|\"(?P<q2>[^\"\s,][^\"\n]*)\"|(?P<v>[^\s\"';|&`\\]+))"


def _spaced(option: str) -> re.Pattern[str]:
    return re.compile(_BEFORE + "(?:" + option + ")" + _NEXT_ARG + _ARG)


_CLIENT_OPTIONS: Final = {
    "glued_p": re.compile(_BEFORE + r"-p" + _GLUED),
    "spaced_p": _spaced(r"-p"),
    "a": _spaced(r"-a"),
    "w": _spaced(r"-w"),
    "k": _spaced(r"-k"),
    "P": _spaced(r"-P"),
    "glued_P": re.compile(_BEFORE + r"-P" + _GLUED),
    "N": _spaced(r"-[NP]"),
    "store": _spaced(r"-(?:src|dest)?(?:storepass|keypass)|-(?:storepasswd|keypasswd)(?:[ \t]+-\S+)*[ \t]+-new"),
    "user": re.compile(_BEFORE + r"(?:-u|--user)(?:[ \t=]+|(?P<aq>[\"'])[ \t]*,[ \t]*|(?=[^\s\"'-]))"
                       r"(?:'[^\s:\"']*:(?P<q1>[^'\n]+)'|\"[^\s:\"']*:(?P<q2>[^\"\n]+)\""
                       r"|[^\s:\"']*:(?P<v>[^\s\"';|&`\\]+))"),
    "pass": re.compile(_BEFORE + r"-pass(?:in|out)?" + _NEXT_ARG + r"[\"']?pass:(?P<v>[^\s\"';|&`\\]+)"),
    "smb": re.compile(_BEFORE + r"(?:-U|--user)(?:[ \t=]+|(?P<aq>[\"'])[ \t]*,[ \t]*)"
                      r"(?:'[^\s%\"']+%(?P<q1>[^'\n]+)'|\"[^\s%\"']+%(?P<q2>[^\"\n]+)\""
                      r"|[^\s%\"']+%(?P<v>[^\s\"';|&`\\]+))"),
    "slash": re.compile(r"(?<![^\s\"'])[A-Za-z0-9_$#.-]+/(?P<v>[^\s\"'/@;|&`\\]+)(?=@|[\s\"']|$)"),
    "rdp": re.compile(r"(?<![^\s\"'])/p:(?P<v>[^\s\"';|&`\\]+)"),
    "securestring": re.compile(r"(?:[ \t]+-String)?[ \t]+" + _ARG),
}
_LOGIN_ONLY: Final = frozenset({"docker", "podman", "helm", "az"})
"""Clients whose ``-p`` is a password only in their ``login`` command."""
_LOGIN_RE: Final = re.compile(r"(?<![A-Za-z0-9_-])login(?![A-Za-z0-9_-])")
_CLIENT_RULES: Final = {
    "sshpass": ("spaced_p", "glued_p"), "redis-cli": ("a",), "curl": ("user",), "wget": ("user",),
    "docker": ("spaced_p",), "podman": ("spaced_p",), "helm": ("spaced_p",), "az": ("spaced_p",),
    "openssl": ("pass", "k"), "smbclient": ("smb",), "psql": (), "mongo": ("spaced_p",), "mongosh": ("spaced_p",),
    "mongodump": ("spaced_p",), "mongorestore": ("spaced_p",), "keytool": ("store",), "jarsigner": ("store",),
    "sqlcmd": ("P", "glued_P"), "zip": ("P",), "unzip": ("P",), "7z": ("glued_p",),
    "7za": ("glued_p",), "7zz": ("glued_p",), "ssh-keygen": ("N",), "sqlplus": ("slash",), "xfreerdp": ("rdp",),
    "wlfreerdp": ("rdp",), "convertto-securestring": ("securestring",),
}

_KEYWORD_RES: Final = (
    ("ENV", re.compile(r"ENV[ \t]+")),  # Dockerfile
    ("setx", re.compile(r"setx[ \t]+")),  # Windows
    ("set -", re.compile(r"set(?:[ \t]+-[A-Za-z]+)+[ \t]+")),  # fish
    ("configure", re.compile(r"configure[ \t]+set[ \t]+")),  # aws configure set
)
"""The keywords that introduce a named value, each with the substring without which it is absent."""
_KEYWORD_VALUE_RE: Final = re.compile(
    r"(?P<n>[A-Za-z_][A-Za-z0-9_.-]{0,127})[ \t]+(?:'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<v>[^\s\"'`;|&\\]+))")
_NETRC_RE: Final = re.compile(
    r"(?<![\w-])(?:machine[ \t]+\S+|default)(?:[ \t\r\n]+(?:login|account)[ \t]+\S+)*[ \t\r\n]+password[ \t]+"
    r"(?:'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<v>[^\s\"'`\\]+))"
)


def client_hints(low: str) -> tuple[str, ...]:
    """The hints the lower-cased text holds that can name a client with a password option in it (none: no client
    option to read): each client is sought only when the text holds what its option starts with (``-p``, ``-u``,
    ``/p:`` ...)."""
    hints = ["sqlplus"] if "sqlplus" in low else []  # sqlplus user/P@db
    if "/p:" in low and "freerdp" in low:
        hints.append("freerdp")
    if "-" in low:
        dashes = set(_DASH_OPTION.findall(low))
        for guards, guarded in _GUARDED_HINTS:
            if not guards.isdisjoint(dashes):
                hints.extend(hint for hint in guarded if hint not in hints and hint in low)
    return tuple(hints)


def _client_commands(text: str, hints: tuple[str, ...]) -> list[re.Match[str]]:
    """The client commands of ``text``: the matches of :data:`_CLIENT_RE` whose client is named by one of ``hints``
    (:func:`client_hints`: a client whose password option the text cannot hold is no command), with the pattern tried
    only where such a name starts (found with ``str.find`` on the lower-cased text, when lowering keeps every
    offset)."""
    low = text.lower()
    if len(low) != len(text):
        return [m for m in _CLIENT_RE.finditer(text) if _named(m.group("cmd").lower(), hints)]
    names = {name for hint in hints for name in _STARTS_BY_HINT[hint]}
    if names:
        names |= {"psql"}  # a client that ends another's command
    starts: list[int] = []
    for name in names:
        at = low.find(name)
        while at >= 0:
            starts.append(at)
            at = low.find(name, at + 1)
    found: list[re.Match[str]] = []
    done = 0
    match = _CLIENT_RE.match
    for at in sorted(set(starts)):
        if at < done:
            continue
        m = match(text, at)
        if m is not None:
            found.append(m)
            done = m.end()
    return found


def _named(cmd: str, hints: tuple[str, ...]) -> bool:
    """Whether the client ``cmd`` (lower case) is one of those ``hints`` name (``psql`` always: no option, a client
    that ends another's command)."""
    return cmd == "psql" and bool(hints) or any(cmd.startswith(_STARTS_BY_HINT[hint]) for hint in hints)


def _value_group(m: re.Match[str]) -> str:
    """The group holding the value: ``v`` (bare), ``q1`` (single-quoted) or ``q2`` (double-quoted)."""
    for group in ("v", "q1", "q2"):
        if group in m.re.groupindex and m.group(group) is not None:
            return group
    return "v"


def find_client_passwords(text: str, spans: list[Span], hints: tuple[str, ...] | None = None) -> None:
    """Password options of command-line clients, within the same command: to a newline, ``;``, ``|``, ``&``
    or the next client's name (so each option is read once, however many commands the text holds). ``hints``: the
    :data:`CLIENT_HINTS` the text holds (:func:`client_hints`), when known."""
    commands = _client_commands(text, client_hints(text.lower()) if hints is None else hints)
    seg_end = -1  # the next segment end at or after the current command (searched again only when passed)
    for i, m in enumerate(commands):
        cmd = m.group("cmd").lower()
        if seg_end < m.end():
            seg = _SEGMENT_END_RE.search(text, m.end())
            seg_end = seg.start() if seg is not None else len(text)
        end = seg_end
        if i + 1 < len(commands):
            end = min(end, commands[i + 1].start())
        if cmd.startswith(("mysql", "mariadb")):
            rules: tuple[str, ...] = ("glued_p",)
        elif cmd.startswith("ldap"):
            rules = ("w",)
        else:
            rules = _CLIENT_RULES.get(cmd, ())
        if cmd in _LOGIN_ONLY and not _LOGIN_RE.search(text, m.end(), end):
            continue  # ``docker run -p 8080:80`` publishes a port; ``docker login -p X`` passes a password
        for rule in rules:
            pattern = _CLIENT_OPTIONS[rule]
            found = (pattern.match(text, m.end(), end),) if rule == "securestring" else pattern.finditer(
                text, m.end(), end)
            for pm in found:
                if pm is None:
                    continue
                group = _value_group(pm)
                if "aq" in pm.re.groupindex and pm.group("aq") is not None and group == "v":
                    continue  # ``"-p", P``: an argument list's items are quoted
                span = pm.span(group)
                if span[1] > span[0] and not kept_value(text[span[0]:span[1]], "password", STRONG):
                    spans.append(span)


def find_keyword_pairs(text: str, spans: list[Span], low: str | None = None) -> None:
    """``.netrc`` passwords and the named values a command sets (``ENV NAME X``, ``setx NAME X``, ``set -x NAME X``,
    ``aws configure set NAME X``), the name judged as in ``NAME=X``. ``low``: the text in lower case, when known."""
    if low is None:
        low = text.lower()
    if "password" in low and ("machine" in low or "default" in low):
        for m in _NETRC_RE.finditer(text):
            span = m.span(_value_group(m))
            if span[1] > span[0] and not kept_value(text[span[0]:span[1]], "password", STRONG):
                spans.append(span)
    if ("set" not in low or ("setx" not in low and "set -" not in text and "configure" not in text)) and (
            "ENV" not in text):
        return
    for hint, pattern in _KEYWORD_RES:
        if hint not in text:
            continue
        for k in pattern.finditer(text):
            start = k.start()
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-"):
                continue
            pair = _KEYWORD_VALUE_RE.match(text, k.end())
            if pair is None:
                continue
            name = pair.group("n")
            level = credential_name(name)
            span = pair.span(_value_group(pair))
            if level and span[1] > span[0] and not kept_value(text[span[0]:span[1]], name, level):
                spans.append(span)
