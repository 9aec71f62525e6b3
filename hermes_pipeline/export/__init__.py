"""The export foundation shared by every sink (spec 04 §1, §2, §5).

- :mod:`~hermes_pipeline.export.scope_hooks`: :class:`ScopePlugin`, the hooks object an engine registers
  (Hermes hooks → scope events and marks, FMT-24), composing one :class:`ScopeTracker`
  (:mod:`~hermes_pipeline.export.scopes`: open scopes, pairing, publication to listeners) and one small
  class per scope kind (:mod:`~hermes_pipeline.export.scope_kinds`); listeners (one per exporter) get
  :class:`ScopeEvent` objects;
- :mod:`~hermes_pipeline.export.writer`: :class:`BoundedWriter`, the bounded queue + worker thread
  between a listener and a :class:`Destination` (FMT-79..FMT-85);
- :mod:`~hermes_pipeline.export.files`, :mod:`~hermes_pipeline.export.http`: file and HTTP destinations;
  :mod:`~hermes_pipeline.export.destinations`: in-memory and failing test doubles;
- :mod:`~hermes_pipeline.export.content`: content fields, summaries, the content gate (§2.13);
- :mod:`~hermes_pipeline.export.classify`: ``error.type`` and other small classifiers (§4.3).

The layer sits between ``config`` and ``sinks``: it imports ``contract``, ``engine`` and ``host``
only, and knows no sink.
"""

from .destinations import FailingDestination, MemoryDestination
from .errors import DeliveryError, ExportConfigError
from .events import ScopeEvent
from .ids import parse_timestamp_us, rfc3339_us, uuid_str
from .scope_hooks import ScopePlugin
from .scopes import Listener, ScopeTracker
from .writer import BoundedWriter, Destination

__all__ = [
    "BoundedWriter",
    "DeliveryError",
    "Destination",
    "ExportConfigError",
    "FailingDestination",
    "Listener",
    "MemoryDestination",
    "ScopeEvent",
    "ScopePlugin",
    "ScopeTracker",
    "parse_timestamp_us",
    "rfc3339_us",
    "uuid_str",
]
