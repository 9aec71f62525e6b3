"""JSON Schemas shipped with hermes_pipeline (draft 2020-12).

- ``atof-0.1``: one ATOF 0.1 event as hermes_pipeline emits it (spec 04 §2.1-§2.7).

    from hermes_pipeline.schemas import load_schema
    jsonschema.Draft202012Validator(load_schema("atof-0.1")).validate(event)
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any


def available() -> list[str]:
    """Names of the bundled schemas (file names without ``.schema.json``)."""
    return sorted(entry.name.removesuffix(".schema.json") for entry in resources.files(__name__).iterdir()
                  if entry.name.endswith(".schema.json"))


@lru_cache(maxsize=None)
def _load(name: str) -> str:
    resource = resources.files(__name__).joinpath(f"{name}.schema.json")
    if not resource.is_file():
        raise LookupError(f"no bundled schema named {name!r}; available: {', '.join(available()) or 'none'}")
    return resource.read_text(encoding="utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """The schema ``name`` (e.g. ``"atof-0.1"``) as a new dict; ``LookupError`` if unknown."""
    schema: dict[str, Any] = json.loads(_load(name))
    return schema
