"""The local observability store: skill version history, memory change audit, task runs, LLM calls,
skill runs and alert state in ``$HERMES_HOME/observability/observability.sqlite3`` (spec 06 §4-§6).

Enabled per profile with ``observability.audit.enabled: true`` in ``config.yaml``. The store is a
sink of the profile's scope stream (:mod:`.sink`): nothing is written on the agent's thread.
"""

from __future__ import annotations

from .consumer import StoreHandle, attach_for_profile, attach_store
from .db import StoreBusy, StoreError, StoreFull, StoreUnreadable, connect, store_error, store_path
from ...export.call_cost import PricingError, call_cost, parse_pricing
from .schema import COLUMNS, TABLES, sqlite_utc
from .sink import ObservabilityStoreSink

__all__ = ["COLUMNS", "ObservabilityStoreSink", "PricingError", "StoreBusy", "StoreError", "StoreFull", "StoreHandle",
           "StoreUnreadable", "TABLES", "attach_for_profile", "attach_store", "call_cost", "connect", "parse_pricing",
           "sqlite_utc", "store_error", "store_path"]
