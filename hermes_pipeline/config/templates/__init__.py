"""The example pipeline files shipped inside the package, for ``hermes-pipeline config init --template NAME``.

The files in this directory are the repository's ``pipelines/`` examples, copied by
``python scripts/regenerate.py`` (a test fails when a copy differs), so that an installed wheel can
write every example without a clone. The ``demo`` template is the demo's own packaged pipeline
(``hermes_pipeline/demo/pipeline.toml``, the same as ``pipelines/demo.toml``).

A template is named by its file name without ``.toml`` (a YAML template keeps its whole file name,
``local-files.yaml``); the file name itself is accepted too (``minimal``, ``langfuse``, ``local-files``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from ..errors import ConfigError

SUFFIXES: Final = (".toml", ".yaml", ".yml")
DEMO: Final = "demo.toml"
"""The demo pipeline lives in the demo package; every other template in this directory."""


@dataclass(frozen=True)
class Template:
    """One shipped example: its name for ``--template``, file name and first comment line."""

    name: str
    filename: str
    summary: str

    def text(self) -> str:
        """The file's text, exactly as shipped."""
        return _resource(self.filename).read_text(encoding="utf-8")

    def environment_variables(self) -> list[str]:
        """Names of the environment variables the example reads credentials from (``header_env`` and
        ``basic_auth_env`` values), in file order."""
        if self.filename.endswith(".toml"):
            import tomllib

            data: Any = tomllib.loads(self.text())
        else:
            from ruamel.yaml import YAML

            data = YAML(typ="safe", pure=True).load(self.text())
        found: list[str] = []

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                for key, value in node.items():
                    if key in ("header_env", "basic_auth_env") and isinstance(value, dict):
                        found.extend(v for v in value.values() if isinstance(v, str) and v not in found)
                    else:
                        walk(value)
            elif isinstance(node, list):
                for item in node:
                    walk(item)

        walk(data)
        return found


class UnknownTemplateError(ConfigError):
    """``--template NAME`` names no shipped example; the message lists them (and a near miss)."""


def _resource(filename: str) -> resources.abc.Traversable:
    if filename == DEMO:
        return resources.files("hermes_pipeline.demo").joinpath("pipeline.toml")
    return resources.files(__package__).joinpath(filename)


def _filenames() -> list[str]:
    names = [entry.name for entry in resources.files(__package__).iterdir()
             if entry.is_file() and entry.name.endswith(SUFFIXES)]
    return sorted([*names, DEMO])


def _summary(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("#"):
            first = line.lstrip("# ").strip()
            return first.split(". ", 1)[0].rstrip(".") + "." if ". " in first else first
    return ""


def templates() -> list[Template]:
    """Every shipped example, by name."""
    out = []
    for filename in _filenames():
        name = filename[: -len(".toml")] if filename.endswith(".toml") else filename
        out.append(Template(name, filename, _summary(_resource(filename).read_text(encoding="utf-8"))))
    return out


def find_template(name: str) -> Template:
    """The template called ``name`` (its name or its file name).

    Raises:
        UnknownTemplateError: listing the shipped templates, with a "did you mean" for a near miss.
    """
    known = templates()
    for template in known:
        if name in (template.name, template.filename):
            return template
    names = [t.name for t in known]
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise UnknownTemplateError(f"unknown template {name!r}; {hint}shipped templates: {', '.join(names)} "
                               "(see --list-templates)", key="--template", code="config.unknown_template",
                               suggestion=close[0] if close else None)


__all__ = ["Template", "UnknownTemplateError", "find_template", "templates"]
