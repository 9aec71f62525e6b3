"""Tool schemas and system prompts written once per session, referenced by hash in each LLM request.

Hermes sends its whole tool list (tens of kilobytes of JSON schemas) and its system prompt with every
provider request; written as they come, they make most of the bytes of an ATOF file and of a stored
trajectory. Writers therefore replace such a value, inside a recorded request, by a reference

    {"$ref": "sha256:<64 hex digits of the SHA-256 of the value's canonical JSON>"}

and write the value itself once, in a ``definitions`` object (``{"sha256:…": <value>}``):

- ATOF: in the ``data`` of the first ``llm.call`` start of the session (in that file) whose request
  refers to it (``data.definitions``); every later start refers to it. ATOF 0.1 keeps ``data`` free-form,
  so events stay schema-valid.
- ATIF (the trajectory store and exported trajectories with LLM payloads): in
  ``extra.hermes.definitions`` of the trajectory document whose steps refer to it (an embedded
  subagent trajectory has its own).

What is referenced (:func:`shrink_request`): ``body.tools``, ``body.system`` and ``body.instructions``,
and the ``content`` of ``system`` / ``developer`` messages, when their JSON is at least
:data:`MIN_BYTES` long. Readers call :func:`resolve_request` (or :func:`resolve`) with the definitions in
scope to get the request exactly as it was recorded; the canonical JSON hash lets any reader check a
definition against its reference.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, MutableMapping
from typing import Any, Final

from .content import canonical_json

__all__ = ["DEFINITIONS_KEY", "MIN_BYTES", "REF_KEY", "digest", "is_ref", "resolve", "resolve_request",
           "shrink_request"]

REF_KEY: Final = "$ref"
"""The key of a reference object."""
DEFINITIONS_KEY: Final = "definitions"
"""``data.definitions`` (ATOF ``llm.call`` start) / ``extra.hermes.definitions`` (ATIF document)."""
PREFIX: Final = "sha256:"
MIN_BYTES: Final = 256
"""Values whose canonical JSON is shorter are written inline (a reference would save little)."""
_BODY_KEYS: Final = ("tools", "system", "instructions")
_HISTORY_KEYS: Final = ("messages", "input")
_PROMPT_ROLES: Final = frozenset({"system", "developer"})


def digest(value: Any) -> str:
    """``"sha256:<hex>"`` of ``value``'s canonical JSON (sorted keys, no spaces)."""
    return PREFIX + hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()


def is_ref(value: Any) -> bool:
    """Whether ``value`` is a reference object ``{"$ref": "sha256:…"}``."""
    return (isinstance(value, Mapping) and len(value) == 1 and isinstance(value.get(REF_KEY), str)
            and value[REF_KEY].startswith(PREFIX))


MEMO_ENTRIES: Final = 256
"""Values whose reference :func:`_ref_of` remembers (emptied when full)."""
MEMO_CHARS: Final = 1_000_000
"""Characters of canonical JSON the remembered values may hold together (emptied when full). The entries keep their
values alive: counted in entries alone, 256 stale tool lists (a new list of schema objects each time the engine's
part table starts again) would hold tens of megabytes no request uses any more."""
_memo: Final[dict[Any, tuple[Any, str | None]]] = {}
"""Identity key of a value → ``(what keeps the key's objects alive, its reference or None when it is short)``."""
_memo_chars: list[int] = [0]


def _memo_key(value: Any) -> Any:
    """The identity key of a definition value: a string itself; a list by the identities of its items (every
    request's tool list is a new list, of the same schema objects when the tools did not change: the engine
    converts each distinct schema once); anything else by its own identity."""
    cls = type(value)
    if cls is str:
        return value
    if cls is list:
        return (list, *map(id, value))
    return id(value)


