"""``engine.tool_status``: the deferred status a record lane resolves is the status the host would derive (OBS-38)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.engine.tool_status import DEFERRED_STATUS, derive_status, resolve_status

_results = st.one_of(
    st.text(max_size=200),
    st.builds(lambda v, k: json.dumps({k: v}), st.one_of(st.none(), st.booleans(), st.text(max_size=40),
                                                          st.integers()), st.sampled_from(["error", "output"])),
    st.builds(lambda v: json.dumps({"error": v}, ensure_ascii=True).replace("e", "\\u0065", 1),
              st.text(min_size=1, max_size=40)),
)


@given(_results, st.integers(min_value=0, max_value=3))
def test_resolved_fields_equal_the_derived_status(result: str, extra: int) -> None:
    """The fields a lane resolves are the fields with ``derive_status(result)`` in place of the marker."""
    tail = tuple(range(extra))
    fields = ("tool", result, 7, DEFERRED_STATUS, None, None, *tail)
    assert resolve_status(fields, 1, 3) == ("tool", result, 7, *derive_status(result), *tail)


@given(_results)
def test_fields_without_the_marker_are_kept(result: str) -> None:
    """A status already derived (the dispatch path, a blocked or raising call) is never derived again."""
    fields = ("tool", result, 7, "blocked", "plugin_block", "no")
    assert resolve_status(fields, 1, 3) is fields


def test_an_escaped_error_key_is_still_an_error() -> None:
    assert derive_status('{"\\u0065rror": "boom"}')[:2] == ("error", "tool_error")
    assert derive_status('{"error": null, "output": "x"}') == ("ok", None, None)
