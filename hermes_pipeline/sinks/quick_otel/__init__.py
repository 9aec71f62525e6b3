"""The chapter's quick OTel settings of a profile: one ``gen_ai`` trace endpoint (spec 06 BOOK-46, BOOK-50)."""

from __future__ import annotations

from .consumer import QuickOtelHandle, attach_for_profile, quick_otel_config, trace_url

__all__ = ["QuickOtelHandle", "attach_for_profile", "quick_otel_config", "trace_url"]
