"""Passwords on command lines and in configuration lines (spec 01 OBS-58, OBS-59; spec 04 FMT-33a; scrubber review
s44: L4 line continuations, L6 client and configuration shapes, O2 markers read by the client rules).

* A command split over lines by continuations (a backslash for POSIX shells, a backtick for PowerShell, ``^`` for
  cmd.exe, at the end of a line) is one command: its password option is read across the lines, wherever the split
  falls; a newline without a continuation still ends the command.
* The clients and configuration forms of the review: ``npm config set _authToken X``, ``poetry config http-basic.repo
  user X``, ``twine upload -p X``, ``docker login -pX``, ``curl -u KEY:``, ``curl --oauth2-bearer X``, HTTPie's
  ``-a user:X``, ``redis-cli AUTH X``, ``unrar -pX``, ``aws ssm put-parameter --value X --type SecureString``,
  ``rclone config create … secret_access_key X``, redis.conf, slapd.conf, nginx and Apache directives, Oracle JDBC
  URLs, and secrets fed on standard input (``echo X | gh auth login --with-token``).
* The client and keyword rules never start or end a span inside a redaction marker (``curl -u <redacted:…>:`` in
  a text scrubbed once stays as it is).

Every secret is generated (letters and digits, never a word) and every check is exact: the output is the input with
only the secret's span (as the wrapper encodes it) replaced by its marker.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine import scrub_clients as sc
from hermes_pipeline.engine.scrub import MARKER_RE, find_spans, redaction_marker, scrub_text

from tests.engine._scrub_support import ALNUM, scaling_ratio, wrapper

SECRETS = st.text(alphabet=ALNUM, min_size=12, max_size=32).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s))
"""Generated passwords: letters of both cases and digits (never a word, never kept as a placeholder)."""

WRAPPERS = [("plain", 1), ("json", 1), ("json", 2), ("doc", 1), ("url", 1)]

COMMANDS: dict[str, tuple[str, ...]] = {
    "docker login": ("docker", "login", "-u", "me", "-p", "{s}", "registry.example.com"),
    "docker login glued": ("docker", "login", "-u", "me", "-p{s}", "ghcr.io"),
    "podman login": ("podman", "login", "--username", "me", "-p", "{s}", "quay.io"),
    "oc login": ("oc", "login", "-u", "developer", "-p", "{s}", "https://api.crc.testing:6443"),
    "sshpass": ("sshpass", "-p", "{s}", "ssh", "deploy@host"),
    "sshpass glued": ("sshpass", "-p{s}", "scp", "a", "host:b"),
    "mysql": ("mysql", "-u", "root", "-p{s}", "-h", "db", "app"),
    "curl user": ("curl", "https://x.example.com", "-u", "admin:{s}"),
    "curl key as user": ("curl", "-u", "{s}:", "https://api.stripe.com/v1/charges"),
    "curl proxy user": ("curl", "-U", "proxy:{s}", "https://x.example.com"),
    "curl oauth2": ("curl", "--oauth2-bearer", "{s}", "https://x.example.com"),
    "curl cert": ("curl", "-E", "client.pem:{s}", "https://x.example.com"),
    "httpie": ("http", "-a", "bob:{s}", "https://x.example.com"),
    "httpie bearer": ("https", "-A", "bearer", "-a", "{s}", "example.org"),
    "redis-cli -a": ("redis-cli", "-h", "cache", "-a", "{s}", "ping"),
    "redis-cli AUTH": ("redis-cli", "-h", "cache", "-p", "6379", "AUTH", "{s}"),
    "redis-cli AUTH user": ("redis-cli", "AUTH", "default", "{s}"),
    "twine": ("twine", "upload", "-u", "bob", "-p", "{s}", "dist/pkg-1.0.tar.gz"),
    "unrar": ("unrar", "x", "-p{s}", "archive.rar"),
    "rar header": ("rar", "a", "-hp{s}", "archive.rar", "dir"),
    "7z": ("7z", "x", "-p{s}", "archive.7z"),
    "ldapsearch": ("ldapsearch", "-x", "-D", "cn=admin,dc=x", "-w", "{s}", "-b", "dc=x"),
    "ldappasswd": ("ldappasswd", "-x", "-D", "cn=admin,dc=x", "-W", "-s", "{s}", "uid=bob,dc=x"),
    "smbclient": ("smbclient", "//host/share", "-U", "bob%{s}"),
    "rpcclient": ("rpcclient", "-U", "bob%{s}", "10.0.0.5"),
    "lftp": ("lftp", "-u", "bob,{s}", "sftp://files.example.com"),
    "keytool": ("keytool", "-list", "-keystore", "app.jks", "-storepass", "{s}"),
    "sqlcmd": ("sqlcmd", "-S", "db", "-U", "sa", "-P", "{s}"),
    "cqlsh": ("cqlsh", "-u", "cassandra", "-p", "{s}", "node1"),
    "mosquitto": ("mosquitto_pub", "-h", "broker", "-u", "dev", "-P", "{s}", "-t", "t", "-m", "on"),
    "htpasswd": ("htpasswd", "-b", ".htpasswd", "bob", "{s}"),
    "htpasswd stdout": ("htpasswd", "-nbB", "bob", "{s}"),
    "securestring": ("ConvertTo-SecureString", "-String", "{s}", "-AsPlainText", "-Force"),
    "openssl": ("openssl", "enc", "-aes-256-cbc", "-pass", "pass:{s}", "-in", "f"),
    "ssm": ("aws", "ssm", "put-parameter", "--name", "/db/pw", "--value", "{s}", "--type", "SecureString"),
    "keyvault": ("az", "keyvault", "secret", "set", "--vault-name", "v", "--name", "db", "--value", "{s}"),
    "gh secret": ("gh", "secret", "set", "API_KEY", "--body", "{s}"),
    "npm config": ("npm", "config", "set", "_authToken", "{s}"),
    "npm scoped": ("npm", "config", "set", "//registry.npmjs.org/:_authToken", "{s}"),
    "yarn config": ("yarn", "config", "set", "npmAuthToken", "{s}"),
    "git config": ("git", "config", "--global", "user.password", "{s}"),
    "aws configure": ("aws", "configure", "set", "aws_secret_access_key", "{s}"),
    "ngrok": ("ngrok", "config", "add-authtoken", "{s}"),
    "rclone": ("rclone", "config", "create", "backup", "s3", "provider", "AWS", "secret_access_key", "{s}"),
    "poetry http-basic": ("poetry", "config", "http-basic.private", "bob", "{s}"),
    "poetry token": ("poetry", "config", "pypi-token.testpypi", "{s}"),
    "composer oauth": ("composer", "config", "--global", "github-oauth.github.com", "{s}"),
    "sqlplus": ("sqlplus", "-s", "scott/{s}@//db.example.com:1521/orcl"),
}
"""Each command as its arguments, ``{s}`` where the secret goes."""

CONTINUATIONS = (" \\\n", " \\\n    ", "\t\\\r\n  ", " `\n    ", " ^\n  ")
"""Line continuations of POSIX shells (``\\``, also before ``\\r\\n``), PowerShell (a backtick) and cmd.exe (``^``)."""


def _check(text: str, secret: str) -> None:
    """``text`` (holding ``secret`` once) in every wrapper: exactly the secret's encoded span becomes its marker."""
    before, after = text.split(secret)
    for kind, level in WRAPPERS:
        encode, left, right = wrapper(kind, level)
        out = scrub_text(left + encode(before) + encode(secret) + encode(after) + right)
        assert out == left + encode(before) + redaction_marker(secret) + encode(after) + right, (kind, level, out)


