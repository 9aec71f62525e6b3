"""The table of sanitized values the host made, known by identity (spec 01 OBS-53; issue #29 item 5)."""

from __future__ import annotations

from hermes_pipeline.engine import sanitized_fields
from hermes_pipeline.engine.sanitized_fields import MAX_ENTRIES, is_marked, mark


def test_a_full_table_lets_only_its_oldest_value_go() -> None:
    """OBS-53: past :data:`MAX_ENTRIES` the oldest recorded values leave, one by one, and the newest stay known (the
    publication thread meets them turns after the agent's thread marked them); the table stays bounded, and a
    value that left is no longer known (the walk then scrubs it: time, never privacy)."""
    values = [mark({"n": i}) for i in range(MAX_ENTRIES + 40)]
    assert all(is_marked(value, None) for value in values[-MAX_ENTRIES:])
    assert not any(is_marked(value, None) for value in values[:40])
    assert len(sanitized_fields._marked) <= MAX_ENTRIES


def test_only_the_very_object_is_known() -> None:
    """An equal dict made elsewhere is not the recorded one."""
    value = mark({"model": "m"})
    assert is_marked(value, None)
    assert not is_marked({"model": "m"}, None)
