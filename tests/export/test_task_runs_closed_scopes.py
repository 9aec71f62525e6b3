"""The store's rows read each end as a closed scope (``end.start``): RowBuilder keeps no table of open starts.

BOOK-22 / BOOK-25 / BOOK-26 rows (task runs, LLM calls, tool errors, memory writes) come out the same
whether or not the builder saw the starts of the leaf scopes, because the tracker pairs each scope once and
hands the end with its start (FMT-6, FMT-7). A builder pairing on its own loses the LLM-call and tool rows of
the filtered stream.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_pipeline.export.events import ScopeEvent
from hermes_pipeline.export.task_runs import MemoryWrite, RowBuilder
from tests.export._closed_support import leaf_starts_dropped, recorded_events


def _rows(events: list[Any]) -> list[Any]:
    builder = RowBuilder()
    return [item for event in events for item in builder.feed(event)]


def test_rows_come_from_closed_scopes(tmp_path: Path) -> None:
    """BOOK-22, BOOK-25, BOOK-26, FMT-6: the same rows from the whole stream and from one whose LLM-call and
    tool starts never reached the builder."""
    events = recorded_events(tmp_path)
    full = _rows(events)
    tables = [item[0] for item in full if isinstance(item, tuple)]
    assert tables.count("llm_calls") == 2 and tables.count("task_runs") == 2 and tables.count("tool_errors") == 2
    assert sum(isinstance(item, MemoryWrite) for item in full) == 2
    assert _rows(leaf_starts_dropped(events)) == full


def _start_tables(holder: object) -> list[str]:
    """Attributes of ``holder`` that are dicts of scope events (a table of starts waiting for their ends)."""
    return [name for name, value in vars(holder).items()
            if isinstance(value, dict) and any(isinstance(v, ScopeEvent) for v in value.values())]


def test_no_table_of_starts_while_scopes_are_open(tmp_path: Path) -> None:
    """FMT-6: halfway through a session (a turn, an LLM call and tools open or just ended) the builder holds
    no scope event by uuid: only its per-run aggregates."""
    events = recorded_events(tmp_path)
    builder = RowBuilder()
    for index, event in enumerate(events):
        builder.feed(event)
        assert not _start_tables(builder), (index, event)