@pytest.mark.parametrize("name", sorted(COMMANDS))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.function_scoped_fixture])
@given(secret=SECRETS)
def test_obs58_l6_each_command_loses_exactly_its_password(name: str, secret: str) -> None:
    """OBS-58 / OBS-59 (review L6): each client and configuration command, on one line, plain, JSON-escaped and
    percent-encoded: only the password goes."""
    _check(" ".join(COMMANDS[name]).replace("{s}", secret), secret)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(COMMANDS)), secret=SECRETS, data=st.data())
def test_obs58_l4_a_command_split_by_continuations_anywhere_loses_exactly_its_password(
        name: str, secret: str, data: st.DataObject) -> None:
    """OBS-58 (review L4): a command split over lines by continuations at any of its gaps (any mix of the POSIX,
    PowerShell and cmd.exe forms) is read as one command: only the password goes."""
    args = [arg.replace("{s}", secret) for arg in COMMANDS[name]]
    gaps = data.draw(st.lists(st.sampled_from((" ",) + CONTINUATIONS), min_size=len(args) - 1,
                              max_size=len(args) - 1))
    text = args[0] + "".join(gap + arg for gap, arg in zip(gaps, args[1:]))
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret)), text
    encode, left, right = wrapper("json", 1)  # the same command inside a tool's JSON arguments
    wrapped = left + encode(text) + right
    assert scrub_text(wrapped) == left + encode(text).replace(secret, redaction_marker(secret)) + right