def _ref_of(value: Any) -> str | None:
    """``"sha256:…"`` of ``value``'s canonical JSON, or ``None`` when that is shorter than :data:`MIN_BYTES`.

    Hermes sends the same tool schemas and system prompt with every request: rendering their canonical JSON and
    hashing it (tens of kilobytes) again for each request, in each writer, was most of an LLM call's export
    cost. The result is remembered by identity (see :func:`_memo_key`), with a reference to the objects the key
    names, so that no other object can take their ids while the entry lives. That is sound because scope events
    are immutable once published (every writer reads the same objects, none changes them).
    """
    key = _memo_key(value)
    hit = _memo.get(key)
    if hit is not None:
        return hit[1]
    text = canonical_json(value)
    ref = None if len(text) < MIN_BYTES else PREFIX + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    if len(_memo) >= MEMO_ENTRIES or _memo_chars[0] + len(text) > MEMO_CHARS:
        _memo.clear()
        _memo_chars[0] = 0
    _memo_chars[0] += len(text)
    _memo[key] = (tuple(value) if type(value) is list else value, ref)
    return ref


def _refer(value: Any, known: set[str], new: MutableMapping[str, Any]) -> Any:
    if value is None or isinstance(value, (bool, int, float)) or is_ref(value):
        return value
    ref = _ref_of(value)
    if ref is None:
        return value
    if ref not in known:
        known.add(ref)
        new[ref] = value
    return {REF_KEY: ref}


def shrink_request(request: Any, known: set[str], new: MutableMapping[str, Any]) -> Any:
    """``request`` (``{"body": …}``) with its tool schemas and system prompts replaced by references.

    ``known`` holds the references already defined where this request is written (updated); the
    values defined for the first time are added to ``new``. The request is copied only along the
    changed paths; anything that is not the expected shape is left as it is.
    """
    if not isinstance(request, Mapping):
        return request
    body = request.get("body")
    if not isinstance(body, Mapping):
        return request
    changed: dict[str, Any] = {}
    for key in _BODY_KEYS:
        value = body.get(key)
        if value is not None:
            ref = _refer(value, known, new)
            if ref is not value:
                changed[key] = ref
    for key in _HISTORY_KEYS:
        history = body.get(key)
        if not isinstance(history, list):
            continue
        out = None
        for index, message in enumerate(history):
            if isinstance(message, Mapping) and message.get("role") in _PROMPT_ROLES and "content" in message:
                content = _refer(message["content"], known, new)
                if content is not message["content"]:
                    out = out if out is not None else list(history)
                    out[index] = {**message, "content": content}
        if out is not None:
            changed[key] = out
    if not changed:
        return request
    return {**request, "body": {**body, **changed}}


def resolve(value: Any, definitions: Mapping[str, Any] | None) -> Any:
    """``value`` with every reference that ``definitions`` defines replaced by its value (recursively;
    an unknown reference stays as it is, so a reader can tell it apart)."""
    if not definitions:
        return value
    if isinstance(value, Mapping):
        if is_ref(value):
            found = definitions.get(value[REF_KEY])
            return value if found is None else found
        return {k: resolve(v, definitions) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, definitions) for v in value]
    return value


def resolve_request(request: Any, definitions: Mapping[str, Any] | None) -> Any:
    """A recorded request as it was sent: :func:`resolve` limited to the referencing places (fast)."""
    if not definitions or not isinstance(request, Mapping):
        return request
    body = request.get("body")
    if not isinstance(body, Mapping):
        return request
    changed: dict[str, Any] = {}
    for key in _BODY_KEYS:
        if is_ref(body.get(key)):
            changed[key] = resolve(body[key], definitions)
    for key in _HISTORY_KEYS:
        history = body.get(key)
        if isinstance(history, list) and any(isinstance(m, Mapping) and is_ref(m.get("content")) for m in history):
            changed[key] = [{**m, "content": resolve(m["content"], definitions)}
                            if isinstance(m, Mapping) and is_ref(m.get("content")) else m for m in history]
    return {**request, "body": {**body, **changed}} if changed else request
