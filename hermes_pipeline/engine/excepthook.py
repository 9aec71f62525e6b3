"""Credential scrubbing of tracebacks raised on threads (spec 04 FMT-33a: what reaches stderr is scrubbed too).

Log records of the package are scrubbed when they are created (:mod:`.logscrub`), but an exception that
escapes a thread's ``run`` never becomes a log record: :data:`threading.excepthook` prints it to stderr,
with whatever the exception message quotes (a plugin's payload, a request echoed by a destination). The
package's own writer threads and the threads plugins start inside the host are all such threads, and
there is no way to tell a plugin's thread from the host's at that point, so the hook installed here
scrubs the traceback of every thread of the process; it only ever removes credentials.

The hook chains to the one it replaced. When that is Python's default, it prints what the default would
print (``Exception in thread NAME:`` and the traceback), scrubbed. When another hook was installed before
(an application's, a test runner's), that hook is called with the exception replaced by a
:class:`ScrubbedThreadException` whose message is the scrubbed traceback, so it never sees the raw text.
``SystemExit`` is ignored, as the default hook does.
"""

from __future__ import annotations

import sys
import threading
import traceback
from typing import Any, Final, NamedTuple

from .scrub import safe_scrub

__all__ = ["ScrubbedThreadException", "install_thread_excepthook", "scrubbed_thread_traceback"]

_lock: Final = threading.Lock()
_installed: list[Any] = []


class ScrubbedThreadException(Exception):
    """Stands in for a thread's exception when a chained hook is called: its message is the scrubbed traceback."""


class _HookArgs(NamedTuple):
    """The shape of :class:`threading.ExceptHookArgs`, built with the scrubbed stand-in."""

    exc_type: type[BaseException]
    exc_value: BaseException | None
    exc_traceback: Any
    thread: threading.Thread | None


def scrubbed_thread_traceback(args: Any) -> str:
    """The text the default hook prints for ``args`` (an ``ExceptHookArgs``), credential-scrubbed. Never raises."""
    thread = getattr(args, "thread", None)
    name = thread.name if thread is not None else threading.get_ident()
    try:
        body = "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback))
    except Exception:
        body = f"{getattr(args.exc_type, '__name__', args.exc_type)}: <unprintable exception>\n"
    return safe_scrub(f"Exception in thread {name}:\n{body}")


def install_thread_excepthook() -> None:
    """Make :data:`threading.excepthook` scrub every thread's traceback (idempotent; see the module docstring)."""
    with _lock:
        current = threading.excepthook
        if _installed and current is _installed[0]:
            return
        previous: Any = current  # called with this module's _HookArgs, which has the fields of the hook's own

        def hook(args: Any) -> None:
            if args.exc_type is SystemExit:
                return
            text = scrubbed_thread_traceback(args)
            if previous is threading.__excepthook__:
                stream = sys.stderr
                if stream is None:
                    return
                try:
                    stream.write(text)
                    stream.flush()
                except Exception:
                    pass
                return
            previous(_HookArgs(ScrubbedThreadException, ScrubbedThreadException(text.rstrip("\n")), None,
                               getattr(args, "thread", None)))

        threading.excepthook = hook
        _installed[:] = [hook]