@pytest.mark.parametrize("text", [
    "docker login \\\n  -u me \\\n  -p {s} registry.example.com",
    "sshpass \\\n  -p {s} ssh deploy@host",
    "curl https://x \\\n  -u \\\n  admin:{s}",
    "docker login `\n  -u me `\n  -p {s} registry.example.com",
    "mysql -u root ^\n  -p{s} app",
    '["sshpass",\n  "-p",\n  "{s}",\n  "ssh", "host"]',
])
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=SECRETS)
def test_obs58_l4_the_review_continuations(text: str, secret: str) -> None:
    """OBS-58 (review L4): the review's split commands, and an argument list written one item a line."""
    _check(text.replace("{s}", secret), secret)


@pytest.mark.parametrize("text", [
    "requirepass {s}",
    "  12|requirepass \"{s}\"",
    "masterauth {s}",
    "rootpw {s}",
    "bindpw {s}",
    "sentinel auth-pass mymaster {s}",
    "user admin insecure-password {s}",
    "port 6379\nrequirepass {s}\nappendonly yes",
    "CONFIG SET requirepass {s}",
    "redis-cli CONFIG SET masterauth {s}",
    "    proxy_set_header X-Api-Key {s};",
    '    proxy_set_header Authorization "Bearer {s}";',
    "fastcgi_param DB_PASSWORD {s};",
    "SetEnv API_KEY {s}",
    'RequestHeader set X-Auth-Token "{s}"',
    "db.example.com:5432:app:app:{s}",
    "*:*:*:postgres:{s}",
    "  3|localhost:5432:*:replicator:{s}",
    "jdbc:oracle:thin:scott/{s}@//db.example.com:1521/orcl",
    "CREATE USER app WITH PASSWORD '{s}';",
    "ALTER ROLE app WITH LOGIN PASSWORD '{s}'",
    "echo {s} | gh auth login --with-token",
    "echo -n '{s}' | docker login -u me --password-stdin ghcr.io",
    "gh auth login --with-token <<< {s}",
    "echo {s} | sudo -S systemctl restart app",
])
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=SECRETS)
def test_obs58_l6_configuration_lines_and_fed_secrets(text: str, secret: str) -> None:
    """OBS-58 / OBS-59 (review L6): configuration directives (redis, slapd, LDAP clients, HAProxy, nginx, Apache),
    ``.pgpass`` lines (numbered as a file viewer shows them too), Oracle JDBC URLs, SQL passwords and secrets fed on
    standard input: only the secret goes, in every wrapper."""
    _check(text.replace("{s}", secret), secret)


@pytest.mark.parametrize("text", [
    "docker run -p 8080:80 nginx",
    "docker run -p8080:80 nginx && docker ps",
    "curl -u admin: https://x.example.com",
    "curl --cert C:\\certs\\client.pem https://x.example.com",
    "http -a bob https://x.example.com",
    "see http://x.example.com -a foo:Xk9mQ2vLp7Rt",
    "redis-cli -h cache -p 6379 ping",
    "ldapsearch -x -s base -a always -b dc=x",
    "sshpass -p\nXk9mQ2vLp7Rt",
    "docker login -u me\n-p Xk9mQ2vLp7Rt",
    "aws ssm put-parameter --name /app/host --value db.example.com --type String",
    "echo hello | grep h",
    "htpasswd -c .htpasswd bob",
    "git config --global user.name Bob",
    "git config credential.helper store",
    "hermes-pipeline config set observability.audit.enabled true",
    "the config token stored in vault",
    "    when the config value is truthy.  Pass *config_overrides* (from",
    "Configure a server password (PASS command)?",
    "hermes config set OPENROUTER_API_KEY sk-or-v1-...",
    "proxy_set_header Host $host;",
    "proxy_set_header X-Api-Key $api_key;",
    "SetEnv APP_ENV production",
    "requirepass changeme",
    "requirepass ${REDIS_PASSWORD}",
    "10:20:30:40:50",
    "localhost:5432:app:app:*",
    "app.py:12:5:error:unused",
    "root:x:0:0:root:/root:/bin/bash",
    "CREATE USER app WITH PASSWORD :'pw';",
])
def test_obs59_command_and_configuration_look_alikes_stay(text: str) -> None:
    """OBS-59: what only looks like those forms stays whole: a port after ``-p`` outside ``login``, an empty
    password with a plain user, HTTPie's prompt, a URL before ``-a``, ``-s`` and ``-a`` of ``ldapsearch`` (scope,
    alias), a newline without a continuation, a plain parameter, ``config`` in a sentence, settings and
    placeholders, colon-separated numbers, ``/etc/passwd`` lines."""
    assert scrub_text(text) == text


