"""A worker process is told which builder to run by a name derived from the builder function itself, so no
sink writes its own module as a string (issue #29 item 4; spec 04 FMT-83: the child builds the same sink)."""

from __future__ import annotations

import pytest

from hermes_pipeline.engine.plugins import import_object
from hermes_pipeline.export.worker.sections import builder_reference
from hermes_pipeline.sinks.atif import build_atif_sink
from hermes_pipeline.sinks.atof import build_atof_sink
from hermes_pipeline.sinks.otel.sink import build_otel_sink


@pytest.mark.parametrize("builder", [build_atof_sink, build_atif_sink, build_otel_sink])
def test_the_name_a_child_imports_is_the_builder_itself(builder: object) -> None:
    reference = builder_reference(builder)  # type: ignore[arg-type]
    assert import_object(reference) is builder


def test_a_name_is_taken_as_it_is_and_a_local_function_is_refused() -> None:
    assert builder_reference("my_sink:build") == "my_sink:build"

    def local(config: object) -> None:
        return None

    with pytest.raises(ValueError, match="module-level builder"):
        builder_reference(local)
