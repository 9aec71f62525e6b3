"""The day a replay makes Hermes' clock say (BOOK-replay fidelity: the replayed system prompt is the recorded one):
the day the recorded prompt's ``Conversation started:`` line said, else the recording's first timestamp in Hermes'
own time zone, not the machine's (a run recorded at 20:00Z by a Hermes set to Asia/Tokyo said the next day)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

hermes_time = pytest.importorskip("hermes_time", reason="hermes-agent 0.19 is not installed")

from hermes_pipeline.replay.hermes_plugin import _recorded_day  # noqa: E402


@pytest.fixture
def zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Hermes' time zone setting, reset before and after (``hermes_time`` caches it)."""
    hermes_time.reset_cache()
    yield monkeypatch
    monkeypatch.delenv("HERMES_TIMEZONE", raising=False)
    hermes_time.reset_cache()


@settings(max_examples=200, deadline=None)
@given(day=st.dates(min_value=date(2000, 1, 1), max_value=date(2099, 12, 31)))
def test_the_recorded_prompts_day_wins(day: date) -> None:
    """Whatever the recording's first timestamp, the day Hermes wrote into the recorded prompt (its own format,
    ``agent.system_prompt``) is the day the replay says."""
    line = f"Conversation started: {datetime(day.year, day.month, day.day).strftime('%A, %B %d, %Y')}"
    prompt = f"You are Hermes.\n\n{line}\nModel: test-model\n"
    assert _recorded_day(prompt, "1999-01-01T23:30:00Z") == day


@pytest.mark.parametrize("tz, expected", [("Asia/Tokyo", date(2026, 12, 7)), ("America/New_York", date(2026, 12, 6)),
                                          ("UTC", date(2026, 12, 6))])
def test_without_the_line_the_stamp_is_read_in_hermes_zone(zone: pytest.MonkeyPatch, tz: str, expected: date) -> None:
    """A recording without the line (an older Hermes, a custom prompt): the first timestamp in Hermes' own zone."""
    zone.setenv("HERMES_TIMEZONE", tz)
    hermes_time.reset_cache()
    assert _recorded_day("You are Hermes.", "2026-12-06T20:00:00Z") == expected


def test_without_either_there_is_no_day(zone: pytest.MonkeyPatch) -> None:
    assert _recorded_day(None, "") is None
    assert _recorded_day("Conversation started: Someday, Smarch 40, 2026", "not a time") is None


def test_the_stamp_without_a_zone_setting_is_read_in_the_machines(zone: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No ``timezone`` setting: Hermes uses the machine's zone, and so does the replay."""
    zone.delenv("HERMES_TIMEZONE", raising=False)
    zone.setenv("HERMES_HOME", str(tmp_path))  # a profile without a config.yaml
    hermes_time.reset_cache()
    assert hermes_time.get_timezone() is None
    stamp = datetime(2026, 12, 6, 20, 0, tzinfo=timezone.utc)
    assert _recorded_day(None, stamp.isoformat()) == stamp.astimezone().date()