@pytest.mark.parametrize("text, secret", [
    ("curl -u sk_live_" + "Ab3dEf6hIj" * 3 + ": https://api.stripe.com/v1/charges", "sk_live_" + "Ab3dEf6hIj" * 3),
    ("curl -u AKIAIOSFODNN7ABCDEF2:Xk9mQ2vLp7Rtabcd https://x", "AKIAIOSFODNN7ABCDEF2"),
    ("curl --user ghp_" + "Ab3dEf6hIj" * 3 + "abcdef:x-oauth-basic https://api.github.com",
     "ghp_" + "Ab3dEf6hIj" * 3 + "abcdef"),
])
def test_obs59_o2_a_key_written_as_the_user_becomes_one_whole_marker(text: str, secret: str) -> None:
    """OBS-59 (review O2): a vendor key written as ``-u``'s user is one whole marker after the scrub (the rescan
    reads no marker as a user), and scrubbing again changes nothing."""
    out = scrub_text(text)
    assert secret not in out
    assert "<redacted" not in MARKER_RE.sub("", out), out
    assert redaction_marker(secret) in out
    assert scrub_text(out) == out


_PIECES = ["curl -u ", "curl --user ", "-u ", "-U ", ":", "@", "%", "/", " ", "'", '"', ",", "\n", " \\\n ", "-p",
           "-p ", "sshpass -p ", "docker login -u me -p ", "smbclient //h/s -U ", "lftp -u bob,", "http -a ",
           "npm config set _authToken ", "requirepass ", "SetEnv API_KEY ", "redis-cli AUTH ", "echo ",
           " | gh auth login --with-token", "sqlplus scott/", "x:5432:db:u:", "<redacted:0123abcd>",
           "<redacted:89abcdef>", "<redacted>", "Xk9mQ2vLp7Rt", "ghp_" + "Ab3dEf6hIj" * 3 + "abcdef"]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=10).map("".join))
def test_obs59_o2_client_and_keyword_rules_never_cut_a_marker(text: str) -> None:
    """OBS-59 (review O2): over texts mixing redaction markers with the clients' options and the keyword forms, no
    span of the client or keyword rules starts or ends inside a marker."""
    spans: list[tuple[int, int]] = []
    sc.find_client_passwords(text, spans)
    sc.find_keyword_pairs(text, spans)
    markers = [m.span() for m in MARKER_RE.finditer(text)]
    for start, end in spans:
        assert not any(ms < start < me or ms < end < me for ms, me in markers), (text, text[start:end])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(_PIECES + ["\\", "`", "^", "config", " set ", "login", "SecureString",
                                                "put-parameter ", "--value ", "secret set K --body ", "<<< ",
                                                "http-basic.r ", "jdbc:oracle:thin:", "AUTH ", "PASSWORD '",
                                                "Xk9mQ2vLp7Rt'", "CONFIG SET ", "-----", "x-api-key"]),
                         max_size=12).map("".join))
def test_obs58_new_forms_keep_the_prechecks_exact(text: str) -> None:
    """OBS-58: the pre-checks in front of the client and keyword rules (the hints of :func:`client_hints`, the
    name hints) never skip a text these rules find something in: the gated spans equal the ungated ones."""
    assert find_spans(text) == find_spans(text, gated=False)


