"""With the real Hermes Agent, a credential its ``terminal`` printed or its ``read_file`` read is hidden in every record
(OBS-55, OBS-58, OBS-59; spec 04 FMT-33a).

The model's script has Hermes ``cat`` a token file and read a file named for an API key: each tool result is the
secret alone (``{"output": "…\\n", "exit_code": 0}``, ``{"content": "1|…"}``), which nothing in it names. The ATOF file,
the ATIF trajectory, the trajectory store's recording and the observability store (a pipeline file and the profile's
``config.yaml`` turn them all on) hold the secrets' markers and never the secrets, while the tools really printed
them (Hermes' own ``state.db`` holds them: its own store, not an output of this package)."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
from pathlib import Path

from hermes_pipeline.config.redaction_key import KEY_FILE
from hermes_pipeline.engine import scrub

from tests._pipelines import write_pipeline
from tests.hermes.test_bridge_e2e import HERMES, _config, _start_model_server, _stop
from tests.hermes.test_bridge_e2e import pytestmark  # noqa: F401
from tests.hermes.test_self_learning_e2e import _script


def _secret(r: random.Random) -> str:
    while True:
        value = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(24))
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value) and any(c.islower() for c in value):
            return value


def test_a_credential_hermes_printed_or_read_is_hidden_in_every_record(tmp_path: Path) -> None:
    r = random.Random()
    token, key = _secret(r), _secret(r)
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    (secrets_dir / ".vault-token").write_text(token + "\n", encoding="utf-8")
    (secrets_dir / "api_key.txt").write_text(key, encoding="utf-8")
    script = _script(tmp_path / "script.json", [
        ("terminal", {"command": f"cat {secrets_dir}/.vault-token"}),
        ("read_file", {"path": str(secrets_dir / "api_key.txt")}),
    ])
    home, out = tmp_path / "hermes", tmp_path / "out"
    pipeline = write_pipeline(tmp_path, "atof-atif-files", atof_directory=out, atif_directory=out)
    server, port = _start_model_server(script)
    try:
        _config(home, port, enabled=["hermes_pipeline"])
        with open(home / "config.yaml", "a", encoding="utf-8") as fh:
            fh.write("observability:\n  audit:\n    enabled: true\n  trajectories:\n    enabled: true\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
        env.update(HOME=str(tmp_path / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1",
                   HERMES_NEMO_RELAY_PLUGINS_TOML=str(pipeline))
        (tmp_path / "user").mkdir()
        (tmp_path / "work").mkdir()
        proc = subprocess.run([HERMES or "hermes", "chat", "-Q", "-q", "Show me my vault token and my API key."],
                              cwd=tmp_path / "work", env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=180)
    finally:
        _stop(server)
    assert proc.returncode == 0, proc.stderr[-3000:]
    written = {path: path.read_bytes() for root in (out, home / "observability", home / "trajectories")
               for path in root.rglob("*") if path.is_file()}
    assert any(path.suffix == ".jsonl" for path in written) and any(path.suffix == ".json" for path in written)
    for path, data in written.items():
        assert token.encode() not in data and key.encode() not in data, path
    events = [json.loads(line) for path, data in written.items() if path.suffix == ".jsonl"
              for line in data.splitlines()]
    results = [e["data"]["result"] for e in events if e.get("category") == "tool" and e["scope_category"] == "end"]
    assert len(results) == 2
    profile_key = (home / KEY_FILE).read_bytes()  # the key Hermes' process keyed its markers with (used whole)
    before = scrub._redaction_key
    scrub.set_redaction_key(profile_key)  # the markers Hermes' process wrote, keyed by the profile's key
    try:
        token_marker, key_marker = scrub.redaction_marker(token), scrub.redaction_marker(key)
    finally:
        scrub.set_redaction_key(before)
    assert token_marker in results[0] and key_marker in results[1]
    blob = b"".join(written.values())
    assert blob.count(token_marker.encode()) >= 3 and blob.count(key_marker.encode()) >= 3  # ATOF, ATIF, recording
    hermes_own = b"".join(path.read_bytes() for path in home.glob("state.db*"))
    assert token.encode() in hermes_own and key.encode() in hermes_own

