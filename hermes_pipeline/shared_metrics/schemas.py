"""The closed package JSON Schemas v1 and v2 (SM-59..62) and their validators.

The schema files ship as package data in ``hermes_pipeline/schemas/`` and are used verbatim with a
draft 2020-12 validator and format checking (``date-time``).

Validating a package is a single ``jsonschema`` call for small packages. For large ones the
``metrics`` array is checked item by item against the one ``oneOf`` branch whose ``name`` constant
matches the item: every branch pins a distinct ``name`` (asserted when the schema is loaded), so
"exactly one branch matches" is the same as "the branch named by the item matches", and the
validator no longer tries all thirteen branches per item. The envelope is still validated with
the whole schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

V1: Final = "hermes.shared_metrics.v1"
V2: Final = "hermes.shared_metrics.v2"
SCHEMA_FILES: Final = {V1: "hermes.shared_metrics.v1.schema.json", V2: "hermes.shared_metrics.v2.schema.json"}  # the closed schema files (SM-59)
_DISPATCH_ABOVE: Final = 32


class PackageInvalid(ValueError):
    """A package does not validate against its closed schema (it is never written or sent, SM-62)."""


def _schema_text(filename: str) -> str:
    try:
        return resources.files("hermes_pipeline.schemas").joinpath(filename).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, TypeError):
        return (Path(__file__).resolve().parent.parent / "schemas" / filename).read_text(encoding="utf-8")


@cache
def load_package_schema(schema_version: str) -> dict[str, Any]:
    """The parsed schema for ``hermes.shared_metrics.v1`` or ``...v2`` (``KeyError`` otherwise)."""
    schema: dict[str, Any] = json.loads(_schema_text(SCHEMA_FILES[schema_version]))
    return schema


class _Validator:
    def __init__(self, schema: dict[str, Any]) -> None:
        # jsonschema (and its referencing / attrs stack) is imported only when a package is first
        # validated, so a profile with shared metrics off never loads it.
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

        checker = Draft202012Validator.FORMAT_CHECKER
        self.whole = Draft202012Validator(schema, format_checker=checker)
        self.by_name: dict[str, Draft202012Validator] = {}
        for branch in schema["properties"]["metrics"]["items"]["oneOf"]:
            target = _inline(branch, schema["$defs"])
            name = target["properties"]["name"]["const"]
            if name in self.by_name:  # the equivalence above would not hold
                raise RuntimeError(f"package schema {schema['$id']}: two metric branches share name {name!r}")
            self.by_name[name] = Draft202012Validator(target, format_checker=checker)

    def errors(self, payload: Mapping[str, Any]) -> list[str]:
        metrics = payload.get("metrics")
        if not isinstance(metrics, list) or len(metrics) <= _DISPATCH_ABOVE:
            return [_describe(e) for e in self.whole.iter_errors(payload)]
        head = dict(payload)
        head["metrics"] = metrics[:1]
        found = [_describe(e) for e in self.whole.iter_errors(head)]
        for index, item in enumerate(metrics[1:], start=1):
            name = item.get("name") if isinstance(item, dict) else None
            validator = self.by_name.get(name) if isinstance(name, str) else None
            if validator is None:
                found.append(f"metrics/{index}: unknown metric name")
            elif not validator.is_valid(item):
                found.extend(f"metrics/{index}: {_describe(e)}" for e in validator.iter_errors(item))
            if len(found) > 20:
                break
        return found


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    """``node`` with every local ``#/$defs/...`` reference replaced by its target.

    In draft 2020-12 a ``$ref`` applies together with its sibling keywords, which is exactly
    ``allOf: [target, siblings]``; inlining only saves the reference lookups during validation.
    """
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    rest = {key: _inline(value, defs) for key, value in node.items() if key != "$ref"}
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return rest
    if not ref.startswith("#/$defs/"):
        raise RuntimeError(f"unsupported reference {ref!r} in a package schema")
    target = _inline(defs[ref.removeprefix("#/$defs/")], defs)
    return {"allOf": [target, rest]} if rest else target


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where or '<root>'}: {error.message}"[:300]


@cache
def _validator(schema_version: str) -> _Validator:
    return _Validator(load_package_schema(schema_version))


def package_errors(payload: object) -> list[str]:
    """Why ``payload`` is not a valid v1 or v2 package (by its ``schema_version``); ``[]`` when valid."""
    if not isinstance(payload, Mapping):
        return ["package is not a JSON object"]
    version = payload.get("schema_version")
    if version not in SCHEMA_FILES:
        return [f"unknown schema_version {version!r}"]
    return _validator(str(version)).errors(payload)


def validate_package(payload: object, *, expect: str | None = None) -> None:
    """Raise :class:`PackageInvalid` unless ``payload`` validates (and has ``schema_version == expect``)."""
    if expect is not None and (not isinstance(payload, Mapping) or payload.get("schema_version") != expect):
        raise PackageInvalid(f"package is not {expect}")
    problems = package_errors(payload)
    if problems:
        raise PackageInvalid("; ".join(problems[:5]))
