"""The ATOF writer's lines stay byte for byte what they were before the writer-thread work (issue #29): the
encoder's common branch (a scope start or end no format decision changes) and its LLM-start branch against the
earlier single path (``_reference.ReferenceEncoder``), on varied generated streams and every format option
(FMT-25 history delta or full, FMT-30/31 content gate and summary modes, FMT-39 ``replace_dots``), and against
``compact_line(atof_object(event))``, the general rendering, for the lines no format decision changes."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.export.atof_object import atof_object
from hermes_pipeline.export.events import LLM_SCOPE, START
from hermes_pipeline.export.jsonenc import compact_line
from hermes_pipeline.sinks.atof.encoder import AtofEncoder

from tests.sinks._streams import build_stream
from tests.sinks.atof._reference import ReferenceEncoder

FORMATS = st.fixed_dictionaries({"gate_open": st.booleans(), "summary_mode": st.sampled_from(("preview", "digest", "off")),
                                 "llm_history": st.sampled_from(("delta", "full")), "dots": st.booleans()})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), options=FORMATS)
def test_fmt_25_30_39_lines_are_the_reference_encoders_bytes(data: st.DataObject, options: dict[str, object]) -> None:
    """FMT-25, FMT-30, FMT-31, FMT-39: every line of two sessions (one encoder, as a writer thread runs it, so the
    per-session history state is shared and dropped at each session's end) equals the earlier encoder's."""
    events = [*build_stream(lambda options: data.draw(st.sampled_from(options)), session_id="a"),
              *build_stream(lambda options: data.draw(st.sampled_from(options)), session_id="b",
                            base_us=1_788_257_800_000_000)]
    current, reference = AtofEncoder(**options), ReferenceEncoder(**options)  # type: ignore[arg-type]
    for event in events:
        assert current(event) == reference(event), event


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fmt_14_plain_lines_are_the_general_rendering(data: st.DataObject) -> None:
    """FMT-14 / FMT-4: with the gate open and keys as they are, a line that is not an LLM start is exactly the
    event's ATOF object encoded (``compact_line(atof_object(event))``): UUIDs, RFC 3339 timestamps, escaping."""
    encoder = AtofEncoder()
    for event in build_stream(lambda options: data.draw(st.sampled_from(options))):
        line = encoder(event)
        if not (event.phase == START and event.name == LLM_SCOPE):
            assert line == compact_line(atof_object(event))
