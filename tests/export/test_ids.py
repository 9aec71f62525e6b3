"""FMT-14: every exported timestamp is RFC 3339 UTC with exactly six fractional digits, whatever the second
(``hermes_pipeline/export/ids.py`` keeps each second's text and builds the digits from tables)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.export import ids
from hermes_pipeline.export.ids import parse_timestamp_us, rfc3339_us

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@given(st.integers(min_value=0, max_value=253_402_300_799_999_999))  # up to 9999-12-31T23:59:59.999999Z
def test_a_timestamp_is_the_utc_time_with_six_digits(epoch_us: int) -> None:
    moment = EPOCH + timedelta(microseconds=epoch_us)
    assert rfc3339_us(epoch_us) == moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert parse_timestamp_us(rfc3339_us(epoch_us)) == epoch_us


def test_the_remembered_seconds_stay_bounded_and_right() -> None:
    start = 1_700_000_000
    for n in range(ids._SECONDS_KEPT * 2 + 3):
        epoch_us = (start + n) * 1_000_000 + n % 1_000_000
        assert rfc3339_us(epoch_us) == (EPOCH + timedelta(microseconds=epoch_us)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert len(ids._seconds) <= ids._SECONDS_KEPT