def test_obs58_every_client_hint_names_a_client_or_a_form() -> None:
    """OBS-58: each hint of :data:`CLIENT_HINTS` names a client or one of the forms read beside the clients, and
    every new client reads a password option."""
    for hint in sc.CLIENT_HINTS:
        assert sc._STARTS_BY_HINT[hint] or hint in sc._EXTRA_HINTS, hint
    for name in ("twine", "unrar", "rar", "http", "https", "xh", "lftp", "htpasswd", "cqlsh", "oc"):
        assert sc._rules(name), name


@pytest.mark.parametrize(("prefix", "unit", "suffix"), [
    ("", "poetry config http-basic.a b Xk9mQ2vLp7Rt ", ""),
    ("", "aws ssm put-parameter --value Xk9mQ2vLp7Rt --type SecureString ", ""),
    ("gh ", "secret set K --body Xk9mQ2vLp7Rt ", ""),
    ("redis-cli ", "AUTH a Xk9mQ2vLp7Rt ", ""),
    ("gh auth login --with-token", " a <<< Xk9mQ2vLp7Rt", ""),
    ("", "echo Xk9mQ2vLp7Rt ", "| sudo -S x"),
    ("docker login -u me -p", " \\\n", " Xk9mQ2vLp7Rt"),
    ("npm ", "config set _authToken Xk9mQ2vLp7Rt ", ""),
    ("{", '"h.x:5432:d:u:Xk9mQ2vLp7Rt", ', "}"),
    ("", "\n  12|requirepass Xk9mQ2vLp7Rt", ""),
])
def test_obs58_command_and_configuration_rules_are_linear(prefix: str, unit: str, suffix: str) -> None:
    """OBS-58: the command and configuration rules read each command once: eight times the input costs about eight
    times the CPU (a rule that read every command to the end of the text would cost 64 times); a ratio of CPU times
    in the same run, never a wall-clock bound."""
    count = max(1, 25_000 // len(unit))
    ratio = scaling_ratio(scrub_text, unit, count, prefix=prefix, suffix=suffix)
    assert ratio < 24, f"{prefix!r} + {unit!r} x {count}: 8x the input cost {ratio:.1f}x the CPU time"


# --- vault login / cargo login (OBS-58, OBS-59) -------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(token=st.text(ALNUM, min_size=12, max_size=40).filter(lambda t: any(c.isdigit() for c in t)
                                                             and any(c.isalpha() for c in t)),
       tool=st.sampled_from(["vault", "cargo"]), prefix=st.sampled_from(["", "hvs.", "s.", "cio"]),
       options=st.sampled_from(["", " -address=https://vault.internal:8200", " --registry crates-io", " -no-print"]),
       quote=st.sampled_from(["", "'", '"']), after=st.sampled_from(["", "\n", " && echo ok", "; ls"]))
def test_property_obs58_59_a_login_commands_token_is_hidden_alone(token: str, tool: str, prefix: str, options: str,
                                                                   quote: str, after: str) -> None:
    """``vault login TOKEN`` / ``cargo login TOKEN``: the positional token after any options loses its span only."""
    secret = prefix + token
    text = f"{tool} login{options} {quote}{secret}{quote}{after}"
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", [
    "vault login -method=userpass username=bob",
    "vault login $VAULT_TOKEN",
    "vault login <token>",
    "cargo login",
    "Run cargo login with your crates.io token",
    "vault login -method=oidc",
])
def test_obs55_a_login_command_without_a_token_stays(text: str) -> None:
    assert scrub_text(text) == text


_WORDS = ("horse", "lamp", "tiger", "battery", "correct", "river", "purple", "monkey", "staple", "orbit")


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(("api_key", "private_key", "API_KEY", "db.password", "SECRET_KEY", "auth_token")),
       words=st.lists(st.sampled_from(_WORDS), min_size=3, max_size=5), digits=st.integers(10, 99),
       lead=st.sampled_from(("", "java ", "JAVA_OPTS=\"", "mvn test ")))
