"""The pipeline files shared by the tests (``tests/data/pipelines/*.toml``) and the one way to write them.

A pipeline text that several tests need lives once, as a file under ``tests/data/pipelines/`` (what each holds is
listed in the README there); a test writes it into its own directory (``tmp_path`` or below) with
:func:`write_pipeline`, or takes the text with :func:`pipeline_text`, filling the file's ``${name}``
placeholders. Text the test appends (``extra``) lands in the file's last table, so a test states only what
is particular to it.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

from tests._repo import TEST_DATA

PIPELINES = TEST_DATA / "pipelines"
"""Where the shared pipeline files are."""


def pipeline_names() -> list[str]:
    """The names of the shared pipeline files (without ``.toml``), sorted."""
    return sorted(path.stem for path in PIPELINES.glob("*.toml"))


def placeholders(name: str) -> set[str]:
    """The ``${name}`` placeholders of the shared file ``name``."""
    return set(Template((PIPELINES / f"{name}.toml").read_text(encoding="utf-8")).get_identifiers())


def pipeline_text(name: str, extra: str = "", **values: str | Path) -> str:
    """The text of ``tests/data/pipelines/<name>.toml`` with its placeholders filled, then ``extra``.

    Raises ``KeyError`` naming the placeholder when a value is missing, and ``ValueError`` when a value is given
    that the file has no placeholder for (a test that thinks it sets a directory must really set it).
    """
    template = Template((PIPELINES / f"{name}.toml").read_text(encoding="utf-8"))
    wanted = placeholders(name)
    unused = sorted(set(values) - wanted)
    if unused:
        raise ValueError(f"pipeline {name!r} has no placeholder {', '.join(unused)} (it has: {sorted(wanted)})")
    return template.substitute({key: str(value) for key, value in values.items()}) + extra


def write_pipeline(directory: Path, name: str, *, extra: str = "", filename: str = "plugins.toml",
                   **values: str | Path) -> Path:
    """Write :func:`pipeline_text` as ``directory/filename`` (the directory is created) and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / filename
    path.write_text(pipeline_text(name, extra, **values), encoding="utf-8")
    return path
