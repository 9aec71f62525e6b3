"""Passwords given to command-line clients on their command line (OBS-58, spec 04 FMT-33a).

``mysql -pX``, ``sshpass -p X``, ``redis-cli -a X`` / ``AUTH X``, ``ldapsearch -w X``, ``curl -u user:X`` (``-u X:``
too: a key as the user), ``curl --oauth2-bearer X``, ``http -a user:X`` (HTTPie), ``openssl -passin pass:X`` /
``-k X``, ``smbclient -U user%X``, ``docker login -p X`` / ``-pX`` (and the other registry clients), ``twine -p X``,
``keytool -storepass X``, ``sqlcmd -P X``, ``zip -P X``, ``7z -pX``, ``unrar -pX``, ``ssh-keygen -N X``,
``sqlplus user/X@db``, ``xfreerdp /p:X``, ``htpasswd -b file user X``, ``lftp -u user,X`` and PowerShell's
``ConvertTo-SecureString "X" -AsPlainText``: each client has the options that carry its password, read only within
the same command (to a newline, ``;``, ``|``, ``&`` or the next client's name). A line continuation is no newline
that ends the command: a backslash (POSIX shells), a backtick (PowerShell) or ``^`` (cmd.exe) at the end of a line,
and a quoted argument-list item followed by a comma (a list written one item a line). The password may be quoted
(``sshpass -p 'X'``) and the command may be an argument list (``["sshpass", "-p", "X"]``). Only the password's span
is appended; a value a password name would not hide (a placeholder, ``$VAR``) stays.

Beside the clients: an Oracle JDBC URL's ``user/X@``, the namespaced credentials of ``poetry config`` / ``composer
config`` (``http-basic.repo user X``, ``pypi-token.repo X``), the secret a command stores (``aws ssm put-parameter
--value X --type SecureString``, ``az keyvault secret set --value X``, ``gh secret set --body X``) and a secret piped
or fed to a command that reads it from its standard input (``echo X | docker login --password-stdin``, ``… |
gh auth login --with-token``, ``sudo -S``, ``<<< X``).

:func:`find_keyword_pairs` reads the forms where a keyword, not a separator, introduces a named value: ``.netrc``
(``machine host login alice password X``), Dockerfile ``ENV NAME X``, ``setx NAME X``, fish's ``set -x NAME X``,
Apache's ``SetEnv NAME X`` / ``RequestHeader set NAME X``, nginx's ``proxy_set_header NAME X;`` / ``fastcgi_param
NAME X;``, a tool's ``config`` command (``npm config set _authToken X``, ``aws configure set NAME X``, ``ngrok config
add-authtoken X``, ``rclone config create r s3 … secret_access_key X``), the configuration directives that hold a
password (redis ``requirepass X`` / ``masterauth X``, slapd ``rootpw X``, ``bindpw X``) and SQL's ``… PASSWORD
'X'``; :func:`find_sql_identified` SQL's ``… IDENTIFIED BY 'X'``; :func:`find_positional_passwords` the commands that
take a password by position (``net user NAME X``, ``rabbitmqctl add_user NAME X``, ``echo NAME:X | chpasswd``).

No span starts or ends inside a redaction marker: a text scrubbed once (``curl -u <redacted:…>:``) is read as it
is, its markers never as a user or a password.

Over 400 lines on purpose: the clients' option tables and the keyword forms share one reader of a command
(its segment, continuations, quoted or bare words), which splitting would write twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Final

from .scrub_names import STRONG, credential_name, kept_value, secret_looking

__all__ = ["CLIENT_HINTS", "ECHO_COMMAND", "PRINTF_FORMAT", "client_hints", "command_prints_credential",
           "file_names_credential", "find_client_passwords", "find_keyword_pairs", "find_login_tokens",
           "find_positional_passwords", "find_printed_secrets", "find_sql_identified", "printed_token"]

Span = tuple[int, int]

# Command-line clients and the option that carries a password.
_CLIENT_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<cmd>(?ai:mysql[a-z_-]*|mariadb[a-z_-]*|sshpass|redis-cli|ldap[a-z]+|curl|wget"
    r"|docker|podman|buildah|skopeo|nerdctl|oras|crane|helm|az|oc|cf|openssl|smbclient|rpcclient|smbcacls"
    r"|smbget|smbmap|psql|mongo(?:sh|dump|restore|export|import|stat|top|files)?|keytool|jarsigner|sqlcmd|bcp"
    r"|osql|zip|unzip|7za?|7zz|unrar|rar|twine|cqlsh|mosquitto_(?:pub|sub|rr)|ncftp[a-z]*|lftp|htpasswd"
    r"|evil-winrm|crackmapexec|netexec|nxc|psexec|rdesktop|hydra|medusa|doctl|vercel|ssh-keygen|sqlplus"
    r"|xfreerdp|wlfreerdp|convertto-securestring"
    r"|(?:https?|xhs?)(?=[ \t]|[\"'][ \t]*,)))(?![A-Za-z0-9_])",
)
_CLIENT_STARTS: Final = ("mysql", "mariadb", "sshpass", "redis-cli", "ldap", "curl", "wget", "docker", "podman",
                         "buildah", "skopeo", "nerdctl", "oras", "crane", "helm", "az", "oc", "cf", "openssl",
                         "smbclient", "rpcclient", "smbcacls", "smbget", "smbmap", "psql", "mongo",
                         "keytool", "jarsigner", "sqlcmd", "bcp", "osql", "zip", "unzip", "7z", "unrar", "rar",
                         "twine", "cqlsh", "mosquitto_", "ncftp", "lftp", "htpasswd", "evil-winrm", "crackmapexec",
                         "netexec", "nxc", "psexec", "rdesktop", "hydra", "medusa", "doctl", "vercel", "ssh-keygen",
                         "sqlplus", "xfreerdp", "wlfreerdp",
                         "convertto-securestring", "http", "xh")
"""How every client name of :data:`_CLIENT_RE` starts (in ASCII lower case: ``(?ai:``, no Unicode folding)."""
_DASH_OPTION: Final = re.compile(r"-[a-z-]")
_GUARDED_HINTS: Final = (
    (frozenset({"-p"}), ("mysql", "mariadb", "sshpass", "mongo", "7z", "sqlcmd", "zip", "ssh-keygen", "openssl",
                         "bcp", "osql", "rar", "twine", "cqlsh", "mosquitto", "ncftp", "winrm", "crackmapexec",
                         "netexec", "nxc", "psexec", "rdesktop", "smbmap", "hydra", "medusa")),  # -p, -pX, -P, -pass
    (frozenset({"-u", "--", "-e"}), ("curl", "wget", "smbclient", "rpcclient", "smbcacls", "smbget",
                                     "lftp")),  # -u, -U, --user, --oauth2-bearer, -E
    (frozenset({"-a", "--"}), ("redis-cli", "http", "xh")),  # -a, --auth
    (frozenset({"-w", "-s", "-a"}), ("ldap",)),
    (frozenset({"-n"}), ("ssh-keygen",)),
    (frozenset({"-k"}), ("openssl", "keytool", "jarsigner")),  # -k, -keypass
    (frozenset({"-s", "-d"}), ("keytool", "jarsigner")),  # -storepass, -destkeypass
    (frozenset({"-t"}), ("doctl", "vercel")),
    (frozenset({"-h"}), ("rar",)),  # -hp
    (frozenset({"-b", "-n", "-c"}), ("htpasswd",)),  # -b, -nb, -cb
)
"""Each client with the options (a dash and a letter, in lower case) one of which its password option starts with:
sought only when the text holds one where an option starts (:func:`_options`)."""
_GUARDS: Final = frozenset().union(*(guards for guards, _ in _GUARDED_HINTS))
_LOGIN_HINTS: Final = ("docker", "podman", "buildah", "skopeo", "nerdctl", "oras", "crane", "helm", "az", "oc", "cf")
"""Clients whose ``-p`` is a password only in their ``login`` command: sought when the text holds ``-p`` and
``login``."""
_NAMED_HINTS: Final = (("-c", "redis-cli"), ("-s", "securestring"))
"""Clients whose password needs no option of theirs (``redis-cli AUTH X``, ``ConvertTo-SecureString X``): sought
whenever the text names them (their name holds the dash and letter)."""
_SLASH_HINTS: Final = ("sqlplus",)
"""Oracle's SQL*Plus, which takes ``user/password@db``: sought when the text holds a ``/``."""
_EXTRA_HINTS: Final = ("jdbc:oracle:", "config", "secret-store", "stdin")
"""Hints of the forms that are not a client's option (:data:`_EXTRA_FINDERS`)."""
CLIENT_HINTS: Final = ("freerdp",) + _SLASH_HINTS + tuple(dict.fromkeys(
    h for h in (*(h for _, hints in _GUARDED_HINTS for h in hints), *_LOGIN_HINTS,
                *(h for _, h in _NAMED_HINTS)))) + _EXTRA_HINTS
"""Lowercase substrings without one of which no text holds a client with a password option (the pre-check)."""
_STARTS_BY_HINT: Final = {hint: tuple(start for start in _CLIENT_STARTS if hint in start) for hint in CLIENT_HINTS}
"""The client names each hint is part of (``psql`` has no password option: no hint, never sought)."""

_SEGMENT_END_RE: Final = re.compile(r"[\n;|&'\"]|\\n")
"""What ends a command (a newline, ``; | &``, ``\\n`` in JSON-encoded text), and the quotes it is sought around."""
_SPACE: Final = r"(?:[ \t]|\\\r?\n|(?<=[ \t])[`^]\r?\n)"
"""A space between two arguments, or a line continuation: a backslash (POSIX shells), or after a space a backtick
(PowerShell) or ``^`` (cmd.exe), at the end of a line."""
_SP: Final = _SPACE + "+"
_BEFORE: Final = r"(?<![^\s\"'\[(,])"
"""An option starts a word, a quoted argument or an item of an argument list."""
_NEXT_ARG: Final = rf"(?:{_SP}|(?P<aq>[\"'])\s*,\s*)"
"""What separates an option from its value: spaces (line continuations too), or the end of a quoted list item and
a comma."""
_ARG: Final = r"(?:'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<v>[^\s\"';|&`\\-][^\s\"';|&`\\]*))"
_GLUED: Final = r"(?:'(?P<q1>[^'\s,][^'\n]*)'|\"(?P<q2>[^\"\s,][^\"\n]*)\"|(?P<v>[^\s\"';|&`\\]+))"
_WORD_RE: Final = re.compile(rf"{_SPACE}*(?:'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<v>[^\s\"';|&`\\]+))")
"""One argument of a command, after the spaces before it."""
_MARKER_RE: Final = re.compile(r"<redacted(?::[0-9a-f]{8})?>")


def _spaced(option: str) -> re.Pattern[str]:
    return re.compile(_BEFORE + "(?:" + option + ")" + _NEXT_ARG + _ARG)


def _spaced_or_eq(option: str) -> re.Pattern[str]:
    return re.compile(_BEFORE + "(?:" + option + ")(?:=|" + _NEXT_ARG + ")" + _ARG)


def _glued(option: str) -> re.Pattern[str]:
    return re.compile(_BEFORE + "(?:" + option + ")" + _GLUED)


def _user_pass(option: str, sep: str) -> re.Pattern[str]:
    """``option user<sep>password`` (glued too: ``-uuser:password``); the user is a whole redaction marker or holds
    none of its characters (never a piece of one: ``<redacted``)."""
    user = rf"(?:<redacted(?::[0-9a-f]{{8}})?>|[^\s{sep}\"'<>]*)"
    return re.compile(
        _BEFORE + "(?:" + option + rf")(?:=|{_SP}|(?P<aq>[\"'])\s*,\s*|(?=[^\s\"'-]))"
        rf"(?:'(?P<u1>{user}){sep}(?P<q1>[^'\n]*)'|\"(?P<u2>{user}){sep}(?P<q2>[^\"\n]*)\""
        rf"|(?P<u3>{user}){sep}(?P<v>[^\s\"';|&`\\]*))")


_CLIENT_OPTIONS: Final = {
    "glued_p": _glued("-p"),
    "glued_hp": _glued("-hp"),
    "spaced_p": _spaced("-p"),
    "a": _spaced("-a"),
    "w": _spaced("-w"),
    "k": _spaced("-k"),
    "t": _spaced("-t"),
    "P": _spaced("-P"),
    "glued_P": _glued("-P"),
    "N": _spaced("-[NP]"),
    "ldap_new": _spaced("-s"),
    "ldap_old": _spaced("-a"),
    "store": _spaced(rf"-(?:src|dest)?(?:storepass|keypass)|-(?:storepasswd|keypasswd)(?:{_SP}-\S+)*{_SP}-new"),
    "oauth2": _spaced_or_eq("--oauth2-bearer"),
    "pass": re.compile(_BEFORE + r"-pass(?:in|out)?" + _NEXT_ARG + r"[\"']?pass:(?P<v>[^\s\"';|&`\\]+)"),
    "smb": re.compile(_BEFORE + rf"(?:-U|--user)(?:=|{_SP}|(?P<aq>[\"'])\s*,\s*)"
                      r"(?:'[^\s%\"']+%(?P<q1>[^'\n]+)'|\"[^\s%\"']+%(?P<q2>[^\"\n]+)\""
                      r"|[^\s%\"']+%(?P<v>[^\s\"';|&`\\]+))"),
    "lftp": re.compile(_BEFORE + rf"(?:-u|--user)(?:=|{_SP})"
                       r"(?:'[^\s,\"']+,(?P<q1>[^'\n]+)'|\"[^\s,\"']+,(?P<q2>[^\"\n]+)\""
                       r"|[^\s,\"']+,(?P<v>[^\s\"';|&`\\]+))"),
    "slash": re.compile(r"(?<![^\s\"'])[A-Za-z0-9_$#.-]+/(?P<v>[^\s\"'/@;|&`\\]+)(?=@|[\s\"']|$)"),
    "rdp": re.compile(r"(?<![^\s\"'])/p:(?P<v>[^\s\"';|&`\\]+)"),
    "securestring": re.compile(rf"(?:{_SP}-String)?{_SP}" + _ARG),
}
_USER_OPTIONS: Final = {
    "user": _user_pass("-u|--user", ":"),
    "proxy_user": _user_pass("-U|--proxy-user", ":"),
}
"""``user:password`` options; an empty password (``curl -u KEY:``, as Stripe's documentation writes it) makes the
user the credential, when it looks generated."""
_CERT_RE: Final = _spaced_or_eq("-E|--cert")
_AUTH_RE: Final = _spaced_or_eq("-a|--auth")
_REDIS_AUTH_RE: Final = re.compile(rf"(?<![^\s\"'])(?i:auth)(?={_SPACE})")

_LOGIN_ONLY: Final = frozenset(_LOGIN_HINTS)
"""Clients whose ``-p`` is a password only in their ``login`` command."""
_LOGIN_RE: Final = re.compile(r"(?<![A-Za-z0-9_-])login(?![A-Za-z0-9_-])")
_CLIENT_RULES: Final = {
    "sshpass": ("spaced_p", "glued_p"), "redis-cli": ("a", "redis_auth"),
    "curl": ("user", "proxy_user", "oauth2", "cert"), "wget": ("user",),
    **{name: ("spaced_p", "glued_p") for name in _LOGIN_HINTS},
    "openssl": ("pass", "k"), "psql": (),
    **{name: ("smb",) for name in ("smbclient", "rpcclient", "smbcacls", "smbget")},
    **{name: ("spaced_p",) for name in ("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport",
                                        "mongoimport", "mongostat", "mongotop", "mongofiles", "cqlsh", "evil-winrm",
                                        "crackmapexec", "netexec", "nxc", "psexec", "rdesktop", "smbmap", "hydra",
                                        "medusa")},
    "keytool": ("store",), "jarsigner": ("store",),
    "sqlcmd": ("P", "glued_P"), "bcp": ("P", "glued_P"), "osql": ("P", "glued_P"),
    "zip": ("P",), "unzip": ("P",), "7z": ("glued_p",), "7za": ("glued_p",), "7zz": ("glued_p",),
    "rar": ("glued_p", "glued_hp"), "unrar": ("glued_p", "glued_hp"), "twine": ("spaced_p", "glued_p"),
    "mosquitto_pub": ("P",), "mosquitto_sub": ("P",), "mosquitto_rr": ("P",), "lftp": ("lftp",),
    "htpasswd": ("htpasswd",), "doctl": ("t",), "vercel": ("t",), "ssh-keygen": ("N",),
    **{name: ("slash",) for name in _SLASH_HINTS},
    "xfreerdp": ("rdp",), "wlfreerdp": ("rdp",),
    "convertto-securestring": ("securestring",),
    **{name: ("httpie",) for name in ("http", "https", "xh", "xhs")},
}
_FAMILY_RULES: Final = (("mysql", ("glued_p",)), ("mariadb", ("glued_p",)),
                        ("ldappasswd", ("w", "ldap_new", "ldap_old")), ("ldap", ("w",)), ("ncftp", ("spaced_p",)))
"""Clients named by how they start (``mysqldump``, ``ldapsearch``, ``ncftpput``)."""

# Beside the clients.
_ORACLE_JDBC_RE: Final = re.compile(
    r"(?i:jdbc:oracle:(?:thin|oci8?|kprb)):[A-Za-z0-9_$#.-]+/(?P<v>[^\s\"'/@;|&`\\]+)@")
_NAMESPACES: Final = {"http-basic": 2, "bitbucket-oauth": 2, "pypi-token": 1, "github-oauth": 1, "gitlab-oauth": 1,
                      "gitlab-token": 1}
"""``poetry config`` / ``composer config`` credentials: the namespace and which argument after it is the secret
(``http-basic.<repo> <user> <password>``, ``pypi-token.<repo> <token>``)."""
_NAMESPACED_RE: Final = re.compile(
    rf"config(?:{_SP}-{{1,2}}[A-Za-z][\w-]*(?:=\S*)?)*{_SP}"
    r"(?P<ns>(?i:http-basic|bitbucket-oauth|pypi-token|github-oauth|gitlab-oauth|gitlab-token))\.[^\s\"'=]+")
_SECRET_STORE_RE: Final = re.compile(rf"(?i:put-parameter|secret{_SP}set)")
"""Commands that store a secret: the value option of ``aws ssm put-parameter`` (with ``--type SecureString``),
``az keyvault secret set`` and ``gh secret set``."""
_SECURESTRING_RE: Final = re.compile("(?i)securestring")
_STORED_VALUE_RES: Final = (_spaced_or_eq("--value|--secret-value|--body|-b"), _glued("-b"))
ECHO_COMMAND: Final = r"(?:echo|printf)(?:[ \t]+-[neE]{1,3})*"
"""``echo`` or ``printf`` and their options (``-n``, ``-e``): a command that prints the literal after it."""
PRINTF_FORMAT: Final = r"(?:'%s(?:\\n)?'|\"%s(?:\\n)?\")"
"""``printf``'s quoted format that prints its argument as it is (``'%s'``, ``"%s\\n"``)."""
_ECHO_RE: Final = re.compile(ECHO_COMMAND + r"(?:[ \t]+" + PRINTF_FORMAT + r")?[ \t]+" + _ARG + r"[ \t]*\|")
_HERESTRING_RE: Final = re.compile(r"<<<[ \t]*" + _ARG)
_STDIN_READER_RE: Final = re.compile(
    r"--password-stdin|--with-token|--token-stdin|(?<![\w-])sudo(?:[ \t]+[^\s;|&]+)*?[ \t]+-[A-Za-z]*S(?![\w-])"
    r"|(?<![\w-])passwd(?:[ \t]+[^\s;|&]+)*?[ \t]+--stdin|--passphrase-fd[ \t]+0(?!\d)"
    r"|(?<![\w-])(?:secrets?[ \t]+(?:put|set|create|import)|env[ \t]+add)(?![\w-])")
"""Commands that read a secret from their standard input: a value echoed or fed (``<<<``) to them is one; and the
commands that store one read so (``wrangler secret put``, ``gh secret set``, ``docker secret create``, ``fly secrets
import``, ``vercel env add``, ``gpg --passphrase-fd 0``)."""
_STDIN_HINTS: Final = ("--password-stdin", "--with-token", "--token-stdin", "sudo", "--stdin")
_STORE_HINTS: Final = ("secret", "env add", "passphrase-fd", "token", "pass", "key", "cred")
"""What a text feeding a value to a secret's store or writing it to a credential's file holds (the pre-check)."""
_ECHO_FILE_RE: Final = re.compile(
    ECHO_COMMAND + r"(?:[ \t]+" + PRINTF_FORMAT + r")?[ \t]+" + _ARG
    + r"[ \t]*>>?[ \t]*(?P<path>[^\s;|&<>]{1,256})")
"""A value written to a file (``echo 'P' > ~/.config/app/token``): a secret when the file is named for one."""
_FILE_STEM_RE: Final = re.compile(r"[.]*([^./\\]+)(?:\.[A-Za-z0-9]{1,8})?\Z")

_KEYWORD_RES: Final = (
    ("ENV", re.compile(r"ENV[ \t]+")),  # Dockerfile
    ("setx", re.compile(r"setx[ \t]+")),  # Windows
    ("set -", re.compile(r"set(?:[ \t]+-[A-Za-z]+)+[ \t]+")),  # fish
)
"""The keywords that introduce a named value, each with the substring without which it is absent."""
_KEYWORD_VALUE_RE: Final = re.compile(
    r"(?P<n>[A-Za-z_][A-Za-z0-9_.-]{0,127})[ \t]+(?:'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<v>[^\s\"'`;|&\\]+))")
_LINE_VALUE_RE: Final = re.compile(r"(?P<v>[^\n\r\"'`\\]*?)[ \t]*(?:\\?\r?(?:\n|\Z)|(?=[\"'`\\]))")
"""An unquoted value running to its line's end (trailing blanks and a line continuation aside), or to a quote or a
backslash (the end of the string the line stands in: ``"ENV API_TOKEN X"``, ``...X\\n`` in JSON-encoded text)."""
_NETRC_RE: Final = re.compile(
    r"(?<![\w-])(?:machine[ \t]+\S+|default)(?:[ \t\r\n]+(?:login|account)[ \t]+\S+)*[ \t\r\n]+password[ \t]+"
    r"(?:'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<v>[^\s\"'`\\]+))"
)
_CONFIG_CMD_RE: Final = re.compile(rf"config(?:ure)?{_SP}(?=[a-z_/-])")
"""A tool's ``config`` command (``npm config set``, ``git config``, ``aws configure set``, ``rclone config
create``), in the lower-cased text: the credential names among its arguments are each followed by their value."""
_ANY_CASE_CONFIG_CMD_RE: Final = re.compile(rf"(?i:config(?:ure)?){_SP}(?=[a-z_/-])")
_COMMAND_START: Final = "\n;&|`\"'(>$"
"""What a command's line or a command starts after: a newline, ``; & |``, a quote or a backtick (a command quoted or
in inline code), an opening parenthesis, a prompt (``> ``, ``$ ``)."""
_TOOL_WORDS_RE: Final = re.compile(rf"{_SPACE}*(?:[\w./@-]+{_SP}){{1,3}}")
"""Before a command's ``config``: the tool's name and at most two more words (``sudo npm``, ``python -m pip``)."""
_CONFIG_VERBS: Final = frozenset({"set", "add", "create", "update", "password"})
_FIRST_WORD_RE: Final = re.compile(r"[^\s\"'`;|&\\]+")
_CONFIG_NAME_RE: Final = re.compile(r"(?://[^\s:]*:)?(?P<n>[A-Za-z_](?:[\w.-]{0,126}\w)?)")
_LINE_KEYWORDS: Final = (
    r"(?P<k>requirepass|masterauth|tls-(?:client-)?key-file-pass|rootpw|(?:root)?bindpw|AuthLDAPBindPassword"
    r"|sentinel[ \t]+auth-pass[ \t]+\S+|user[ \t]+\S+[ \t]+insecure-password"
    r"|(?P<n>SetEnv|RequestHeader[ \t]+(?:set|append|add|merge|setifempty)|(?:fastcgi|uwsgi|scgi)_param"
    r"|(?:proxy|grpc)_set_header))(?=[ \t])")
"""The configuration lines whose keyword introduces a password: redis (``requirepass``, ``masterauth``, the TLS
key's passphrase, ``sentinel auth-pass <master>``), OpenLDAP's slapd (``rootpw``), LDAP clients and nslcd
(``bindpw``), Apache (``AuthLDAPBindPassword``), HAProxy (``user <name> insecure-password``); or a named value
(group ``n``): Apache's ``SetEnv NAME X`` and ``RequestHeader set NAME X``, nginx's ``fastcgi_param NAME X;`` and
``proxy_set_header NAME X;``. Each starts a line (after its indent, or a file viewer's line number: ``12|…``)."""
_FIRST_LINE_KEYWORD_RE: Final = re.compile(r"\"*[ \t]*(?:\d{1,7}[|\t][ \t]*)?" + _LINE_KEYWORDS)
_LINE_KEYWORD_RE: Final = re.compile(r"\n[ \t]*(?:\d{1,7}[|\t][ \t]*)?(?=[rmtbAsuSRfgp])" + _LINE_KEYWORDS)
_STRING_KEYWORD_RE: Final = re.compile(
    r"\": ?\"(?=[ \t0-9rmtbAsuSRfgp])[ \t]*(?:\d{1,7}[|\t][ \t]*)?(?=[rmtbAsuSRfgp])" + _LINE_KEYWORDS)
"""A line keyword after a newline or starting a JSON string value (``"output": "requirepass X\\n…"``: found from the
newline or the ``":"`` before the value, at C speed; the lookahead spares the alternation on lines that start
otherwise) and, with the first, at the text's start (a JSON string's start too)."""
_DIRECTIVE_VALUE_RE: Final = re.compile(
    r"[ \t]+" + _ARG + r"(?:[ \t]+groups[ \t]+\S+)?[ \t]*(?:[#;][^\n\"]*)?\r?(?=\n|$|\"|\\[nr])")
"""A directive's value, to the end of its line or of the JSON string it stands in (a comment may follow it)."""
_DIRECTIVES: Final = ("requirepass", "masterauth", "rootpw", "bindpw", "rootbindpw", "authldapbindpassword")
"""The directives a ``config`` command may set too (``CONFIG SET requirepass X``)."""
_SQL_PASSWORD_RE: Final = re.compile(r"(?i:password)[ \t]+'(?P<q1>[^'\n]*)'")
_SQL_BEFORE_RE: Final = re.compile(
    r"(?<![\w-])(?i:with|login|encrypted|unencrypted|(?:user|role)[ \t]+[\w\"$.-]+)[ \t]+\Z")
"""SQL's ``CREATE USER … WITH PASSWORD 'X'``, ``ALTER USER bob PASSWORD 'X'``, ``… LOGIN PASSWORD 'X'``."""
_SQL_IDENTIFIED_RE: Final = re.compile(
    r"(?<![\w-])(?i:identified)(?:[ \t]+(?i:with)[ \t]+['\"`]?[\w$]{1,64}['\"`]?)?[ \t]+(?i:by)"
    r"(?:[ \t]+(?i:password))?[ \t]+(?:'(?P<q1>[^'\n]*)'|\"(?P<q2>[^\"\n]*)\"|(?P<b>[^\s;'\"`,)]+))")
_SQL_USER_RE: Final = re.compile(r"(?<![\w-])(?i:create|alter)[ \t]+(?i:user|role|login)[ \t]")
"""MySQL's and Oracle's ``… IDENTIFIED BY 'X'`` (``CREATE USER``, ``ALTER USER``, ``GRANT … TO 'app'@'%'``;
``IDENTIFIED WITH caching_sha2_password BY 'X'``; Oracle's bare ``IDENTIFIED BY tiger``, in a ``CREATE USER`` or
``ALTER USER`` statement)."""


def client_hints(low: str) -> tuple[str, ...]:
    """The hints the lower-cased text holds that can name a client with a password option in it (none: no client
    option to read): each client is sought only when the text holds what its option starts with (``-p``, ``-u``,
    ``/p:`` ...) where an option starts. A text without ``-`` and ``/`` holds none (no option, no ``user/password``)
    but a value fed to a secret's store (``… | wrangler secret put X``)."""
    fed = ("echo" in low or "printf" in low or "<<<" in low) and any(h in low for h in _STORE_HINTS) and (
        "|" in low or "<<<" in low or ">" in low)  # … | wrangler secret put X, echo P > ~/.config/app/token
    if "-" not in low and "/" not in low:
        return ("stdin",) if fed else ()
    hints: list[str] = []
    if "/" in low:
        hints.extend(hint for hint in _SLASH_HINTS if hint in low)  # sqlplus user/P@db
        if "/p:" in low and "freerdp" in low:
            hints.append("freerdp")
        if "jdbc:oracle:" in low:
            hints.append("jdbc:oracle:")
    if "-" in low:
        dashes = set(_DASH_OPTION.findall(low))
        options = _options(low, dashes)
        for guards, guarded in _GUARDED_HINTS:
            if not guards.isdisjoint(options):
                hints.extend(hint for hint in guarded if hint not in hints and hint in low)
        if "-p" in options and "login" in low:
            hints.extend(hint for hint in _LOGIN_HINTS if hint not in hints and hint in low)
        hints.extend(hint for dash, hint in _NAMED_HINTS if dash in dashes and hint not in hints and hint in low)
        if not dashes.isdisjoint(("-b", "-o", "-t")) and "config" in low and (
                "-basic." in low or "-oauth." in low or "-token." in low):
            hints.append("config")  # http-basic., github-oauth., pypi-token.
        if not options.isdisjoint(("--", "-b")) and (
                ("secret" in low and "set" in low) or ("put-parameter" in low and "securestring" in low)):
            hints.append("secret-store")
        if not options.isdisjoint(("--", "-s")) and (
                "<<<" in low or "|" in low and ("echo" in low or "printf" in low)) and any(
                h in low for h in _STDIN_HINTS):
            hints.append("stdin")
    if fed and "stdin" not in hints:
        hints.append("stdin")
    return tuple(hints)


def _options(low: str, dashes: set[str]) -> set[str]:
    """The options of :data:`_GUARDS` among ``dashes`` that the lower-cased text holds where an option starts
    (:data:`_BEFORE`: at the text's start, after a space, a quote, ``[``, ``(`` or ``,``), not inside a word
    (``re-parse``, ``x-api-key``)."""
    found = set()
    for option in _GUARDS.intersection(dashes):
        at = low.find(option)
        for _ in range(64):  # past that many, taken as found (a hint too many costs a search, never a span)
            if at < 0 or at == 0 or low[at - 1].isspace() or low[at - 1] in "\"'[(,":
                break
            at = low.find(option, at + 1)
        if at != -1:
            found.add(option)
    return found


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


def _continued(text: str, newline: int) -> bool:
    """Whether the newline at ``newline`` continues the command on the next line: a backslash before it (not an
    escaped one), a backtick or ``^`` after a space, or a quoted argument-list item and its comma."""
    i = newline - 1 if newline and text[newline - 1] == "\r" else newline
    if i == 0:
        return False
    c = text[i - 1]
    if c == "\\":
        return i < 2 or text[i - 2] != "\\"
    if c in "`^":
        return i >= 2 and text[i - 2] in " \t"
    return c == "," and i >= 2 and text[i - 2] in "\"'"


def _segment_end(text: str, start: int) -> int:
    """Where the command going on at ``start`` ends: the first newline that does not continue it, ``;``, ``|``,
    ``&`` or an escaped newline (``\\n`` in JSON-encoded text), else the text's end; none of them inside a quoted
    argument that closes on its line (``mysql -p'cg9;x+r2y' app``)."""
    pos = start
    while True:
        seg = _SEGMENT_END_RE.search(text, pos)
        if seg is None:
            return len(text)
        at = seg.start()
        c = text[at]
        if c in "'\"":
            line_end = _LINE_BREAK_RE.search(text, seg.end(), seg.end() + _QUOTED_MAX)  # \n in JSON-encoded text too
            close = text.find(c, seg.end(), line_end.start() if line_end is not None else seg.end() + _QUOTED_MAX)
            pos = close + 1 if close >= 0 else seg.end()  # an unmatched quote (an apostrophe) is a character
            continue
        if c == "\n" and _continued(text, at):
            pos = seg.end()
            continue
        return at


_LINE_BREAK_RE: Final = re.compile(r"\n|\\n")
_QUOTED_MAX: Final = 512
"""The longest quoted argument :func:`_segment_end` reads through (a bound: each quote is looked at once)."""


def _words(text: str, start: int, end: int, limit: int = -1) -> list[tuple[Span, bool]]:
    """The arguments of the command between ``start`` and ``end`` (the first ``limit`` of them, when given): each
    value's span (without its quotes) and whether it was quoted; they stop at what no argument is (an unmatched
    quote, a backslash escape, a quote glued to the argument before it)."""
    words: list[tuple[Span, bool]] = []
    pos = start
    while pos < end and len(words) != limit:
        m = _WORD_RE.match(text, pos, end)
        if m is None or words and m.start(_value_group(m)) - (m.group("v") is None) == pos:
            break  # glued to the word before it (``X", "n": 3``: the end of a JSON string)
        group = _value_group(m)
        words.append((m.span(group), group != "v"))
        pos = m.end()
    return words


def _value_group(m: re.Match[str]) -> str:
    """The group holding the value: ``v`` (bare), ``q1`` (single-quoted) or ``q2`` (double-quoted)."""
    for group in ("v", "q1", "q2"):
        if group in m.re.groupindex and m.group(group) is not None:
            return group
    return "v"


def _password(text: str, span: Span, found: list[Span]) -> None:
    """Append ``span`` when it holds a value a password name would hide."""
    if span[1] > span[0] and not kept_value(text[span[0]:span[1]], "password", STRONG):
        found.append(span)


def _option_values(pattern: re.Pattern[str], text: str, start: int, end: int, found: list[Span]) -> None:
    for pm in pattern.finditer(text, start, end):
        group = _value_group(pm)
        if "aq" in pm.re.groupindex and pm.group("aq") is not None and group == "v":
            continue  # ``"-p", P``: an argument list's items are quoted
        _password(text, pm.span(group), found)


def _user_values(pattern: re.Pattern[str], text: str, start: int, end: int, found: list[Span]) -> None:
    """``-u user:password``: the password; ``-u KEY:`` (no password): the user, when it looks generated."""
    for pm in pattern.finditer(text, start, end):
        group = _value_group(pm)
        if pm.group("aq") is not None and group == "v":
            continue
        if pm.end(group) > pm.start(group):
            _password(text, pm.span(group), found)
            continue
        user = "u" + {"q1": "1", "q2": "2"}.get(group, "3")
        if secret_looking(pm.group(user)):
            _password(text, pm.span(user), found)


def _cert_values(text: str, start: int, end: int, found: list[Span]) -> None:
    """``curl -E file.pem:password``: what follows the last colon, not a drive letter's (``C:\\certs\\c.pem``)."""
    for pm in _CERT_RE.finditer(text, start, end):
        group = _value_group(pm)
        vs, ve = pm.span(group)
        colon = text.rfind(":", vs, ve)
        if colon > vs + 1 and not any(c in text[colon + 1:ve] for c in "/\\"):
            _password(text, (colon + 1, ve), found)


def _httpie_values(text: str, start: int, end: int, found: list[Span]) -> None:
    """HTTPie's ``-a user:password`` (what follows the first colon) and ``-a TOKEN`` (bearer: when it looks
    generated; a bare user name, for which HTTPie prompts, stays)."""
    for pm in _AUTH_RE.finditer(text, start, end):
        group = _value_group(pm)
        vs, ve = pm.span(group)
        colon = text.find(":", vs, ve)
        if colon >= 0:
            _password(text, (colon + 1, ve), found)
        elif secret_looking(text[vs:ve]):
            _password(text, (vs, ve), found)


def _redis_auth(text: str, start: int, end: int, found: list[Span]) -> None:
    """``redis-cli … AUTH X`` / ``AUTH user X``: the last of the one or two arguments after ``AUTH``."""
    for am in _REDIS_AUTH_RE.finditer(text, start, end):
        args = [span for span, _ in _words(text, am.end(), end, 2)]
        if args:
            second = len(args) >= 2 and not text.startswith("-", args[1][0])
            _password(text, args[1] if second else args[0], found)


def _htpasswd(text: str, start: int, end: int, found: list[Span]) -> None:
    """``htpasswd -b[c] file user X`` / ``htpasswd -nb user X``: in batch mode (``-b``) the password is the last
    positional argument (the third, the second with ``-n``)."""
    letters = ""
    positional: list[Span] = []
    words = _words(text, start, end)
    i = 0
    while i < len(words):
        (ws, we), quoted = words[i]
        word = text[ws:we]
        if not quoted and word.startswith("-") and len(word) > 1:
            letters += word[1:]
            i += 2 if word[1:] in ("C", "r") else 1  # -C cost, -r rounds
            continue
        positional.append((ws, we))
        i += 1
    if "b" in letters:
        at = 1 if "n" in letters else 2
        if len(positional) > at:
            _password(text, positional[at], found)


_SPECIAL_RULES: Final[dict[str, Callable[[str, int, int, list[Span]], None]]] = {
    "user": lambda text, start, end, found: _user_values(_USER_OPTIONS["user"], text, start, end, found),
    "proxy_user": lambda text, start, end, found: _user_values(_USER_OPTIONS["proxy_user"], text, start, end, found),
    "cert": _cert_values,
    "httpie": _httpie_values,
    "redis_auth": _redis_auth,
    "htpasswd": _htpasswd,
}


def _rules(cmd: str) -> tuple[str, ...]:
    rules = _CLIENT_RULES.get(cmd)
    if rules is not None:
        return rules
    for start, family in _FAMILY_RULES:
        if cmd.startswith(start):
            return family
    return ()


_LOGIN_CMD_RE: Final = re.compile(r"(?<![\w./-])(?i:vault|cargo)[ \t]+login(?=[ \t])")
_LOGIN_WORD_RE: Final = re.compile(
    r"[ \t]+(?:(?P<q>[\"'])(?P<qv>[^\"'\s\\]{1,512})(?P=q)|(?P<v>[^\s\"'`;|&\\]{1,512}))")
"""A word of a login command's line: quoted, or a run that ends at a blank, a command separator or a backslash (the
escape of JSON-encoded text)."""


def find_login_tokens(text: str, spans: list[Span]) -> None:
    """``vault login TOKEN`` and ``cargo login TOKEN``: the token given as a positional argument of the login
    command (after any options and their values), when it looks generated; options, ``name=value`` arguments
    (``username=bob``), placeholders (``$VAULT_TOKEN``, ``<token>``) and words stay."""
    for m in _LOGIN_CMD_RE.finditer(text):
        pos = m.end()
        for _ in range(32):  # a login command's words: a few options and the token
            w = _LOGIN_WORD_RE.match(text, pos)
            if w is None:
                break
            pos = w.end()
            group = "qv" if w.group("qv") is not None else "v"
            start, end = w.span(group)
            word = text[start:end]
            if word.startswith("-") or "=" in word:
                continue
            if secret_looking(word):
                _password(text, (start, end), spans)


def _oracle_jdbc(text: str, found: list[Span]) -> None:
    """``jdbc:oracle:thin:scott/X@//db:1521/orcl``: the password between the user's ``/`` and the ``@``."""
    for m in _ORACLE_JDBC_RE.finditer(text):
        _password(text, m.span("v"), found)


def _namespaced_config(text: str, found: list[Span]) -> None:
    """``poetry config http-basic.repo user X``, ``poetry config pypi-token.repo X``, ``composer config -g
    github-oauth.github.com X``: the argument :data:`_NAMESPACES` names."""
    seg_end = -1
    for m in _NAMESPACED_RE.finditer(text):
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_.-"):
            continue
        if seg_end < m.end():
            seg_end = _segment_end(text, m.end())
        at = _NAMESPACES[m.group("ns").lower()]
        args = [span for span, quoted in _words(text, m.end(), seg_end, 8)
                if quoted or not text.startswith("-", span[0])]
        if len(args) >= at:
            _password(text, args[at - 1], found)


def _stored_secrets(text: str, found: list[Span]) -> None:
    """The value of a command that stores a secret (:data:`_SECRET_STORE_RE`)."""
    end = -1
    for m in _SECRET_STORE_RE.finditer(text):
        if m.start() < end:
            continue  # a command already read (each command is read once)
        end = _segment_end(text, m.end())
        if m.group(0).lower() == "put-parameter" and _SECURESTRING_RE.search(text, m.end(), end) is None:
            continue  # a plain parameter is configuration
        for pattern in _STORED_VALUE_RES:
            _option_values(pattern, text, m.end(), end, found)


def _fed_secrets(text: str, found: list[Span]) -> None:
    """A value echoed into (``echo X | docker login --password-stdin``) or fed with ``<<<`` to a command that reads a
    secret from its standard input (:data:`_STDIN_READER_RE`)."""
    for m in _ECHO_RE.finditer(text):
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_-"):
            continue
        if _STDIN_READER_RE.search(text, m.end(), _segment_end(text, m.end())):
            _password(text, m.span(_value_group(m)), found)
    if ">" in text:
        for m in _ECHO_FILE_RE.finditer(text):  # echo 'P' > ~/.config/app/token, printf %s P > .pgpass
            if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_-"):
                continue
            stem = _FILE_STEM_RE.search(m.group("path"))
            value = m.group(_value_group(m))
            if stem is not None and credential_name(stem.group(1)) and ":" not in value and "=" not in value:
                _password(text, m.span(_value_group(m)), found)  # user:hash, NAME=P: their own readers
    if "<<<" in text:
        for m in _HERESTRING_RE.finditer(text):
            window = max(0, m.start() - 400)  # the command before ``<<<`` (on its line, not the whole text)
            line = max(text.rfind(c, window, m.start()) for c in "\n;|")
            if _STDIN_READER_RE.search(text, line + 1 if line >= 0 else window, m.start()):
                _password(text, m.span(_value_group(m)), found)


_EXTRA_FINDERS: Final[dict[str, Callable[[str, list[Span]], None]]] = {
    "jdbc:oracle:": _oracle_jdbc, "config": _namespaced_config, "secret-store": _stored_secrets,
    "stdin": _fed_secrets,
}


def _outside_markers(text: str, found: list[Span], spans: list[Span]) -> None:
    """Append each span of ``found`` that neither starts nor ends inside a redaction marker (a rule that reads a
    scrubbed text's marker as a user or a password is wrong there)."""
    if not found or "<redacted" not in text:
        spans.extend(found)
        return
    markers = [m.span() for m in _MARKER_RE.finditer(text)]
    for start, end in found:
        if not any(ms < start < me or ms < end < me for ms, me in markers):
            spans.append((start, end))


def find_client_passwords(text: str, spans: list[Span], hints: tuple[str, ...] | None = None) -> None:
    """Password options of command-line clients, within the same command: to a newline that does not continue it,
    ``;``, ``|``, ``&`` or the next client's name (so each option is read once, however many commands the text
    holds); and the forms of :data:`_EXTRA_FINDERS`. ``hints``: the :data:`CLIENT_HINTS` the text holds
    (:func:`client_hints`), when known."""
    if hints is None:
        hints = client_hints(text.lower())
    found: list[Span] = []
    commands = _client_commands(text, hints)
    seg_end = -1  # the next segment end at or after the current command (searched again only when passed)
    for i, m in enumerate(commands):
        cmd = m.group("cmd").lower()
        if seg_end < m.end():
            seg_end = _segment_end(text, m.end())
        end = seg_end
        if i + 1 < len(commands):
            nxt = commands[i + 1].start()
            if text.count("'", m.end(), nxt) % 2 == 0 and text.count('"', m.end(), nxt) % 2 == 0:
                end = min(end, nxt)  # not a client's name inside a quoted argument (-p'Yy2RN7G}ZIP}9Y0')
        if cmd in _LOGIN_ONLY and not _LOGIN_RE.search(text, m.end(), end):
            continue  # ``docker run -p 8080:80`` publishes a port; ``docker login -p X`` passes a password
        for rule in _rules(cmd):
            special = _SPECIAL_RULES.get(rule)
            if special is not None:
                special(text, m.end(), end, found)
            elif rule == "securestring":
                pm = _CLIENT_OPTIONS[rule].match(text, m.end(), end)
                if pm is not None:
                    _password(text, pm.span(_value_group(pm)), found)
            else:
                _option_values(_CLIENT_OPTIONS[rule], text, m.end(), end, found)
    for hint in hints:
        finder = _EXTRA_FINDERS.get(hint)
        if finder is not None:
            finder(text, found)
    _outside_markers(text, found, spans)


def _config_pairs(text: str, low: str, found: list[Span]) -> None:
    """The credential names among the arguments of a tool's ``config`` command, each with the argument after it as
    its value (``npm config set _authToken X``, ``git config --global user.password X``, ``rclone config create r s3
    access_key_id A secret_access_key X``); a directive of :data:`_DIRECTIVES` too (``CONFIG SET requirepass X``).
    A value written without quotes must look generated (a word, a placeholder such as ``sk-...`` stays)."""
    # found in the lower-cased text, when its offsets are the text's (a case-sensitive pattern is searched faster)
    commands = _CONFIG_CMD_RE.finditer(low) if len(low) == len(text) else _ANY_CASE_CONFIG_CMD_RE.finditer(text)
    for m in commands:
        at = m.start()
        first = _FIRST_WORD_RE.match(text, m.end())
        if first is None or not _config_command(first.group()) or at and not (
                text[at - 1].isspace() or text[at - 1] in _COMMAND_START) or not _command_word(text, at):
            continue  # a subcommand after it; a tool's name before it (``npm config``), or redis's CONFIG SET alone
        words = _words(text, m.end(), _segment_end(text, m.end()))
        i = 0
        while i + 1 < len(words):
            (ns, ne), quoted = words[i]
            name = _CONFIG_NAME_RE.fullmatch(text, ns, ne) if not quoted else None
            level = 0
            if name is not None:
                bare_name = name.group("n")
                level = STRONG if bare_name.lower() in _DIRECTIVES else credential_name(bare_name)
            if not level:
                i += 1
                continue
            (vs, ve), value_quoted = words[i + 1]
            value = text[vs:ve]
            if value_quoted or (secret_looking(value) and not value.endswith(("...", "…"))):
                if ve > vs and not kept_value(value, bare_name, level, bare=not value_quoted):
                    found.append((vs, ve))
            i += 2


def _config_command(first: str) -> bool:
    """Whether ``first``, the word after ``config``, continues a ``config`` command: a subcommand (``set``, ``add``,
    ``create``, ``update``, ``password``, ``add-authtoken``), an option (``--global``, ``-g``) or a name that
    :func:`_config_pairs` reads (``user.password``); ``the config value is …`` is a sentence."""
    low = first.lower()
    return (low in _CONFIG_VERBS or low.startswith(("-", "add-", "set-"))
            or bool(_CONFIG_NAME_RE.fullmatch(first)) and (low in _DIRECTIVES or credential_name(first) > 0))


def _command_word(text: str, at: int) -> bool:
    """Whether the word at ``at`` is a command's subcommand: a tool's name (and at most two more words) stands
    between it and where a command starts (:data:`_COMMAND_START`; a newline that continues the command does not),
    or nothing does when it is redis's ``CONFIG SET``; ``config`` in a sentence (``the config token``) is none."""
    window = max(0, at - 120)
    end = at
    while True:
        start = max(text.rfind(c, window, end) for c in _COMMAND_START)
        if start < 0:
            break
        if text[start] == "`" and text[start + 1:start + 2] in ("\n", "\r") and text[start - 1:start] in (" ", "\t"):
            end = start  # PowerShell's continuation, no inline code's start
        elif text[start] == "\n" and _continued(text, start):
            end = start
        else:
            break
    start += 1
    if start == 0 and window:
        return False  # no command starts within reach
    if text.startswith("CONFIG", at) and not text[start:at].strip():
        return True
    return _TOOL_WORDS_RE.fullmatch(text, start, at) is not None


def _named_value(text: str, at: int, found: list[Span], whole_line: bool = False) -> None:
    """``NAME X`` at ``at``: ``X`` when ``NAME`` is a credential name and ``X`` a value it would hide; of
    ``Authorization "Bearer X"`` only ``X`` (the scheme word stays). ``whole_line``: an unquoted value is the rest of
    the line, as Dockerfile's ``ENV NAME X`` reads it (``ENV DB_PASSWORD PH-h&VQ5Fb/E}.O``: no shell there)."""
    pair = _KEYWORD_VALUE_RE.match(text, at)
    if pair is None:
        return
    name = pair.group("n")
    level = credential_name(name)
    group = _value_group(pair)
    vs, ve = pair.span(group)
    if whole_line and group == "v":
        line = _LINE_VALUE_RE.match(text, vs)
        ve = line.end("v") if line is not None else ve
    value = text[vs:ve]
    if group != "v" and " " in value.strip() and "authorization" in name.lower():
        scheme = value.lstrip().split(" ", 1)[0]
        if scheme.isalpha():
            vs = text.index(scheme, vs) + len(scheme)
            while vs < ve and text[vs] == " ":
                vs += 1
            value = text[vs:ve]
    if level and ve > vs and not kept_value(value, name, level):
        found.append((vs, ve))


def _line_keyword(text: str, m: re.Match[str], found: list[Span]) -> None:
    """The value a configuration line's keyword (:data:`_LINE_KEYWORDS`) introduces: a password, or a named value."""
    if m.group("n") is not None:
        at = m.end()
        while text[at:at + 1] in (" ", "\t"):
            at += 1
        _named_value(text, at, found)
        return
    value = _DIRECTIVE_VALUE_RE.match(text, m.end())
    if value is not None:
        group = _value_group(value)
        if not kept_value(value.group(group), "password", STRONG, bare=group == "v"):
            found.append(value.span(group))


_NOT_JSON_ESCAPE: Final = r"\\(?![nrt\"'\\/]|u[0-9A-Fa-f]{4})"
"""A backslash that is no escape of a JSON string: an unquoted argument's own (``\\n`` ends one)."""
_ARG_VALUE: Final = (r"(?:'(?P<sq>[^'\n]{1,256})'|\"(?P<dq>[^\"\n]{1,256})\""
                     r"|(?P<b>(?:[^\s'\"`;|&<>\\]|" + _NOT_JSON_ESCAPE + r"){1,256}))")
"""An argument: quoted, or bare up to a blank, a quote or a shell operator; a bare one ends at a JSON string's escape
too (``P\\nAdding user``: the escaped line break of a tool's output)."""
_POSITIONAL_RES: Final = (
    ("net", re.compile(r"(?<![\w-])(?i:net)[ \t]+(?i:user)[ \t]+(?:\"[^\"\n]{1,64}\"|[^\s/\"]{1,64})[ \t]+(?![/*])"
                       + _ARG_VALUE)),
    ("net", re.compile(r"(?<![\w-])(?i:net)[ \t]+(?i:use)[ \t]+(?:[A-Za-z]:[ \t]+|\*[ \t]+)?(?:\\\\|//)[^\s\"']{1,256}"
                       r"(?:[ \t]+/(?i:user|u):(?:\"[^\"\n]{1,128}\"|[^\s\"]{1,128}))?[ \t]+(?![/*])" + _ARG_VALUE)),
    ("rabbitmqctl", re.compile(r"(?<![\w-])rabbitmqctl[ \t]+(?:-[^\n]{0,64}?[ \t]+)?(?:add_user|change_password)"
                               r"[ \t]+\S{1,64}[ \t]+" + _ARG_VALUE)),
    ("wpa_passphrase", re.compile(r"(?<![\w-])wpa_passphrase[ \t]+(?:'[^'\n]{1,64}'|\"[^\"\n]{1,64}\"|\S{1,64})[ \t]+"
                                  + _ARG_VALUE)),
    ("nmcli", re.compile(r"(?<![\w-])nmcli[ \t][^\n|;&]{0,256}?[ \t](?:password|wifi-sec\.psk|"
                         r"802-11-wireless-security\.psk)[ \t]+" + _ARG_VALUE)),
    ("mysqladmin", re.compile(r"(?<![\w-])mysqladmin[ \t][^\n|;&]{0,256}?[ \t]password[ \t]+" + _ARG_VALUE)),
    ("chpasswd", re.compile(r"(?<![\w-])(?:echo|printf)[ \t]+(?:-[en][ \t]+)?(?P<q>[\"']?)[\w.@-]{1,64}:"
                            r"(?P<c>[^\s\"':]{1,256})(?P=q)[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd")),
    ("chpasswd", re.compile(r"(?<![\w-])chpasswd(?:[ \t]+-[A-Za-z]{1,2}(?:[ \t]+[A-Z0-9]{2,8})?)*[ \t]*<<<[ \t]*"
                            r"(?P<q>[\"']?)[\w.@-]{1,64}:(?P<c>[^\s\"':]{1,256})(?P=q)")),
    ("openssl", re.compile(r"(?<![\w-])openssl[ \t]+passwd(?:[ \t]+-(?:1|5|6|apr1|aixmd5|crypt|noverify|quiet|table"
                           r"|reverse)|[ \t]+-salt[ \t]+[^\s-][^\s]{0,63})*[ \t]+(?![-$])" + _ARG_VALUE)),
)
"""Commands that take a password by position: Windows' ``net user NAME P /add`` and ``net use \\\\srv\\share P
/user:NAME`` (or ``/user:NAME P``), ``rabbitmqctl add_user NAME P`` /
``change_password``, ``wpa_passphrase SSID P``, ``nmcli … password P`` (and ``wifi-sec.psk P``), ``mysqladmin …
password P``, ``echo "NAME:P" | chpasswd`` and ``chpasswd <<< 'NAME:P'``, ``openssl passwd -6 P`` (the password it
hashes); each sought only when its command's name is in the text."""


_BEFORE_COMMAND_RE: Final = re.compile(
    r"(?:^|[\n;&|>`\"'(“]|[$#>] |(?:[-*]|//|\]|:|\*\*|\b(?:DEBUG|INFO|WARN|WARNING|ERROR|TRACE))[ \t])[ \t]*"
    r"(?:sudo[ \t]+)?\Z")
"""What stands before a command (the line's start, a separator, a prompt, a quote, a list or comment mark, a log
line's stamp or level, a label: ``- net user …``, ``Ran: net user …``): ``net`` is a word otherwise."""


def find_positional_passwords(text: str, low: str, spans: list[Span]) -> None:
    """The password a command takes by position (:data:`_POSITIONAL_RES`), quoted or bare."""
    found: list[Span] = []
    for hint, pattern in _POSITIONAL_RES:
        if hint in low:
            for m in pattern.finditer(text):
                group = next(g for g in ("sq", "dq", "b", "c") if g in m.re.groupindex and m.group(g) is not None)
                value = m.group(group)
                if group == "b" and value.isalpha() and value.islower():
                    continue  # ``Use net user to list accounts``: a word of a sentence
                if hint == "net" and _BEFORE_COMMAND_RE.search(text, max(0, m.start() - 64), m.start()) is None:
                    continue
                _password(text, m.span(group), found)
    _outside_markers(text, found, spans)


_PRINTING_COMMAND: Final = (
    r"(?:sudo[ \t]+)?(?:"
    r"(?:cat|head|tail|type|Get-Content)[ \t]+(?:-\S{1,16}[ \t]+){0,4}"
    r"[\"']?(?P<path>[^\s|;&<>\"']{1,512})[\"']?"
    r"|(?:printenv[ \t]+|echo[ \t]+[\"']?\$\{?)(?P<var>[A-Za-z_][A-Za-z0-9_]{1,64})\}?[\"']?"
    r"|op[ \t]+read[ \t]+\S{1,512}|pass[ \t]+(?:show[ \t]+)?[\w./@-]{1,256}"
    r"|vault[ \t]+(?:kv[ \t]+get|read)[ \t][^\n|;&]{0,256}-field[= ][^\n|;&]{1,256}"
    r"|security[ \t]+find-(?:generic|internet)-password[ \t][^\n|;&]{0,256}-w\b[^\n|;&]{0,256}"
    r"|aws[ \t]+ecr[ \t]+get-login-password\b[^\n|;&]{0,256}|heroku[ \t]+auth:token\b[^\n|;&]{0,256}"
    r"|gh[ \t]+auth[ \t]+token\b[^\n|;&]{0,256}"
    r"|gcloud[ \t]+auth[ \t]+(?:application-default[ \t]+)?print-(?:access|identity)-token\b[^\n|;&]{0,256}"
    r"|az[ \t]+account[ \t]+get-access-token\b[^\n|;&]{0,256}|doppler[ \t]+secrets[ \t]+get[ \t][^\n|;&]{0,256}"
    r"|argocd[ \t]+admin[ \t]+initial-password\b[^\n|;&]{0,256}"
    r"|kubectl[ \t][^\n|]{0,512}\|[ \t]*base64[ \t]+(?:-d|--decode|-D)\b)")
"""A command that prints a credential: a file named for one (``cat /var/jenkins_home/secrets/initialAdminPassword``,
``cat ~/.vault-token``; :func:`_names_credential` decides), a variable (``echo $DB_PASSWORD``, ``printenv API_KEY``;
likewise), a secret store's or a cloud's token command (``op read op://…``, ``pass show …``, ``vault kv get
-field=password …``, ``security find-generic-password … -w``, ``aws ecr get-login-password``, ``gh auth token``,
``gcloud auth print-access-token``, ``doppler secrets get … --plain``, ``argocd admin initial-password``, ``kubectl … |
base64 -d``)."""
_PRINTED_VALUE: Final = r"[^\s:={}\[\]<>\"',;]{8,4096}+"
"""What such a command printed, when it is its whole output: one token (no blank, no ``:``, ``=``, bracket or quote:
a file of settings, ``/etc/passwd``'s lines, JSON are no such value)."""
_PRINTING_RE: Final = re.compile(
    _PRINTING_COMMAND + r"[ \t]*+\r?\n[ \t]*+(?P<v>" + _PRINTED_VALUE + r")[ \t]*+"
    r"(?=\r?\n[ \t]*+\r?(?:\n|\Z)|\r?\n[^\n]{0,128}[$#>%][ \t]|(?:\r?\n)?\Z|\r?\n?\"[,}\]])")
"""A command that prints a credential (:data:`_PRINTING_COMMAND`), then its whole output (:data:`_PRINTED_VALUE`) on
the next line: the text, a blank line, the next prompt or the end of the JSON string holding the output follows.
Matched where :data:`_COMMAND_WORD_RE` finds the command's word at its line's start or after a shell's prompt."""
_COMMAND_WORD_RE: Final = re.compile(
    r"(?<![\w.$-])(?:sudo[ \t]+)?(?:cat|head|tail|type|Get-Content|printenv|echo|op|pass|vault|security|aws|heroku|gh|"
    r"gcloud|az|doppler|argocd|kubectl)[ \t]")
_PROMPT_RE: Final = re.compile(r"[ \t]*+(?:[^\n$#>%]{0,128}[$#>%][ \t]+)?")
"""What may stand before a command on its line: blanks, or a shell's prompt (``$ ``, ``# ``, ``bob@box:~$ ``,
``PS C:\\> ``, the opening quote of a JSON string holding the output, ``{"output": "$ ``)."""
_PRINTING_HINTS: Final = ("cat ", "head ", "tail ", "type ", "get-content", "printenv", "echo ", "op read", "pass ",
                          "vault ", "security ", "get-login-password", "auth:token", "auth token", "print-access-token",
                          "print-identity-token", "get-access-token", "doppler", "base64", "initial-password")


_REDIS_PROMPT_AUTH_RE: Final = re.compile(
    r"(?:^|[\"'])[ \t]*(?:(?:redis|[\w.-]{1,253}:\d{2,5}(?:\[\d{1,2}\])?)>[ \t]*(?i:auth)"
    r"|(?:(?i:redis)[ \t]+)?(?P<bare>AUTH))"
    r"[ \t]+(?:\S{1,64}[ \t]+)?"
    r"(?P<p>(?:[^\s\"'\\]|" + _NOT_JSON_ESCAPE + r"){1,256})[ \t]*(?=$|\\[nr]|[\"'])", re.MULTILINE)
"""``redis-cli``'s own prompt then ``AUTH X`` / ``AUTH user X`` (``127.0.0.1:6379> AUTH X``), or the command in
capitals starting its line (``AUTH X``, ``Redis AUTH X``; SMTP's ``AUTH PLAIN X``, whose ``X`` encodes the user and the
password): the password."""


def find_printed_secrets(text: str, low: str, spans: list[Span]) -> None:
    """The value a command that prints a credential printed (:data:`_PRINTING_RE`): a file's or a variable's only
    when its name is a credential's (``cat README.md``, ``echo $HOME`` print none), the value when a password name
    would hide it (a word, a path, a placeholder stay); and a password typed at ``redis-cli``'s prompt
    (:data:`_REDIS_PROMPT_AUTH_RE`)."""
    found: list[Span] = []
    if "> auth" in low or ">auth" in low or "AUTH " in text or "AUTH\t" in text:
        for m in _REDIS_PROMPT_AUTH_RE.finditer(text):
            if m.group("bare") is None or not m.group("p").isupper():  # AUTH LOGIN, AUTH CRAM-MD5: SMTP's mechanism
                _password(text, m.span("p"), found)
    if "\n" not in text or not any(hint in low for hint in _PRINTING_HINTS):
        _outside_markers(text, found, spans)
        return
    for word in _COMMAND_WORD_RE.finditer(text):  # a command's word, then its line before it: a prompt or nothing
        at = word.start()
        line = text.rfind("\n", max(0, at - 160), at) + 1
        if (line == 0 and at > 160) or _PROMPT_RE.fullmatch(text, line, at) is None:
            continue
        printed = _PRINTING_RE.match(text, at)
        if printed is not None and _names_credential(printed):
            _password(text, printed.span("v"), found)
    _outside_markers(text, found, spans)


def _names_credential(m: re.Match[str]) -> bool:
    """Whether a match of :data:`_PRINTING_COMMAND` prints a credential: a secret store's or a cloud's command always,
    a file's reader (``cat``, ``head``, ``type`` …) or a variable's (``echo``, ``printenv``) when the file's or the
    variable's name is a credential's."""
    path, var = m.group("path"), m.group("var")
    if path is not None:
        return file_names_credential(path)
    return var is None or credential_name(var) == STRONG


@lru_cache(maxsize=4096)
def file_names_credential(path: str) -> bool:
    """Whether the file at ``path`` is named for a credential (``initialAdminPassword``, ``.vault-token``,
    ``api_key.txt``, ``db_password``; not ``README.md``, ``tokens.json``, ``id_rsa``)."""
    base = path.rstrip("/").rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lstrip(".")
    name = base.rsplit(".", 1)[0] if "." in base else base
    return bool(name) and credential_name(name) == STRONG


_COMMAND_RE: Final = re.compile(r"[ \t]*" + _PRINTING_COMMAND + r"[ \t]*\Z")


def command_prints_credential(command: str) -> bool:
    """Whether the shell command ``command`` (a tool call's argument) prints a credential as its whole output
    (:data:`_PRINTING_COMMAND`)."""
    m = _COMMAND_RE.match(command) if len(command) <= 1024 else None
    return m is not None and _names_credential(m)


_PRINTED_RE: Final = re.compile(
    r"[ \t]*+(?:\d{1,9}\|)?(?P<v>" + _PRINTED_VALUE + r")[ \t]*+\r?(?:\n(?:[ \t]*+\r?\n[\s\S]*)?)?\Z")
"""A tool's whole output as one token (a file reader's ``1|`` line number before it, a line break after it), or its
first line one token and a blank line after it, a note following (``argocd admin initial-password``: ``P``, a blank
line, ``This password must be only used for first time login…``)."""


def printed_token(output: str) -> tuple[int, int] | None:
    """The span of the one token ``output`` holds (:data:`_PRINTED_RE`) when a password's name would hide it (a word,
    a path, a placeholder stay), else ``None``."""
    m = _PRINTED_RE.match(output) if len(output) <= 4200 else None
    if m is None or kept_value(m.group("v"), "password", STRONG):
        return None
    return m.span("v")


def find_sql_identified(text: str, spans: list[Span]) -> None:
    """SQL's ``… IDENTIFIED BY 'X'`` (:data:`_SQL_IDENTIFIED_RE`): the password, quoted or bare."""
    found: list[Span] = []
    for m in _SQL_IDENTIFIED_RE.finditer(text):
        group = "q1" if m.group("q1") is not None else "q2" if m.group("q2") is not None else "b"
        if group == "b":  # a bare password only in a statement (``identified by their email`` is prose)
            line = max(text.rfind("\n", 0, m.start()) + 1, m.start() - 256)
            if _SQL_USER_RE.search(text, line, m.start()) is None:
                continue
        _password(text, m.span(group), found)
    _outside_markers(text, found, spans)


def find_keyword_pairs(text: str, spans: list[Span], low: str | None = None) -> None:
    """``.netrc`` passwords and the named values a command or a configuration line sets (``ENV NAME X``, ``setx NAME
    X``, ``set -x NAME X``, ``SetEnv NAME X``, ``proxy_set_header NAME X;``, ``npm config set NAME X``), the name
    judged as in ``NAME=X``; the directives that hold a password (``requirepass X``); SQL's ``PASSWORD 'X'``.
    ``low``: the text in lower case, when known."""
    if low is None:
        low = text.lower()
    found: list[Span] = []
    if "password" in low:
        if "machine" in low or "default" in low:
            for m in _NETRC_RE.finditer(text):
                _password(text, m.span(_value_group(m)), found)
        if "'" in text and len(low) == len(text):
            at = low.find("password")
            while at >= 0:
                sql = _SQL_PASSWORD_RE.match(text, at)
                if sql is not None and _SQL_BEFORE_RE.search(text, max(0, at - 80), at):
                    _password(text, sql.span("q1"), found)
                at = low.find("password", at + 8)
    if "config" in low:
        _config_pairs(text, low, found)
    first = _FIRST_LINE_KEYWORD_RE.match(text)
    for line in ([first] if first is not None else []) + list(_LINE_KEYWORD_RE.finditer(text)) + list(
            _STRING_KEYWORD_RE.finditer(text)):
        _line_keyword(text, line, found)
    for hint, pattern in _KEYWORD_RES if "set" in low or "ENV" in text else ():
        if hint not in text:
            continue
        for k in pattern.finditer(text):
            start = k.start()
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-"):
                continue
            _named_value(text, k.end(), found, whole_line=hint == "ENV")
    _outside_markers(text, found, spans)