def test_property_obs58_a_java_system_property_is_named_after_its_dash_d(name: str, words: list[str], digits: int,
                                                                       lead: str) -> None:
    """OBS-58: ``-Dapi_key=P`` names ``api_key`` (not ``Dapi_key``, a weak key glued to a word): a passphrase of words
    goes as it does after ``api_key=``."""
    secret = "-".join(words) + str(digits)
    text = f"{lead}-D{name}={secret}" + ('"' if lead.endswith('"') else " -jar app.jar")
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", ["mvn -DskipTests=true", "-Dkey=abc", "gcc -DDEBUG=1 x.c", "-Dtoken.count=5"])
def test_obs55_a_system_property_that_is_no_credential_stays(text: str) -> None:
    assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(secret=SECRETS, name=st.sampled_from(("PASSWORD", "GH_TOKEN", "API_KEY", "DB_PASSWORD")),
       form=st.sampled_from(('export {n}="$(echo {s})"', "{n}=$(echo {s})", "{n}=$(echo -n '{s}' | base64)",
                             "{n}=$(printf %s {s} | base64)", 'export {n}="$(printf \'%s\' "{s}")"',
                             "{n}=`echo {s}`")))
def test_property_obs58_a_literal_printed_by_a_command_substitution_is_the_value(secret: str, name: str,
                                                                                  form: str) -> None:
    """OBS-58: ``$(echo P)``, ``$(printf %s P | base64)`` under a credential's name: the literal the command prints
    is the value and goes alone; the command stays (it was kept whole, as ``$(cat pw)`` is, or hidden with it)."""
    text = form.format(n=name, s=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", [
    'export PASSWORD="$(cat /run/secrets/pw)"', "export PASSWORD=$(echo $DB_PASSWORD)",
    "TOKEN=$(printf %s \"$RAW\" | base64)", "export PASSWORD=$(vault kv get -field=password secret/db)",
    "token: ${TOKENS[PROD]}", "password: ${SECRETS[DB]}", "export API_KEY=${KEYS[$i]}", "echo ${TOKENS[@]}"])
def test_obs59_a_command_printing_a_variable_and_a_bash_arrays_element_stay(text: str) -> None:
    """OBS-59: what prints a variable or reads a file, and a bash array's element (``${TOKENS[prod]}``), name where
    the value comes from; nothing is hidden."""
    assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(secret=SECRETS, form=st.sampled_from((
    "printf '%s' '{s}' | wrangler secret put API_KEY", "echo \"{s}\" | gh secret set GH_PAT",
    "echo -n {s} | docker secret create db_password -", "vercel env add API_KEY production <<< \"{s}\"",
    "echo '{s}' | npx wrangler secret put TOKEN --env prod", "echo {s} | gpg --batch --passphrase-fd 0 -d f.gpg",
    "echo '{s}' > ~/.config/app/token", "printf '%s' '{s}' > .pgpass", "echo {s} >> ~/.config/gh/token",
    "echo -n \"{s}\" > /run/secrets/db_password", "echo {s} > api_key.txt")))
def test_property_obs58_a_value_fed_to_a_secrets_store_or_written_to_a_credentials_file(secret: str,
                                                                                         form: str) -> None:
    """OBS-58: a value piped or fed (``<<<``) to a command that stores a secret from its standard input (``wrangler
    secret put``, ``gh secret set``, ``docker secret create … -``, ``vercel env add``, ``gpg --passphrase-fd 0``),
    or echoed into a file named for a credential (``> ~/.config/app/token``, ``> .pgpass``): the value goes alone,
    in a text without any option too."""
    text = form.format(s=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", [
    "echo 'hello world' > notes.txt", "echo done > /tmp/token_count", "echo $TOKEN > ~/.token",
    "echo 'Build ok' | tee build.log", "printf '%s\\n' \"$KEY\" | gh secret set K",
    "echo 'secret santa list' > gifts.txt", "echo 3 > /proc/sys/vm/drop_caches"])
def test_obs59_what_is_echoed_elsewhere_or_is_a_variable_stays(text: str) -> None:
    """OBS-59: a word, a variable, a file not named for a credential: nothing is hidden."""
    assert scrub_text(text) == text


@pytest.mark.parametrize("form", ["user bob / pass {s}", "login admin / pass {s}", "username alice / pass {s}."])
def test_obs58_pass_after_a_user_and_a_slash(form: str) -> None:
    secret = "Xk9mQ2vLp7Zr"
    text = form.format(s=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))
