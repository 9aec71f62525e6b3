"""The ATOF encoder's line rendering as it was before the writer-thread work (issue #29), kept as the reference
the current encoder must match byte for byte (``test_encoder_bytes.py``)."""

from __future__ import annotations

from hermes_pipeline.export.atof_object import atof_object
from hermes_pipeline.export.content import gate_closed
from hermes_pipeline.export.events import END, LLM_SCOPE, SESSION_SCOPE, START, ScopeEvent
from hermes_pipeline.export.jsonenc import compact_line
from hermes_pipeline.sinks.atof.encoder import AtofEncoder, replace_dots


class ReferenceEncoder(AtofEncoder):
    """:class:`AtofEncoder` with its earlier ``__call__``: one path for every event (the same state and options)."""

    def __call__(self, event: ScopeEvent) -> bytes:
        self.begin_batch()  # the day was settled for every line then
        doc = atof_object(event)
        if event.phase == START and event.name == LLM_SCOPE and isinstance(event.data, dict):
            api_mode = event.metadata.get("hermes.api_mode")
            if self.gate_open:
                doc = self._definitions(self._history(doc, event, api_mode), event)
            else:
                doc = gate_closed(doc, self.summary_mode, api_mode)
        elif not self.gate_open:
            doc = gate_closed(doc, self.summary_mode)
        if event.phase == END and event.name == SESSION_SCOPE:
            self._written.pop(event.uuid, None)
            self._defined.pop(event.uuid, None)
        if self.dots:
            doc = replace_dots(doc)
        return compact_line(doc)
