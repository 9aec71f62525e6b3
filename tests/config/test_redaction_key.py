"""The profile's redaction key (issue #25): markers agree across the processes of one profile, and a profile
without a store writes no key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_pipeline.config import redaction_key
from hermes_pipeline.engine import scrub

SECRET = "ghp_AbCdEf0123456789abcdefGHIJ012345"

_CHILD = """
import sys
from pathlib import Path
from hermes_pipeline.config.redaction_key import load_redaction_key
from hermes_pipeline.engine.scrub import scrub_text
load_redaction_key(Path(sys.argv[1]), True)
print(scrub_text(sys.argv[2]))
"""


def _marker_in_child(home: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "HERMES_PIPELINE_REDACTION_KEY"}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(home), f"token {SECRET}"], capture_output=True,
                         text=True, env=env, check=True, timeout=120)
    return out.stdout.strip()


def test_two_processes_of_one_profile_write_the_same_marker(tmp_path: Path) -> None:
    """The key is made once in the profile (0600) and read by the next process: same secret, same marker."""
    first = _marker_in_child(tmp_path)
    second = _marker_in_child(tmp_path)
    assert first == second and SECRET not in first and scrub.MARKER_RE.search(first)
    key_file = tmp_path / redaction_key.KEY_FILE
    assert key_file.stat().st_mode & 0o777 == 0o600 and len(key_file.read_bytes()) == 32
    other = tmp_path / "other"
    assert _marker_in_child(other) != first  # another profile, another key: markers say nothing across profiles


def test_no_store_no_key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_PIPELINE_REDACTION_KEY", raising=False)
    monkeypatch.setattr(redaction_key, "_set_by", [])
    assert redaction_key.load_redaction_key(tmp_path, False) is None
    assert not (tmp_path / redaction_key.KEY_FILE).exists()
