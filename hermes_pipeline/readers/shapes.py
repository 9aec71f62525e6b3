"""The types the fields of a recorded document must have for the readers to use it: an ATIF trajectory
(spec 04 §3) and an ATOF event (spec 04 §2).

The readers accept any ATIF v1.x producer, so this is not the producer-strict schema
(``schemas/atif-1.7.schema.json``): a field may be missing or ``null``, unknown keys are kept. But
a field the readers read must have the type they read it as, or the document is refused with an
:class:`~hermes_pipeline.readers.files.InputFileError` naming the file and the field
(``steps[3].tool_calls[0]: expected an object, found a string``), instead of a reader failing
half-way with a traceback. :func:`check_atif` walks the document once, without recursion.

A shape is a type name (``"str"``, ``"int"``, ``"num"``, ``"bool"``, ``"obj"``, ``"list"``, ``"any"``, or
several joined by ``|``), or a pair: ``("obj", {key: shape})`` or ``("list", item shape)``; the name of
a shape in :data:`SHAPES` stands for it (so a trajectory can hold trajectories).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Union

from .files import InputFileError, field_path

__all__ = ["SHAPES", "check_atif", "check_atof_event", "check_shape"]

Shape = Union[str, tuple[str, Any]]

_HERMES_RESULT: Final = ("obj", {"duration_ms": "num", "status": "str"})
_REF: Final = ("obj", {"trajectory_id": "str", "trajectory_path": "str"})

SHAPES: Final[dict[str, Shape]] = {
    "trajectory": ("obj", {
        "schema_version": "str", "session_id": "str", "trajectory_id": "str", "notes": "str",
        "continued_trajectory_ref": "str",
        "agent": ("obj", {"name": "str", "version": "str", "model_name": "str", "tool_definitions": "list",
                          "extra": "obj"}),
        "steps": ("list", "step"),
        "final_metrics": ("obj", {"total_prompt_tokens": "int", "total_completion_tokens": "int",
                                  "total_cached_tokens": "int", "total_cost_usd": "num", "total_steps": "int",
                                  "extra": "obj"}),
        "subagent_trajectories": ("list", "trajectory"),
        "extra": ("obj", {"hermes": ("obj", {
            "session_id": "str", "replay": ("obj", {"of": "str"}),
            "context": ("obj", {"model": "str", "provider": "str", "toolsets": "list",
                                "skills": ("list", ("obj", {"name": "str", "sha256": "str"})),
                                "memory": ("list", ("obj", {"path": "str", "sha256": "str"}))}),
            "redaction": ("obj", {"mode": "str", "replacements": "int"}),
            "subagent": ("obj", {"status": "str", "role": "str"}),
        })}),
    }),
    "atof_event": ("obj", {
        "kind": "str", "uuid": "str", "parent_uuid": "str", "scope_category": "str", "name": "str",
        "category": "str", "atof_version": "str|num", "timestamp": "str|num", "data": "obj", "metadata": "obj",
        "category_profile": "obj",
    }),
    "step": ("obj", {
        "step_id": "int", "timestamp": "str", "source": "str", "message": "str|list", "model_name": "str",
        "reasoning_content": "str", "llm_call_count": "int",
        "metrics": ("obj", {"prompt_tokens": "int", "completion_tokens": "int", "cached_tokens": "int",
                            "cost_usd": "num", "extra": "obj"}),
        "tool_calls": ("list", ("obj", {"tool_call_id": "str", "function_name": "str"})),
        "observation": ("obj", {"results": ("list", ("obj", {
            "source_call_id": "str", "subagent_trajectory_ref": ("list", _REF),
            "extra": ("obj", {"hermes": _HERMES_RESULT}),
        }))}),
        "extra": ("obj", {"hermes": ("obj", {
            "api_request_id": "str", "finish_reason": "str", "api_mode": "str", "synthetic": "bool",
            "failed_attempts": ("list", "obj"),
        })}),
    }),
}

_NAMES: Final = {"str": "a string", "int": "an integer", "num": "a number", "bool": "true or false",
                 "obj": "an object", "list": "an array"}


def _is(value: Any, kind: str) -> bool:
    if kind == "any":
        return True
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "num":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "obj":
        return isinstance(value, Mapping)
    if kind == "list":
        return isinstance(value, list)
    raise ValueError(f"unknown shape type {kind!r}")


def _found(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__


def check_shape(value: Any, shape: Shape, path: str | Path, *, at: tuple[str | int, ...] = ()) -> None:
    """Check ``value`` against ``shape``. A field may be ``null`` (as if it were missing); the document
    itself and the items of an array may not.

    Raises:
        InputFileError: the first field whose type is wrong, named by its path.
    """
    stack: list[tuple[Any, Shape, tuple[str | int, ...], bool]] = [(value, shape, at, False)]
    while stack:
        node, expect, where, nullable = stack.pop()
        while isinstance(expect, str) and expect in SHAPES:
            expect = SHAPES[expect]
        kind, inner = (expect, None) if isinstance(expect, str) else expect
        if node is None and nullable:
            continue
        kinds = kind.split("|")
        if not any(_is(node, k) for k in kinds):
            wanted = " or ".join(_NAMES.get(k, k) for k in kinds)
            raise InputFileError(path, f"expected {wanted}, found {_found(node)}", field=field_path(where))
        if inner is None:
            continue
        if isinstance(node, Mapping):
            for key, sub in inner.items():
                if key in node:
                    stack.append((node[key], sub, (*where, key), True))
        elif isinstance(node, list):
            stack.extend((item, inner, (*where, index), False) for index, item in enumerate(node))


def check_atif(doc: Any, path: str | Path) -> None:
    """Check the types of an ATIF trajectory's fields (see the module docstring)."""
    check_shape(doc, "trajectory", path)


def check_atof_event(event: Any, path: str | Path) -> None:
    """Check the types of one ATOF event's fields."""
    check_shape(event, "atof_event", path)
