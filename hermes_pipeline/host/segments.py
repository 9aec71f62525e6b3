"""Session span segmentation (spec 03 §14): rotate a long session's scope at turn boundaries.

A long-running gateway session would otherwise keep one session scope open for days. With
segmentation on, a new session scope (same ``session_id``) starts at a turn boundary after
``max_turns`` completed turns, or after a completed in-place compaction. The decision is made here;
sinks follow the ``on_session_segment`` event. Both defaults keep one scope per session.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Final

logger: Final = logging.getLogger("hermes_pipeline.host")


@dataclass(frozen=True, slots=True)
class SegmentPolicy:
    """``gateway.telemetry.session_segments`` of a profile's ``config.yaml``."""

    on_compaction: bool = False
    """Rotate at the next turn boundary after an in-place compaction."""
    max_turns: int = 0
    """Rotate after this many completed turns; 0 disables the cap."""

    @property
    def enabled(self) -> bool:
        """Whether any trigger is on."""
        return self.on_compaction or self.max_turns > 0


class SegmentState:
    """Per-session bookkeeping: segment number, completed turns, pending compaction, live turns."""

    __slots__ = ("_lock", "completed", "live_turns", "pending_compaction", "segment", "warned")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.segment = 0
        self.completed = 0
        self.pending_compaction = False
        self.live_turns = 0
        self.warned = False

    def turn_started(self, policy: SegmentPolicy) -> tuple[int, str] | None:
        """Register a turn start; return ``(segment, reason)`` when the scope must rotate now.

        Bookkeeping advances before anything is emitted (CFG-74). A turn that starts while another
        is live in the same session never rotates (CFG-76) and is reported once.
        """
        with self._lock:
            self.live_turns += 1
            if self.live_turns > 1:
                if not self.warned:
                    self.warned = True
                    logger.warning("hermes_pipeline: a second turn started while another turn of the same "
                                   "session is live; session segmentation is not evaluated for it")
                return None
            if policy.on_compaction and self.pending_compaction:
                reason = "compaction"
            elif policy.max_turns > 0 and self.completed >= policy.max_turns:
                reason = "max_turns"
            else:
                return None
            self.segment += 1
            self.completed = 0
            self.pending_compaction = False
            return self.segment, reason

    def turn_ended(self) -> int:
        """Count a completed turn whatever its outcome (CFG-73); returns the live turns left."""
        with self._lock:
            self.completed += 1
            self.live_turns = max(self.live_turns - 1, 0)
            return self.live_turns

    def compacted(self, policy: SegmentPolicy) -> None:
        """An in-place compaction finished: rotate at the next boundary if ``on_compaction`` (CFG-75)."""
        if policy.on_compaction:
            with self._lock:
                self.pending_compaction = True
