"""A worker process is told which sink to build by a name derived from the sink class itself, so no sink writes
its own module as a string (issue #29 item 4; spec 04 FMT-83: the child builds the same sink through the same
class entry as this process)."""

from __future__ import annotations

import pytest

from hermes_pipeline.engine.plugins import import_object
from hermes_pipeline.export.worker.sections import entry_reference
from hermes_pipeline.sinks.atif import AtifSink
from hermes_pipeline.sinks.atof import AtofSink
from hermes_pipeline.sinks.otel.sink import OtelSink


@pytest.mark.parametrize("entry", [AtofSink, AtifSink, OtelSink])
def test_the_name_a_child_imports_is_the_sink_class_itself(entry: type) -> None:
    reference = entry_reference(entry)
    assert import_object(reference) is entry


def test_a_name_is_taken_as_it_is_and_a_local_class_or_function_is_refused() -> None:
    assert entry_reference("my_sink:MySink") == "my_sink:MySink"

    def local(config: object) -> None:
        return None

    class Local:
        pass

    for entry in (local, Local):
        with pytest.raises(ValueError, match="module-level sink class or builder"):
            entry_reference(entry)
