"""The two safe readers say the same (spec 03 CFG-7; fault review D3): the configuration layer's
(``config/files.py``, kept apart so an inert bridge start never loads the host layer) and the host layer's
(``host/profile_files.py``, what the agent's thread uses) refuse the same inputs with the same words, and read a
regular file to the same bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_pipeline.config.errors import ConfigError
from hermes_pipeline.config.files import read_config_bytes
from hermes_pipeline.host.profile_files import ProfileFileError, read_regular_bytes


def _make(tmp_path: Path, shape: str) -> Path:
    path = tmp_path / "config.yaml"
    if shape == "fifo":
        os.mkfifo(path)
    elif shape == "dir":
        path.mkdir()
    elif shape == "huge":
        with open(path, "wb") as fh:
            fh.truncate(1024 * 1024 + 1)
    else:
        path.write_bytes(b"a: 1\r\nb: \xc3\xa9\n")
    return path


@pytest.mark.parametrize("shape", ["fifo", "dir", "huge", "regular"])
def test_both_readers_agree(tmp_path: Path, shape: str) -> None:
    """CFG-7: same refusal reason (naming the file), same bytes for a regular file."""
    path = _make(tmp_path, shape)
    if shape == "regular":
        assert read_config_bytes(path) == read_regular_bytes(path, 1024 * 1024) == path.read_bytes()
        return
    with pytest.raises(ConfigError) as config_error:
        read_config_bytes(path)
    with pytest.raises(ProfileFileError) as host_error:
        read_regular_bytes(path, 1024 * 1024)
    assert str(path) in str(config_error.value) and str(path) in str(host_error.value)
    assert config_error.value.message.split(";")[0] == host_error.value.reason.split(";")[0]


def test_a_missing_file_stays_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular_bytes(tmp_path / "gone")
