"""Who changed a skill or a memory file: a store writer's row wins over a rescan, in any process.

Several processes of one profile (a CLI, the gateway, cron jobs) share one store and one scan state
(``scan-state.json``, read and written under the inter-process scan lock). A tool call writes its
file first; its row reaches the store writer of *its* process a little later (the hook hands the
event to a background writer). A rescan in another process in between sees a file that changed
with no row explaining it. The rule that keeps the agent's write from being blamed on the user:

1. **Agent writes are noted.** When a writer records a skill change or a memory tool write, it
   notes in the scan state the hash the write produced (the skill's files digest, the memory
   file's SHA-256, both taken on the agent's thread right after the tool ran: :mod:`.skill_probe`,
   :mod:`.memory_probe`).
   A rescan that finds exactly that content records no row: the change is explained.
2. **A rescan's rows are claims.** A rescan that records a row (``user-direct`` memory change,
   ``external_edit`` / ``discovered`` / ``external_delete`` skill change) notes the row's id and the
   hash it saw. When the agent's write reaches its writer later and produced that hash, the writer
   replaces the rescan's row by its own: memory rows with the actor, the session and the real
   excerpts; a skill row with the tool's action, reason and session (the skill's later versions
   move down one, so versions stay 1, 2, … in recording order).
3. **In-flight memory writes are left alone.** A memory tool call puts a mark in
   ``observability/inflight/`` before it runs, removed once its rows are committed (:mod:`.inflight`);
   a rescan does not judge a memory file that has a live mark. This covers what no hash can: a
   rescan that saw the file between one process's write and that process's own look at it, when a
   third write came in between.

Whichever comes first, the end state is the same: the agent's rows, no user row. Both notes expire
after :data:`WINDOW` seconds (a writer is far quicker; an old note must not explain a later hand
edit that happens to restore the same bytes) and are bounded in number. A recorded deletion of a
skill ends its notes (:func:`forget`): a note from before it never explains the skill's reappearance
(a restore, by Hermes' curator or by hand, is a row of its own).
"""

from __future__ import annotations

import time
from typing import Any, Final

from .scan import ScanState

WINDOW: Final = 600.0
"""Seconds a note explains a change or a claim waits for the agent's row."""
MAX_AGENT_NOTES: Final = 128
"""Per skill or memory file (several processes writing one file quickly produce many hashes in a window)."""
MAX_CLAIMS: Final = 512
GONE: Final = "-"
"""The hash of a skill or file that no longer exists."""


def _fresh(at: Any, now: float) -> bool:
    return isinstance(at, int | float) and now - WINDOW <= at <= now + WINDOW


def note_agent(state: ScanState, key: str, digest: str | None, now: float | None = None) -> None:
    """An agent write produced ``digest`` for ``key`` (``skill:<name>`` or ``memory:<path>``)."""
    now = time.time() if now is None else now
    notes = [n for n in state.agent.get(key, []) if isinstance(n, list) and len(n) == 2 and _fresh(n[1], now)]
    notes.append([digest or GONE, now])
    state.agent[key] = notes[-MAX_AGENT_NOTES:]
    for other in [k for k, v in state.agent.items() if not any(_fresh(n[1], now) for n in v if len(n) == 2)]:
        del state.agent[other]


def explained(state: ScanState, key: str, digest: str | None, now: float | None = None) -> bool:
    """Whether an agent write (any process) recently produced exactly ``digest`` for ``key``."""
    now = time.time() if now is None else now
    want = digest or GONE
    return any(isinstance(n, list) and len(n) == 2 and n[0] == want and _fresh(n[1], now)
               for n in state.agent.get(key, []))


def forget(state: ScanState, key: str) -> None:
    """Drop the notes of ``key``: what agent writes produced before now explains nothing that comes after (a
    recorded deletion)."""
    state.agent.pop(key, None)


def add_claim(state: ScanState, table: str, row_id: int, key: str, digest: str | None,
              now: float | None = None, prior: Any = None) -> None:
    """A rescan wrote row ``row_id`` of ``table`` for ``key`` having seen ``digest``; ``prior``: what it
    compared with (hashes only), where the agent's row starts from when it replaces this one."""
    now = time.time() if now is None else now
    state.claims = [c for c in state.claims if _fresh(c.get("at"), now)][-(MAX_CLAIMS - 1):]
    state.claims.append({"table": table, "id": row_id, "key": key, "digest": digest or GONE, "at": now,
                         "prior": prior})


def take_claim(state: ScanState, table: str, key: str, digest: str | None,
               now: float | None = None) -> dict[str, Any] | None:
    """The claim (``id``, ``prior``) of a rescan's row that the agent write producing ``digest`` for ``key``
    explains (forgotten then), else ``None``."""
    now = time.time() if now is None else now
    want = digest or GONE
    for index, claim in enumerate(state.claims):
        if claim.get("table") == table and claim.get("key") == key and claim.get("digest") == want \
                and _fresh(claim.get("at"), now) and isinstance(claim.get("id"), int):
            del state.claims[index]
            return claim
    return None

