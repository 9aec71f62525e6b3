"""Credentials in a terminal's output as a tool result carries it (OBS-55, OBS-58, OBS-59; stop 58 soak).

A soak of tool results (a command and what it printed, plain and as the JSON string of a ``terminal`` result) found:

* a command that prints a credential, then the value it printed alone on the next line: a file named for one
  (``cat /var/jenkins_home/secrets/initialAdminPassword``, ``cat ~/.vault-token``), a variable (``echo
  $DB_PASSWORD``), a secret store's or a cloud's token command (``op read``, ``aws ecr get-login-password``,
  ``kubectl … | base64 -d``);
* a label ending ``is:`` with its value a line or two below (``Your new API key is:\\n\\n    P``);
* ``AUTH P`` at ``redis-cli``'s own prompt (``127.0.0.1:6379> AUTH P``);
* a password given by position (``rabbitmqctl add_user admin P``, ``mysqladmin … password P``) ran over the escaped
  line break of a JSON string into the next line (``P\\nAdding user`` was cut whole).

Each value loses exactly its span, plain and inside the JSON string; a file that is no credential's, a variable
that is none, a file of settings, ``/etc/passwd``'s lines and a placeholder stay; so does what a table says about a
token (``token_accessor``, ``token_policies``)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import hide_printed_in_request, hide_printed_output, redaction_marker, scrub_text

from ._scrub_support import assert_only_secret_hidden, note_password

_OUTPUTS = (
    "$ cat /var/jenkins_home/secrets/initialAdminPassword\n{P}\n", "bob@box:~$ cat ~/.vault-token\n{P}\nbob@box:~$ ",
    "$ echo $DB_PASSWORD\n{P}", "$ printenv API_TOKEN\n{P}\n", "$ op read op://vault/db/password\n{P}\n",
    "$ aws ecr get-login-password --region us-east-1\n{P}\n",
    '$ kubectl get secret db -o jsonpath="{{.data.password}}" | base64 -d\n{P}\n',
    "$ security find-generic-password -s db -w\n{P}\n", "PS C:\\> Get-Content .\\api_key.txt\n{P}\n",
    "Your new API key is:\n\n    {P}\n\nIt will not be shown again.", "Here is your token:\n{P}\n",
    "Your token is as follows:\n\n{P}", "127.0.0.1:6379> AUTH {P}\nOK", "127.0.0.1:6379[1]> auth default {P}\nOK",
    "rabbitmqctl add_user admin {P}\nAdding user \"admin\" ...", "mysqladmin -u root password {P}\ndone",
    "wpa_passphrase HomeNet {P}\nnetwork={{", "nmcli dev wifi connect HomeNet password {P}\nDevice activated",
    # stop 59: the command in capitals with no prompt; Jenkins' log (a label naming the password, then its purpose)
    "AUTH {P}\nOK", "Redis AUTH {P}\nOK", "AUTH PLAIN {P}\n235 2.7.0 Authentication successful",
    "Jenkins initial setup is required.\nPlease use the following password to proceed to installation:\n\n{P}\n\n"
    "This may also be found at: /var/jenkins_home/secrets/initialAdminPassword\n",
    "Use this token to log in:\n  {P}\n",
    "\u2139\ufe0f  Password for the elastic user (reset with `bin/elasticsearch-reset-password -u elastic`):\n  {P}\n\n"
    "\u2139\ufe0f  HTTP CA certificate SHA-256 fingerprint:\n  5e8a2b1c9d7f4e3a6b5c8d2e1f9a7b3c5e8a2b1c9d7f4e3a6b5c8d2e1f9a7b3c\n",
    "\u2022 Copy the following enrollment token and paste it into Kibana in your browser (valid for the next 30 "
    "minutes):\n  {P}\n",
    "$ argocd admin initial-password -n argocd\n{P}\n\n This password must be only used for first time login.",
)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_OUTPUTS))
def test_property_obs58_59_a_credential_a_terminal_printed_loses_exactly_its_span(seed: int, form: str) -> None:
    """OBS-58 / OBS-59: the printed or typed value goes, the command, the prompt and the next lines stay; the same in
    the JSON string of a ``terminal`` tool result."""
    secret = note_password(random.Random(seed), symbols="#^*-_.+", share=0.3)
    text = form.format(P=secret)
    assert_only_secret_hidden(text, secret)
    encoded = json.dumps({"output": text, "exit_code": 0})
    assert scrub_text(encoded) == json.dumps({"output": text.replace(secret, redaction_marker(secret)),
                                              "exit_code": 0})


@pytest.mark.parametrize("text", [
    "$ cat README.md\nHello_world_123\n", "$ echo $HOME\n/home/bob\n", "$ cat ~/.aws/credentials\n[default]\nx = 1",
    "$ cat /etc/passwd\nroot:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
    "$ cat token\nfirst_line_of_many\nsecond_line_here", "$ echo $API_KEY\n<your-key>\n", "$ cat api_key\n--------\n",
    "$ cat token.txt\n$(cat other)\n", "My favourite thing is:\n\nbananas_and_more", "> auth token",
    "$ cat /run/secrets/db_password\n/run/secrets/other\n", "AUTH LOGIN\n334 VXNlcm5hbWU6", "AUTH CRAM-MD5\n",
    "The AUTH header is set", "Use the following password for the wiki:\nsee the vault",
    "Please use the following token to proceed:\n\nTIMEOUT_SECONDS=184", "Password for the admin account:\n  see 1Password",
    "HTTP CA certificate SHA-256 fingerprint:\n  5e8a2b1c9d7f4e3a6b5c8d2e1f9a7b3c5e8a2b1c9d7f4e3a6b5c8d2e1f9a7b3c\n",
])
def test_obs55_other_files_variables_settings_and_placeholders_stay(text: str) -> None:
    """OBS-55: what a command printed stays unless the command prints a credential and its output is one token."""
    assert scrub_text(text) == text


def test_obs58_59_a_vault_token_table_loses_the_token_and_keeps_its_accessor() -> None:
    """OBS-58 / OBS-59: ``vault token lookup``'s table: the token goes; its accessor, duration, renewal flag and
    policies are about the token (no secret) and stay."""
    token = "hvs.gbzbLvomDKGqOWMyQ5VnHLBO"
    text = ("Key                  Value\n---                  -----\ntoken                " + token
            + "\ntoken_accessor       8609694a-cdbc-db9b-d345-e782dbb562ed\ntoken_duration       768h"
            "\ntoken_renewable      true\ntoken_policies       [default]")
    assert_only_secret_hidden(text, token)
    assert_only_secret_hidden(text.replace("8609694a-cdbc-db9b-d345-e782dbb562ed", "abcd1234"), token)


@pytest.mark.parametrize(("arguments", "result", "secret"), [
    ({"command": "cat ~/.vault-token"}, '{"output": "Xk9mQ2v\\\\Lp7Rt\\n", "exit_code": 0}', "Xk9mQ2v\\Lp7Rt"),
    ({"command": "echo $API_TOKEN"}, "Qv8Lm2Zt9wXk4Rp7", "Qv8Lm2Zt9wXk4Rp7"),
    ({"path": "secrets/db_password"}, '{"content": "1|Qv8Lm2Zt9wXk4Rp7", "path": "x"}', "Qv8Lm2Zt9wXk4Rp7"),
    ({"command": "op read op://v/i/f"}, '{"output": "Qv8Lm2Zt9wXk4Rp7", "note": "Qv8Lm2Zt9wXk4Rp7"}', "Qv8Lm2Zt9wXk4Rp7"),
    ({"command": "argocd admin initial-password -n argocd"},
     '{"output": "Qv8Lm2Zt9wXk4Rp7\\n\\n This password must be only used for first time login.\\n", "exit_code": 0}',
     "Qv8Lm2Zt9wXk4Rp7"),
])
def test_obs58_59_a_printed_credential_is_hidden_wherever_the_result_holds_it(
        arguments: dict[str, str], result: str, secret: str) -> None:
    """OBS-58 / OBS-59: the token, JSON-escaped as the result holds it, becomes its marker, every time it occurs."""
    written = json.dumps(secret)[1:-1] if result.startswith("{") else secret
    assert hide_printed_output(arguments, result) == result.replace(written, redaction_marker(secret))


@pytest.mark.parametrize(("arguments", "result"), [
    ({"command": "cat ~/.vault-token"}, '{"output": "two words\\n"}'), ({"command": "ls"}, "Qv8Lm2Zt9wXk4Rp7"),
    ({"path": "notes.txt"}, '{"content": "1|Qv8Lm2Zt9wXk4Rp7"}'), ({"command": "cat token"}, '{"output": "<token>"}'),
    ({"command": "cat ~/.vault-token"}, "{not json"), (["cat token"], "Qv8Lm2Zt9wXk4Rp7"),
    ({"command": "cat ~/.vault-token"}, '{"output": "1|2|3\\n4"}'),
])
def test_obs55_other_calls_and_outputs_are_returned_as_they_are(arguments: object, result: str) -> None:
    """OBS-55: an output of several words or lines, a command or a file that prints no credential, a placeholder,
    arguments that are no mapping: the result itself."""
    assert hide_printed_output(arguments, result) is result


@settings(max_examples=200, deadline=None)
@given(history=st.lists(st.dictionaries(
    st.sampled_from(["role", "type", "tool_calls", "tool_call_id", "call_id", "content", "output", "arguments"]),
    st.recursive(st.none() | st.integers() | st.text(max_size=20) | st.sampled_from(
        ["assistant", "tool", "user", "function_call", "function_call_output", "tool_use", "tool_result",
         '{"command": "cat token"}', "Qv8Lm2Zt9wXk4Rp7"]),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
            ["id", "type", "function", "name", "arguments", "input", "content", "tool_use_id"]), inner, max_size=3),
        max_leaves=8), max_size=5), max_size=6))
def test_property_obs60_any_history_is_read_without_raising(history: list[dict[str, object]]) -> None:
    """OBS-60: whatever shape a request's history has, reading it with the calls never raises; a history it changes
    is a new list, the request given is never changed in place."""
    request = {"model": "m", "messages": history}
    before = json.dumps(request, default=str)
    hidden = hide_printed_in_request(request)
    assert json.dumps(request, default=str) == before
    assert hidden is request or hidden["messages"] is not history

