"""Shared metrics read the profile's ``config.yaml`` (consent, before every package) and ``skills/.usage.json``
(on the agent's thread, for every skill load or change) without ever blocking or reading without bound (fault
review D3): a FIFO (how a file on a home that stopped answering behaves) or an oversized file is refused at once
with one warning naming it.

Requirements: spec 05 SM-7 / SM-72 (consent read from the profile's own file before each package; a check that
fails is fail-closed: everything off), SM-31 / SM-32 (skill lifecycle and loads, with the usage state), 01 OBS-15
(never stall the host). Each call runs in a thread joined with a bound: a hang is a failed assertion.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from hermes_pipeline.shared_metrics.profile_file import MAX_BYTES, ProfileConsent, read_profile_consent
from hermes_pipeline.shared_metrics.skills import MAX_USAGE_BYTES, SkillReporter

from tests._bounded import run_bounded


def make(kind: str, path: Path, made: list[Path], size: int) -> None:
    """A FIFO (``kind`` ``"fifo"``) or a sparse file of ``size`` bytes at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        made.append(path)
    else:
        with open(path, "wb") as fh:
            fh.truncate(size)


def warned(caplog: pytest.LogCaptureFixture, name: str, why: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING and name in r.getMessage() and why in r.getMessage()]


@pytest.mark.parametrize("kind", ["fifo", "big"])
def test_a_config_that_hangs_or_is_huge_reads_as_consent_off_with_a_warning(
        tmp_path: Path, kind: str, fifos: list[Path], caplog: pytest.LogCaptureFixture) -> None:
    """SM-72 / SM-7: the sender's consent check returns everything off at once (fail-closed) and warns naming
    ``config.yaml``."""
    home = tmp_path / "home"
    make(kind, home / "config.yaml", fifos, MAX_BYTES + 1)
    with caplog.at_level(logging.WARNING):
        consent = run_bounded(lambda: read_profile_consent(home))
    assert consent == ProfileConsent()
    assert warned(caplog, "config.yaml", "FIFO" if kind == "fifo" else "too large"), caplog.text


def test_a_regular_config_gives_its_consent_as_before(tmp_path: Path) -> None:
    """SM-6: only YAML ``true`` turns a key on; the endpoint is read as written."""
    (tmp_path / "config.yaml").write_bytes(b"telemetry:\r\n  shared_metrics:\r\n    enabled: true\r\n    send: yes\r\n"
                                           b"    endpoint: ' https://m.example/v1 '\r\n")
    assert read_profile_consent(tmp_path) == ProfileConsent(True, False, "https://m.example/v1")


@pytest.mark.parametrize("kind", ["fifo", "big"])
def test_a_usage_state_that_hangs_or_is_huge_is_not_written_over_and_the_update_is_counted(
        tmp_path: Path, kind: str, fifos: list[Path], caplog: pytest.LogCaptureFixture) -> None:
    """SM-32 / OBS-15: a skill load on the agent's thread returns at once; the refused ``.usage.json`` (it may
    hold the real state) is left as it is, the update not counted in it is counted in ``unsaved``, one warning
    names the file."""
    usage = tmp_path / "home" / "skills" / ".usage.json"
    make(kind, usage, fifos, MAX_USAGE_BYTES + 1)
    reporter = SkillReporter(tmp_path / "home")
    with caplog.at_level(logging.WARNING):
        use = run_bounded(lambda: reporter.loaded("pdf-tools"))
        run_bounded(lambda: reporter.patched("pdf-tools"))
    assert use.use_count == 1 and reporter.unsaved == 2
    if kind == "fifo":
        assert not usage.is_file() and usage.exists()
    else:
        assert usage.stat().st_size == MAX_USAGE_BYTES + 1
    assert len(warned(caplog, ".usage.json", "FIFO" if kind == "fifo" else "too large")) == 1, caplog.text


def test_a_regular_usage_state_is_kept_as_before(tmp_path: Path) -> None:
    """SM-32: loads count up; a patch between two loads makes the second a reuse after a patch."""
    reporter = SkillReporter(tmp_path)
    assert reporter.loaded("pdf-tools").use_count == 1
    reporter.patched("pdf-tools")
    use = reporter.loaded("pdf-tools")
    assert (use.use_count, use.reused, use.reuse_after_patch) == (2, True, True)
    state = json.loads((tmp_path / "skills" / ".usage.json").read_text(encoding="utf-8"))
    assert state["skills"]["pdf-tools"]["use_count"] == 2 and reporter.unsaved == 0
