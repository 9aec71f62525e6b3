"""The byte estimates of queued records (FMT-80, FMT-81) are the same numbers as the plain recursive walk gives.

``sizes._size`` sizes string and scalar entries in its loop instead of a call per leaf, takes dict subclasses
without the ``Mapping`` ABC check, and ``fields_bytes`` counts an empty container as 0 without a look: all to
cost less on the agent's thread. The estimate must not move because of it: the reference below is the walk as
it was written before (one call per value), and the shortcuts must give its number for any value and budget,
odd types included (the host's read-only views, tuples, bytes, mappings whose ``values()`` raise, long strings,
secrets, nested tool calls).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.export import sizes
from hermes_pipeline.host.message import FrozenList, MessageView, message_view

SECRET = "sk-ZX0123456789ABCDEFGHIJ"


def _ref_value_bytes(value: Any, budget: int = sizes.BUDGET) -> int:
    try:
        return _ref_size(value, [max(budget, 1)])
    except Exception:
        return sizes.SCALAR_BYTES


def _ref_size(value: Any, left: list[int]) -> int:
    kind = type(value)
    if kind is str or kind is bytes:
        return len(value)
    if kind is dict:
        items: Any = value.values()
    elif kind is list or kind is tuple:
        items = value
    elif kind in (int, float, bool, type(None)):
        return sizes.SCALAR_BYTES
    elif isinstance(value, str | bytes | bytearray):
        return len(value)
    elif isinstance(value, Mapping):
        items = value.values()
    else:
        return sizes.SCALAR_BYTES
    count = len(items)
    seen = inner = 0
    for item in items:
        if left[0] <= 0:
            break
        left[0] -= 1
        part = _ref_size(item, left)
        if left[0] <= 0 and seen:
            break
        inner += part
        seen += 1
    if seen < count:
        inner = inner * count // seen if seen else count * sizes.SCALAR_BYTES
    return count * sizes.SLOT_BYTES + inner


def _ref_fields_bytes(fields: Iterable[Any], budget: int = sizes.FIELD_BUDGET) -> int:
    size = 0
    for item in fields:
        if type(item) is str:
            size += len(item)
        elif type(item) in (int, float, bool, type(None)):
            size += sizes.SCALAR_BYTES
        else:
            size += _ref_value_bytes(item, budget)
    return size


class Broken(Mapping[str, Any]):
    """A mapping whose values cannot be read: sized as a leaf, never an error."""

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 1

    def values(self) -> Any:
        raise RuntimeError("no values")


class Text(str):
    """A ``str`` subclass (sized by its length through the general branch)."""


_text = st.one_of(st.text(max_size=30), st.just(f"key={SECRET}"), st.sampled_from(["x" * 2_500, "é" * 3_000]),
                  st.builds(Text, st.text(max_size=10)))
_leaf = st.one_of(_text, st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False), st.binary(max_size=20),
                  st.builds(bytearray, st.binary(max_size=5)), st.just(object()), st.just(Broken()))


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=6), st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=5), inner, max_size=6),
        st.dictionaries(st.text(max_size=5), inner, max_size=4).map(MessageView),
        st.lists(inner, max_size=4).map(FrozenList),
        st.just([]), st.just({}), st.just(()),
    )


_values = st.recursive(_leaf, _containers, max_leaves=40)
_calls = st.lists(st.fixed_dictionaries({
    "id": _text, "type": st.just("function"),
    "function": st.fixed_dictionaries({"name": _text, "arguments": _text})}), max_size=12)


@settings(max_examples=500, deadline=None)
@given(_values, st.sampled_from([0, 1, 2, 4, 8, sizes.BUDGET, 1_000]))
def test_value_bytes_is_the_reference_walk(value: Any, budget: int) -> None:
    assert sizes.value_bytes(value, budget) == _ref_value_bytes(value, budget)


@settings(max_examples=300, deadline=None)
@given(st.lists(_values, max_size=24).map(tuple), st.sampled_from([0, 1, 4, 8]))
def test_fields_bytes_is_the_reference_walk(fields: tuple[Any, ...], budget: int) -> None:
    assert sizes.fields_bytes(fields, budget) == _ref_fields_bytes(fields, budget)
    assert sizes.fields_bytes(fields) == _ref_fields_bytes(fields)


@settings(max_examples=150, deadline=None)
@given(_calls, _text)
def test_a_response_and_its_view_are_sized_as_the_reference_walk(calls: list[dict[str, Any]], content: str) -> None:
    """An LLM call's end as its record carries it: the sanitized response (plain dicts and lists), the raw message
    as a read-only view (``MessageView`` holding ``FrozenList`` s), and the dict of its arguments."""
    message = {"role": "assistant", "content": content, "tool_calls": calls}
    view = message_view(message)
    response = {"model": "m", "finish_reason": "tool_calls", "assistant_message": message, "usage": {"input": 3}}
    fields = ("s1", "t1", 1.5, response, view, 3, None, [], {})
    assert sizes.fields_bytes(fields) == _ref_fields_bytes(fields)
    for budget in (1, 4, sizes.BUDGET):
        assert sizes.value_bytes(view, budget) == _ref_value_bytes(view, budget)
        assert sizes.value_bytes(response, budget) == _ref_value_bytes(response, budget)
    assert sizes.arguments_bytes(message) == len(message) * sizes.SLOT_BYTES + _ref_fields_bytes(message.values(), 8)


def _unstarted_plugin() -> Any:
    from hermes_pipeline.export.scope_hooks import ScopePlugin
    from hermes_pipeline.export.writer import BoundedWriter

    plugin = ScopePlugin(deferred=True)
    plugin._publication.close(5.0)
    plugin._publication = BoundedWriter(plugin._destination, name="publication", max_attempts=1,
                                        max_queue_bytes=2**40, max_queue_size=10**6)
    return plugin


_args = st.one_of(st.dictionaries(st.text(max_size=8), _values, max_size=8), st.just({}),
                  st.dictionaries(st.text(max_size=8), _text, max_size=8), _values)


@settings(max_examples=200, deadline=None)
@given(st.lists(_args, min_size=1, max_size=5))
def test_fmt_80_a_tool_start_on_its_lane_is_sized_as_its_arguments(calls: list[Any]) -> None:
    """FMT-80: a tool call's start is sized on its record lane as ``ITEM_BYTES + arguments_bytes(args)`` (the loop
    of ``arguments_bytes`` inlined there), whatever the arguments hold; the record keeps a copy of a dict."""
    from hermes_pipeline.contract.hooks import OBSERVER_HOOKS
    from hermes_pipeline.engine.callbacks import RECORD_LANE
    from hermes_pipeline.export.scope_hooks import ScopePlugin

    plugin = _unstarted_plugin()
    lane = getattr(ScopePlugin.pre_tool_call, RECORD_LANE)(plugin)
    spec = OBSERVER_HOOKS["pre_tool_call"].fields
    expected = 0
    for k, args in enumerate(calls):
        lane(tuple({"tool_name": "t", "args": args, "session_id": "s", "tool_call_id": f"c{k}"}.get(n) for n in spec))
        expected += sizes.ITEM_BYTES + sizes.arguments_bytes(args)
    assert plugin.publication_stats()["queue_bytes"] == expected
    record = plugin._publication._queue[-1]
    assert (record[4] == calls[-1] and record[4] is not calls[-1]) if type(calls[-1]) is dict else record[4] is None
    plugin._publication.close(0.0)
