"""Connection strings, a scheme's credential added to its string, ``pass`` after a comment mark (OBS-55, OBS-58,
OBS-59; stop 58 soak of configuration and code forms).

The soak found:

* a connection string under its own name (``connectionString="Server=db;User Id=sa;Password=P"``, ADO.NET's
  ``ConnectionStrings``, an Azure storage or Service Bus string) hidden whole, server, user and database with the
  password: a redaction must take the password's span and nothing else (unquoted, ``Server=db;User`` was cut as if
  it were a value);
* ``"Basic " + "P"``: the credential written as the string added to its scheme's kept its value;
* ``# pass P`` and ``// pass P``: ``pass`` where a comment starts begins a clause as after a colon does.

Each planted value loses exactly its span, plain and inside a JSON string; the other pairs, a variable, a placeholder
and a word stay."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

from ._scrub_support import assert_only_secret_hidden, note_password

_CONNECTIONS = (
    '<add name="Default" connectionString="Server=db;User Id=sa;Password={P};" />',
    'connectionString: "Driver={{ODBC Driver 18}};Server=db;Uid=sa;Pwd={P};"',
    '"ConnectionStrings": {{"Default": "Host=db;Database=app;Username=app;Password={P}"}}',
    'connection_string = "Data Source=db;Initial Catalog=app;User ID=sa;Password={P}"',
    "ConnectionStrings__Default=Host=db;Username=app;Password={P}",
    "connectionString=Server=db;User Id=sa;Password={P};",
    '"StorageConnectionString": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={P};'
    'EndpointSuffix=core.windows.net"',
)
_CODE = (
    'Authorization = "Basic " + "{P}"', "headers['Authorization'] = 'Bearer ' + '{P}'",
    "auth_basic_user_file /etc/nginx/.htpasswd; # pass {P}", "connect(host);  // pass {P}",
)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_CONNECTIONS + _CODE))
def test_property_obs58_59_the_password_of_a_connection_string_or_a_code_form_loses_exactly_its_span(
        seed: int, form: str) -> None:
    """OBS-58 / OBS-59: the password (or account key) goes; the server, the user, the database, the other pairs and
    the scheme's string stay; the same inside JSON."""
    secret = note_password(random.Random(seed), symbols="#^*-_.+", share=0.3)
    text = form.format(P=secret)
    assert_only_secret_hidden(text, secret)
    encoded = json.dumps({"content": text})
    assert scrub_text(encoded) == json.dumps({"content": text.replace(secret, redaction_marker(secret))})


@pytest.mark.parametrize("text", [
    'connectionString="Server=db;Database=app;Integrated Security=true"',
    'ConnectionString: "Server=db;Password=${DB_PASSWORD}"', 'connectionString: "Host=db;Port=5432"',
    'auth = "Bearer " + token', 'x = "Basic " + "YOUR_TOKEN_HERE"', 'print("basic " + "information")',
    'hdr = "Bearer " + "<token>"', "x = 1  # pass through", "# pass the token along", "if x: pass  # noqa",
])
def test_obs55_pairs_without_a_secret_variables_placeholders_and_words_stay(text: str) -> None:
    """OBS-55: a connection string holding no credential, a variable, a placeholder, a word, ``pass`` as code's
    statement or a comment's verb stay."""
    assert scrub_text(text) == text
