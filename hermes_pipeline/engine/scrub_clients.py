"""Passwords given to command-line clients on their command line (OBS-58, spec 04 FMT-33a).

``mysql -pX``, ``sshpass -p X``, ``redis-cli -a X``, ``ldapsearch -w X``, ``curl -u user:X``, ``openssl -passin
pass:X``, ``smbclient -U user%X``, ``docker login -p X``: each client has the options that carry its password, read
only within the same command (to a newline, ``;``, ``|``, ``&`` or the next client's name). Only the password's
span is appended; a value a password name would not hide (a placeholder, ``$VAR``) stays.
"""

from __future__ import annotations

import re
from typing import Final

from .scrub_names import STRONG, kept_value

__all__ = ["CLIENT_HINTS", "find_client_passwords"]

Span = tuple[int, int]

# Command-line clients and the option that carries a password.
_CLIENT_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<cmd>(?ai:mysql[a-z_-]*|mariadb[a-z_-]*|sshpass|redis-cli|ldap[a-z]+|curl|wget"
    r"|docker|podman|helm|az|openssl|smbclient|psql|mongo(?:sh|dump|restore)?))(?![A-Za-z0-9_])",
)
_CLIENT_STARTS: Final = ("mysql", "mariadb", "sshpass", "redis-cli", "ldap", "curl", "wget", "docker", "podman",
                         "helm", "az", "openssl", "smbclient", "psql", "mongo")
"""How every client name of :data:`_CLIENT_RE` starts (in ASCII lower case: ``(?ai:``, no Unicode folding)."""
CLIENT_HINTS: Final = ("mysql", "mariadb", "sshpass", "redis-cli", "ldap", "curl", "wget", "docker", "podman",
                       "helm", "az ", "openssl", "smbclient", "mongo")
"""Lowercase substrings without one of which no text holds a client with a password option (the pre-check)."""
_SEGMENT_END_RE: Final = re.compile(r"[\n;|&]|\\n")
_CLIENT_OPTIONS: Final = {
    "glued_p": re.compile(r"(?<!\S)-p(?:'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<v>[^\s\"';|&`\\]+))"),
    "spaced_p": re.compile(r"(?<!\S)-p[ \t]+(?P<v>[^\s\"';|&`\\-][^\s\"';|&`\\]*)"),
    "a": re.compile(r"(?<!\S)-a[ \t]+(?P<v>[^\s\"';|&`\\-][^\s\"';|&`\\]*)"),
    "w": re.compile(r"(?<!\S)-w[ \t]+(?P<v>[^\s\"';|&`\\-][^\s\"';|&`\\]*)"),
    "user": re.compile(r"(?<!\S)(?:-u|--user)[ \t=]+[\"']?[^\s:\"']*:(?P<v>[^\s\"';|&`\\]+)"),
    "pass": re.compile(r"(?<!\S)-pass(?:in|out)[ \t]+pass:(?P<v>[^\s\"';|&`\\]+)"),
    "smb": re.compile(r"(?<!\S)-U[ \t]+[^\s%\"']+%(?P<v>[^\s\"';|&`\\]+)"),
}
_LOGIN_ONLY: Final = frozenset({"docker", "podman", "helm", "az"})
"""Clients whose ``-p`` is a password only in their ``login`` command."""
_LOGIN_RE: Final = re.compile(r"(?<![A-Za-z0-9_-])login(?![A-Za-z0-9_-])")
_CLIENT_RULES: Final = {
    "sshpass": ("spaced_p", "glued_p"), "redis-cli": ("a",), "curl": ("user",), "wget": ("user",), "docker": ("spaced_p",),
    "podman": ("spaced_p",), "helm": ("spaced_p",), "az": ("spaced_p",), "openssl": ("pass",),
    "smbclient": ("smb",), "psql": (), "mongo": ("spaced_p",), "mongosh": ("spaced_p",),
    "mongodump": ("spaced_p",), "mongorestore": ("spaced_p",),
}



def _client_commands(text: str) -> list[re.Match[str]]:
    """``list(_CLIENT_RE.finditer(text))``, with the pattern tried only where a client name starts (found with
    ``str.find`` on the lower-cased text, when lowering keeps every offset)."""
    low = text.lower()
    if len(low) != len(text):
        return list(_CLIENT_RE.finditer(text))
    starts: list[int] = []
    for name in _CLIENT_STARTS:
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


def find_client_passwords(text: str, spans: list[Span]) -> None:
    """Password options of command-line clients, within the same command: to a newline, ``;``, ``|``, ``&``
    or the next client's name (so each option is read once, however many commands the text holds)."""
    commands = _client_commands(text)
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
            for pm in _CLIENT_OPTIONS[rule].finditer(text, m.end(), end):
                group = "v" if pm.group("v") is not None else ("q1" if pm.group("q1") is not None else "q2")
                span = pm.span(group)
                if span[1] > span[0] and not kept_value(text[span[0]:span[1]], "password", STRONG):
                    spans.append(span)
