"""The registry of a profile's consumers: what starts when a profile opens (CFG-85).

A consumer is a small class with a ``name``, an ``enabled(settings)`` read from the profile's ``config.yaml``
snapshot without importing anything, and an ``attach(profile)`` that starts it and returns a handle with
``close()`` (or ``None`` when the profile has it switched off). The built-in ones are
:data:`~hermes_pipeline.profile.builtin_consumers.BUILTIN_CONSUMERS`; other distributions publish theirs in
the entry-point group :data:`CONSUMER_ENTRY_POINT_GROUP` and sit beside them, as a user's integration sits
beside Sentry's defaults. An entry point is loaded only when a profile opens; a built-in whose
``enabled`` says off is not even imported (the Hermes bridge pays every module imported while a profile opens).
"""

from __future__ import annotations

import inspect
import logging
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from ..config.components import group_entry_points
from ..config.profile_config import ProfileSettings

if TYPE_CHECKING:
    from .profiles import Profile

logger: Final = logging.getLogger("hermes_pipeline.config")

CONSUMER_ENTRY_POINT_GROUP: Final = "hermes_pipeline.profile_consumers"
"""Entry-point group in which other distributions publish profile consumers (a class or an instance)."""


class ConsumerHandle(Protocol):
    """What a started consumer hands back: the profile closes it when it closes."""

    def close(self) -> Any: ...


@runtime_checkable
class ProfileConsumer(Protocol):
    """One consumer of a profile: named, switched by the profile's settings, started with the profile."""

    name: str

    def enabled(self, settings: ProfileSettings) -> bool:
        """Whether it can be on for ``settings`` (read without importing the consumer's package)."""
        ...

    def attach(self, profile: Profile) -> ConsumerHandle | None:
        """Start it for ``profile``; ``None`` when the profile's settings keep it off after all."""
        ...


class ConsumerLoadError(Exception):
    """An entry point of :data:`CONSUMER_ENTRY_POINT_GROUP` that does not load or is no consumer."""


class _Published:
    """A consumer from an entry point, under the entry point's name (one statement of it, as a component's
    kind is its entry point's name); ``enabled`` defaults to on when the consumer has none."""

    def __init__(self, name: str, consumer: Any) -> None:
        self.name = name
        self._consumer = consumer

    def enabled(self, settings: ProfileSettings) -> bool:
        enabled = getattr(self._consumer, "enabled", None)
        return bool(enabled(settings)) if callable(enabled) else True

    def attach(self, profile: Profile) -> ConsumerHandle | None:
        handle: ConsumerHandle | None = self._consumer.attach(profile)
        return handle


def _entry_point_consumer(ep: Any) -> ProfileConsumer:
    try:
        obj = ep.load()
        consumer = obj() if inspect.isclass(obj) else obj
    except Exception as exc:
        raise ConsumerLoadError(f"profile consumer entry point {ep.name!r} ({ep.value}) failed to load: "
                                f"{type(exc).__name__}: {exc}") from None
    if not callable(getattr(consumer, "attach", None)):
        raise ConsumerLoadError(f"profile consumer entry point {ep.name!r} ({ep.value}) has no attach(profile) "
                                "method")
    return _Published(ep.name, consumer)


def registered_consumers(builtins: tuple[ProfileConsumer, ...]) -> tuple[list[ProfileConsumer], dict[str, str]]:
    """The built-ins, then every consumer published in :data:`CONSUMER_ENTRY_POINT_GROUP`, in the order found;
    and the failures by name. An entry point that does not load, or takes a name already registered (said under
    ``name (module:object)`` then), is left out and said why: it never stops a profile from opening."""
    consumers: list[ProfileConsumer] = list(builtins)
    names = {consumer.name for consumer in consumers}
    failures: dict[str, str] = {}
    for ep in group_entry_points(CONSUMER_ENTRY_POINT_GROUP):
        if ep.name in names:  # said under the entry point, not the name: the registered one still starts
            failures[f"{ep.name} ({ep.value})"] = (f"profile consumer entry point {ep.name!r} ({ep.value}) uses the "
                                                   "name of a consumer already registered and is ignored")
            continue
        try:
            consumers.append(_entry_point_consumer(ep))
        except ConsumerLoadError as exc:
            failures[ep.name] = str(exc)
            continue
        names.add(ep.name)
    return consumers, failures
