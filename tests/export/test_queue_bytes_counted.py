"""An LLM call's records are sized by the text the host counted (FMT-80, FMT-81; ``sizes.COUNTED_TEXT``).

On the agent's thread the publication queue's byte bound needs an estimate of every record. An LLM request's
history, message list and sanitized request hold the text the host already counted (``request_char_count``),
a response's sanitized copy the content it counted (``assistant_content_chars``): the record lanes size those
fields by that count instead of a look inside, which would reach only a few of their values. A large request or
response must never go unsized: these tests plant megabytes of text where the look does not reach and check the
queued bytes, through the host itself (its counts are what the size reads) and on the lane with generated fields.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.contract.hooks import OBSERVER_HOOKS
from hermes_pipeline.engine.callbacks import RECORD_LANE
from hermes_pipeline.export import sizes
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.export.writer import BoundedWriter

MB = 1_000_000


def _unstarted(max_bytes: int = 2**40) -> ScopePlugin:
    """A deferred scope plugin whose publication queue is never drained: its queued bytes stay readable."""
    plugin = ScopePlugin(deferred=True)
    assert plugin._publication is not None
    plugin._publication.close(5.0)
    plugin._publication = BoundedWriter(plugin._destination, name="publication", max_attempts=1,
                                        max_queue_bytes=max_bytes, max_queue_size=10**6)
    return plugin


def _queued(plugin: ScopePlugin) -> int:
    return int(plugin.publication_stats()["queue_bytes"])


def _host(plugin: ScopePlugin) -> Host:
    engine = Engine()
    engine.add_plugin(plugin, name="scopes")
    assert engine.record_lanes("pre_api_request", engine.hook_listeners["pre_api_request"]) is not None
    return Host(engine, model="m", provider="p")


def test_fmt_80_a_large_request_is_sized_by_the_text_the_host_counted() -> None:
    """A megabyte of history deep inside the request (the tenth message, past any small look) is counted: the
    queued bytes of the LLM call's start grow by at least its two message lists' share of it."""
    plugin = _unstarted()
    turn = _host(plugin).session("s1").turn("go", task_id="k1", turn_id="u1")
    before = _queued(plugin)
    messages = [{"role": "user", "content": "hi"}] * 9 + [{"role": "user", "content": [{"type": "text",
                                                                                         "text": "q" * MB}]}]
    request = turn.llm_request()
    request._begin({"model": "m", "messages": messages, "system": "be brief"})
    assert _queued(plugin) - before >= 2 * MB
    assert plugin._publication is not None
    plugin._publication.close(0.0)


def test_fmt_80_a_large_response_is_sized_by_the_content_the_host_counted() -> None:
    """A megabyte of content in a response: its sanitized copy (cut to the pass-1 cap, counted by the content's
    length) and the raw message's view (looked at) are both counted."""
    plugin = _unstarted()
    turn = _host(plugin).session("s1").turn("go", task_id="k1", turn_id="u1")
    calls = [{"id": f"c{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}} for k in range(3)]
    response = {"id": "r", "model": "m", "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "a" * MB, "tool_calls": calls}}]}
    before = _queued(plugin)
    turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, lambda r: response)
    assert _queued(plugin) - before >= 2 * MB
    assert plugin._publication is not None
    plugin._publication.close(0.0)


def test_fmt_80_a_refused_large_request_takes_its_end_with_it() -> None:
    """The counted size decides the byte bound: a request of 3 MB of text does not fit a 2 MB queue holding
    something already, is refused and counted, and its response's record is dropped with it (FMT-80)."""
    plugin = _unstarted(max_bytes=2 * MB)
    turn = _host(plugin).session("s1").turn("go", task_id="k1", turn_id="u1")
    turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "x" * (3 * MB)}]},
                  lambda r: {"id": "r", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                                                   "message": {"role": "assistant", "content": "ok"}}]})
    stats = plugin.publication_stats()
    assert stats["pipeline.events_dropped_bytes"] == 1 and stats["pipeline.events_dropped"] == 2
    assert plugin._publication is not None
    plugin._publication.close(0.0)


_text = st.one_of(st.text(max_size=12), st.sampled_from(["x" * 700, "é" * 2_000, "sk-ZX0123456789ABCDEFGHIJ"]))
_json = st.recursive(st.one_of(st.none(), st.integers(), _text),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                     max_leaves=8)
_field = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), _text, _json)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.data_too_large, HealthCheck.too_slow])
@given(hook=st.sampled_from(sorted(sizes.COUNTED_TEXT)), data=st.data())
def test_fmt_80_llm_records_on_their_lanes_count_the_text_and_every_other_field(hook: str, data: Any) -> None:
    """For any fields, an LLM record's size is the fields' estimate with the text-holding fields replaced by the
    count: every string field by its length, every other field as ``fields_bytes`` sizes it, each holder of the
    counted text (when not empty) a slot per entry plus the count, and the count once more; never below the
    counted text or the record's own strings."""
    spec = OBSERVER_HOOKS[hook].fields
    counted, held = sizes.COUNTED_TEXT[hook]
    values = {name: data.draw(_field, label=name) for name in spec}
    values |= {"session_id": "s1", "api_request_id": "r1", "turn_id": "u1",
               counted: data.draw(st.one_of(st.integers(0, 5 * MB), st.none(), st.just(True)), label=counted)}
    plugin = _unstarted()
    getattr(getattr(ScopePlugin, hook), RECORD_LANE)(plugin)(tuple(values[name] for name in spec))
    chars = values[counted] if type(values[counted]) is int else 0
    expected = sizes.ITEM_BYTES + chars + sizes.fields_bytes(values[name] for name in spec if name not in held)
    for name in held:
        value = values[name]
        if type(value) in (list, dict, tuple):
            expected += len(value) * sizes.SLOT_BYTES + chars if value else 0
        else:
            expected += sizes.fields_bytes((value,))
    assert _queued(plugin) == expected
    assert expected >= chars + sum(len(v) for v in values.values() if type(v) is str)
    assert plugin._publication is not None
    plugin._publication.close(0.0)
