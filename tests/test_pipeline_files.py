"""The shared pipeline files of ``tests/data/pipelines`` (issue 29 item 7: one fixture per pipeline file).

Each file, filled in, is a valid pipeline (CFG-13 keys, CFG-18 policy), so a test that starts from it fails
for its own reason and not for a typo in pasted text; and the writer refuses a placeholder that is not filled
or a value the file has no place for, naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_pipeline.config import PipelineSettings, load_pipeline
from tests._pipelines import pipeline_names, pipeline_text, placeholders, write_pipeline

VALUES = {"atof_directory": "atof", "atif_directory": "atif", "endpoint": "http://127.0.0.1:9/v1/traces"}
"""A value for every placeholder the shared files use (directories relative to the test's ``tmp_path``)."""


def _values(name: str, root: Path) -> dict[str, str]:
    """The values ``name`` needs, directories made absolute under ``root``."""
    return {key: (str(root / VALUES[key]) if key.endswith("_directory") else VALUES[key])
            for key in placeholders(name)}


def test_the_shared_pipelines_are_there() -> None:
    assert {"observability", "strict-observability", "atof-file", "atof-atif-files", "atof-atif-otlp"} <= set(
        pipeline_names())


@pytest.mark.parametrize("name", pipeline_names())
def test_cfg13_cfg18_each_shared_pipeline_loads_without_a_diagnostic(name: str, tmp_path: Path) -> None:
    """CFG-13 / CFG-18: every key of every shared file is known and every value supported (no diagnostic)."""
    path = write_pipeline(tmp_path, name, **_values(name, tmp_path))
    assert "${" not in path.read_text(encoding="utf-8")
    loaded = load_pipeline(PipelineSettings(), selected=path, discover=False)
    assert [c.kind for c in loaded.components] == ["observability"]
    assert not list(loaded.diagnostics.items), loaded.diagnostics.items


def test_appended_text_lands_in_the_last_table(tmp_path: Path) -> None:
    """``extra`` of the minimal file adds a key of the component's config (where the tests rely on it)."""
    path = write_pipeline(tmp_path, "observability", extra="enable_full_payloads = true\n")
    loaded = load_pipeline(PipelineSettings(), selected=path, discover=False)
    assert loaded.components[0].config.get("enable_full_payloads") is True


def test_a_missing_placeholder_is_named(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="atof_directory"):
        pipeline_text("atof-file")


def test_a_value_without_a_placeholder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="atif_directory"):
        pipeline_text("atof-file", atof_directory=tmp_path, atif_directory=tmp_path)
