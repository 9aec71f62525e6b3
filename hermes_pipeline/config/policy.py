"""Validation policy (spec 03 §5) and the validation context handed to ``validate_config``.

Actions (CFG-18): ``ignore`` drops silently (the key's default applies), ``warn`` drops with a
WARNING, ``error`` records an ERROR and the load fails.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

from .diagnostics import Diagnostics
from .errors import ConfigError
from .keypath import KeyPath, format_path, join, parse_path
from .suggest import did_you_mean, hint, suggestion_of

PolicyLevel = Literal["ignore", "warn", "error"]
LEVELS: Final = ("ignore", "warn", "error")
POLICY_KEYS: Final = ("unknown_component", "unknown_field", "unsupported_value")
COMPONENT_POLICY_KEYS: Final = ("unknown_field", "unsupported_value")

Locator = Callable[[KeyPath], tuple[str | None, int | None]]
"""Maps a key path to the (file, line) it came from."""


def fixed_locator(source: str | None, line: int | None = None) -> Locator:
    """A locator that places every path in ``source`` (a manifest, for example)."""
    def locate(path: KeyPath) -> tuple[str | None, int | None]:
        return source, line
    return locate


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """The effective ``[policy]`` (defaults: ``warn`` / ``warn`` / ``error``); a level other than
    ``ignore``, ``warn`` or ``error`` is a ``ValueError``."""

    unknown_component: PolicyLevel = "warn"
    unknown_field: PolicyLevel = "warn"
    unsupported_value: PolicyLevel = "error"

    def __post_init__(self) -> None:
        for key in POLICY_KEYS:
            value = getattr(self, key)
            if type(value) is not str or value not in LEVELS:
                raise ValueError(f"policy.{key}: expected one of {', '.join(LEVELS)}, got {value!r}")

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Policy:
        """The policy of a ``[policy]`` table (unknown keys are a ``ValueError``)."""
        extra = set(data) - set(POLICY_KEYS)
        if extra:
            raise ValueError(f"policy: unexpected key {sorted(extra)[0]!r}")
        return cls(**{key: cast(PolicyLevel, value) for key, value in data.items()})


DEFAULT_POLICY: Final = Policy()


def component_policy(global_policy: Policy, own: Mapping[str, Any] | None) -> Policy:
    """The effective policy of one component (CFG-19).

    Per key: a global value that differs from its global default wins; otherwise the
    component's own valid value applies; otherwise the default.
    """
    values: dict[str, Any] = {}
    for key in COMPONENT_POLICY_KEYS:
        global_value = getattr(global_policy, key)
        own_value = (own or {}).get(key)
        if global_value != getattr(DEFAULT_POLICY, key):
            values[key] = global_value
        elif isinstance(own_value, str) and own_value in LEVELS:
            values[key] = own_value
        else:
            values[key] = global_value
    return Policy(unknown_component=global_policy.unknown_component, **values)


def _as_path(path: str | KeyPath) -> KeyPath:
    if isinstance(path, tuple):
        return path
    try:
        return parse_path(path)
    except ValueError:
        return (path,)


class ValidationContext:
    """The ``vctx`` a component's ``validate_config(config, vctx)`` reports through (spec 03 §15.2).

    Paths are relative to what is being validated (a component's ``config``, or the document),
    given as dotted text (``atof.sinks[0].url``) or a tuple of keys and indices. The engine
    applies the policy: dropped keys are removed from the config handed to the component.

    Args:
        component: the component kind, or ``None`` for the document itself.
        policy: the effective policy.
        diagnostics: where findings go.
        locate: maps a relative path to its (file, line).
        key_prefix: dotted path of the validated node in the document (for error keys).
        code_prefix: prefix of the diagnostic codes (the kind, or ``plugin``).
    """

    def __init__(
        self,
        *,
        component: str | None,
        policy: Policy,
        diagnostics: Diagnostics,
        locate: Locator,
        key_prefix: str | None = None,
        code_prefix: str | None = None,
    ) -> None:
        self.component = component
        self.policy = policy
        self.diagnostics = diagnostics
        self._locate = locate
        self.key_prefix = key_prefix
        self.code_prefix = code_prefix or component or "plugin"
        self.drops: list[KeyPath] = []
        """Paths the engine removes before the config reaches the component."""

    # ----------------------------------------------------------------- the public vctx API

    def unknown_field(self, path: str | KeyPath, expected: str | None = None) -> None:
        """Report a key the component does not recognise (``unknown_field`` policy)."""
        key = _as_path(path)
        choices = [c.strip() for c in expected.split(",")] if expected else []
        suggestion = did_you_mean(key[-1], choices) if key else None
        message = "unknown key" + (f"; expected one of {expected}" if expected else "") + hint(suggestion)
        self._apply(self.policy.unknown_field, "unknown_field", key, message, suggestion)

    def unsupported_value(self, path: str | KeyPath, message: str) -> None:
        """Report a recognised key with a wrong type or invalid value (``unsupported_value`` policy).

        ``message`` says what was expected; it must not contain the value itself. A
        :class:`~hermes_pipeline.config.suggest.Expected` message also gives the diagnostic its
        "did you mean" suggestion.
        """
        self._apply(self.policy.unsupported_value, "unsupported_value", _as_path(path), message,
                    suggestion_of(message))

    def error(self, path: str | KeyPath, message: str, *, code: str | None = None) -> None:
        """Report a problem that fails the load whatever the policy says."""
        self._fail(code or f"{self.code_prefix}.invalid", _as_path(path), message)

    def skip_entry(self, path: str | KeyPath, message: str, *, code: str | None = None,
                   suggestion: str | None = None, at: str | KeyPath | None = None) -> None:
        """Drop one destination entry with a WARNING, whatever the policy says (CFG-32a).

        hermes_pipeline extension of the vctx API, used by the ``observability`` component. ``at`` is
        the offending key inside the entry, whose line the diagnostic gives (default: the entry's).
        """
        key = _as_path(path)
        self.drops.append(key)
        self._diag("warning", code or f"{self.code_prefix}.endpoint_skipped", key,
                   f"destination entry skipped: {message}", suggestion or suggestion_of(message),
                   at=_as_path(at) if at is not None else None)

    def warning(self, path: str | KeyPath, message: str, *, code: str) -> None:
        """Report a WARNING that changes nothing."""
        self._diag("warning", code, _as_path(path), message)

    # ----------------------------------------------------------------- internals

    def _apply(self, level: str, what: str, path: KeyPath, message: str, suggestion: str | None = None) -> None:
        code = f"{self.code_prefix}.{what}"
        if level == "error":
            self._fail(code, path, message, suggestion)
            return
        self.drops.append(path)
        if level == "warn":
            self._diag("warning", code, path, message + "; ignored", suggestion)

    def _diag(self, level: Literal["info", "warning", "error"], code: str, path: KeyPath, message: str,
              suggestion: str | None = None, *, at: KeyPath | None = None) -> None:
        source, line = self._locate(at if at is not None else path)
        self.diagnostics.add(level, code, message, component=self.component, field=format_path(path) or None,
                             source=source, line=line, key=join(self.key_prefix, path) or None,
                             suggestion=suggestion)

    def _fail(self, code: str, path: KeyPath, message: str, suggestion: str | None = None) -> None:
        source, line = self._locate(path)
        error = ConfigError(message, path=source, line=line, key=join(self.key_prefix, path) or None, code=code,
                            suggestion=suggestion)
        self.diagnostics.fail(error, component=self.component, field=format_path(path) or None)
