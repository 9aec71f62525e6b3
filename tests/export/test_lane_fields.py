"""A record lane hands its method the fields the method names, picked from the hookspec-ordered tuple (FMT-79).

The hookimpl picks them from the payload by name; the lane must give the method the same values, whether its
parameters are a prefix of the hookspec's fields (a slice) or any other selection (picked by position, one
field or several)."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_pipeline.contract.hooks import OBSERVER_HOOKS
from hermes_pipeline.export.publication import _lane


class _Inline:
    """A hooks object without a publication queue: the lane calls the method at once."""

    _publication = None


@pytest.mark.parametrize(("hook", "names"), [
    ("post_llm_call", ("assistant_response",)),  # one field, not the first
    ("post_llm_call", ("session_id", "turn_id", "assistant_response")),  # a selection with gaps
    ("post_api_request", ("session_id", "task_id", "model", "api_duration", "response", "provider")),  # reordered
    ("pre_tool_call", ("tool_name", "args", "task_id")),  # a prefix
])
def test_fmt79_lane_gives_the_method_the_fields_it_names(hook: str, names: tuple[str, ...]) -> None:
    spec = OBSERVER_HOOKS[hook].fields
    seen: list[tuple[Any, ...]] = []

    def method(self: Any, *values: Any) -> None:
        seen.append(values)

    method.__name__ = hook
    bind = _lane(method, names, None, None, False, None, None)
    assert bind is not None
    fields = tuple(f"value of {name}" for name in spec)
    bind(_Inline())(fields)
    assert seen == [tuple(f"value of {name}" for name in names)]


def test_a_method_naming_a_field_the_hookspec_lacks_has_no_lane() -> None:
    def post_llm_call(self: Any, session_id: str, not_a_field: str) -> None:
        raise AssertionError("never called")

    assert _lane(post_llm_call, ("session_id", "not_a_field"), None, None, False, None, None) is None
