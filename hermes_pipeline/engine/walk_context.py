"""What a walker of mappings and lists reads around a value: the context the text rules use (OBS-58, OBS-59).

The credential scrubber reads a credential in text from what stands around it: a value after a credential name,
the neighbours of an argument (``sshpass -p X``, ``--api-key X``, ``curl -u me:X``, ``mysql -pX``), the sibling that
names a value (``{"name": "API_KEY", "value": X}``). A walker of a mapping or a list meets one value at a time; this
module gives it that context, so that every walker (the payload sanitizer, the export walk, the JSON Lines log's
extras, the dashboard, alert messages, Hermes' payloads) hides what the text of the same structure hides, with the
same marker, and changes nothing else:

* :func:`key_value`: the key rule. Under a sensitive key (01 §8.2.4) a value is ``<redacted>``; under a strong
  credential name it is its credential's marker (:mod:`.named_values`); a number hidden so is the marker string.
* :func:`argv_context`: a list of strings that looks like a command line is read as the command a shell would run
  (its items joined by spaces, each quoted as ``shlex.join`` quotes it). What the text rules find there thanks to
  an item's neighbours (an option's value, ``user:password`` after ``-u``, ``-pSECRET``, ``setx NAME X``) becomes
  its marker inside that item: only the secret's span (``-p<marker>``, ``me:<marker>``).
* :func:`sibling_value`: the value of a name/value pair of a mapping (Kubernetes and ECS ``env`` entries,
  ``{"key": "password", "value": X}``, CloudFormation's ``ParameterKey`` / ``ParameterValue``) is read as the text
  rules read the pair's JSON text, the naming sibling first (a mapping's order carries no meaning).

Both contexts are judged by the text scrubber itself (:func:`~.scrub.find_spans` on a text made of the items), never
by a copy of its rules, so whatever pairing or client option it learns, the walkers know too. The result is the
value the walker then treats as it treats any value (scrubbed string by string, which keeps a marker as it is, and
cut to its caps): :func:`context_entries` and :func:`context_items` are the whole rule for a walker without fast
paths of its own, :func:`contextual_copy` the rule applied at every level of a structure.

Cost, on the hot paths (every tool call's arguments): a list is read as a command line only when its first item
looks like a command or an option (a short string without blanks) and every item is a string or a number, and a
clean command line is remembered (a set lookup next time); a mapping's value is read with a sibling only under a
key ending with ``value`` / ``Value`` and a sibling whose string is a credential name.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from .named_values import Piece, named_value_marker, pair_pieces, credential_key
from .scrub import (
    CLEAN_MAX_CHARS,
    REDACTED,
    SCRUB_MIN_CHARS,
    find_spans,
    is_sensitive_key,
    known_clean,
    long_clean,
    redaction_marker,
    replace_spans,
    scrub_text,
)
from .scrub_names import MAX_NAME_CHARS, credential_name

__all__ = [
    "argv_context",
    "context_entries",
    "context_items",
    "contextual_copy",
    "key_value",
    "plain_key",
    "sibling_value",
    "value_key",
]

ARGV_MAX_ITEMS: Final = 256
"""Longer lists are not read as a command line (each item is still scrubbed on its own)."""
COMMAND_MAX_CHARS: Final = 128
"""The longest first item of a list read as a command line (a command's path or an option)."""
_SAFE_WORDS: Final = re.compile(r"[\w@%+=:,./-]+(?: [\w@%+=:,./-]+)*", re.ASCII)
"""A line of words ``shlex.quote`` leaves bare, one space between each: the items joined are their shell command."""
_SAFE_WORD: Final = re.compile(r"[\w@%+=:,./-]+", re.ASCII)
_DOUBLE_QUOTED_OFF: Final = frozenset("\"\\$`")  # what a double-quoted shell word would not keep literally
_VALUE_ENDS: Final = ("value", "Value")
"""How the key of a pair's value ends (``value``, ``Value``, ``ParameterValue``, ``OptionValue``...): the keys whose
value is read with its siblings (the text rules say which pairings name a value)."""


# ---------------------------------------------------------------------------------------------
# The key rule
# ---------------------------------------------------------------------------------------------


def key_value(key: str, value: object, token_containers: bool = True) -> str | None:
    """What a walker puts under ``key`` instead of ``value`` by the key's rule, or ``None`` when the key leaves the
    value to be walked: ``<redacted>`` under a sensitive key (a key of the plural-token rule keeps ``None``, an
    ``int`` and a finite ``float``), what the pair's text hides replaced by its marker under a credential
    name (:mod:`.named_values`; a number so hidden becomes the marker, a JSON string). ``token_containers=False``: a dict, list or tuple under a
    key of the plural-token rule is walked instead (the dashboard's and alerts' own token breakdowns,
    ``{"old_tokens": {"prompt": 1200}}``: its entries are judged by their own keys)."""
    if is_sensitive_key(key, None):
        return REDACTED
    if is_sensitive_key(key, ""):  # the plural-token rule: a count stays
        cls = type(value)
        if value is None or cls is int or (cls is float and math.isfinite(value)):  # type: ignore[arg-type]
            return None
        if not token_containers and isinstance(value, (dict, list, tuple)):
            return None
        return REDACTED
    return named_value_marker(key, value)


_plain_keys: Final[set[str]] = set()
"""String keys found to need no rule (:func:`plain_key`): one set lookup next time."""
_count_keys: Final[set[str]] = set()
"""String keys whose one rule is the plural-token one (``prompt_tokens``...): a count under them stays."""
_PLAIN_KEYS_MAX: Final = 8192


def plain_key(key: object) -> bool:
    """Whether ``key`` leaves every value as it is for :func:`context_entries`: a string key that is no sensitive
    key, no credential name and no key of a pair's value (remembered, as are the keys of the plural-token
    rule alone)."""
    if key in _plain_keys:
        return True
    if type(key) is not str or len(key) > CLEAN_MAX_CHARS or key in _count_keys:
        return False
    if is_sensitive_key(key, None) or credential_key(key) or key.endswith(_VALUE_ENDS):
        return False
    if len(_plain_keys) + len(_count_keys) >= _PLAIN_KEYS_MAX:
        _plain_keys.clear()
        _count_keys.clear()
    if is_sensitive_key(key, ""):
        _count_keys.add(key)
        return False
    _plain_keys.add(key)
    return True


def value_key(key: object) -> bool:
    """Whether ``key`` can hold a name/value pair's value (read with its siblings: :func:`sibling_value`)."""
    return type(key) is str and key.endswith(_VALUE_ENDS)


def _context_pieces(item: str, pieces: list[Piece]) -> list[Piece]:
    """The ``pieces`` the item's own text does not already hold a credential over: an item scrubbed on its own
    keeps its own reading wherever it finds one (the walker scrubs it afterwards), the context adds the rest."""
    if len(item) < SCRUB_MIN_CHARS or (len(item) <= CLEAN_MAX_CHARS and item in known_clean):
        return pieces
    try:
        own = find_spans(item)
    except Exception:
        return pieces
    if not own:
        return pieces
    return [p for p in pieces if not any(s < p[1] and p[0] < e for s, e, _ in own)]


def _replaced(item: object, text: str, pieces: list[Piece]) -> object:
    """``item`` (whose text is ``text``) with ``pieces`` replaced by their markers; ``item`` itself when nothing is
    left to replace. A number becomes a string (the marker in it)."""
    if type(item) is str:
        pieces = _context_pieces(text, pieces)
        if not pieces:
            return item
    return replace_spans(text, pieces)


# ---------------------------------------------------------------------------------------------
# Lists read as a command line
# ---------------------------------------------------------------------------------------------


def _word(text: str) -> tuple[str, int]:
    """``text`` as one word of a shell command and where its characters start in it: bare when ``shlex.quote``
    leaves it so, else single-quoted, else (it holds a single quote) double-quoted when that keeps it literally;
    else bare (no quoting keeps its offsets)."""
    if _SAFE_WORD.fullmatch(text):
        return text, 0
    if "'" not in text:
        return f"'{text}'", 1
    if _DOUBLE_QUOTED_OFF.isdisjoint(text):
        return f'"{text}"', 1
    return text, 0


def _command_line(items: Sequence[Any], joined: str | None) -> tuple[str, list[str], bool] | None:
    """The command line of ``items``, each item's text, and whether the line is the items joined by single spaces
    (no item needed quoting); ``None`` when an item is neither a string nor a number. ``joined``: the items (all
    strings) joined by spaces, when known."""
    if joined is not None:
        texts: list[str] = list(items)
    else:
        texts = []
        for item in items:
            cls = type(item)
            if cls is str:
                texts.append(item)
            elif cls is int or cls is float:
                texts.append(repr(item))
            else:
                return None
        joined = " ".join(texts)
    if _SAFE_WORDS.fullmatch(joined):
        return joined, texts, True
    return " ".join(_word(text)[0] for text in texts), texts, False


def _starts(texts: list[str], bare: bool) -> list[int]:
    """Where each item's text starts in the command line :func:`_command_line` made of ``texts``."""
    starts: list[int] = []
    at = 0
    for text in texts:
        word, offset = (text, 0) if bare else _word(text)
        starts.append(at + offset)
        at += len(word) + 1
    return starts


def _clean(line: str) -> bool:
    """Whether the scrubber leaves ``line`` as it is (remembered by the scrubber, so asking again is a lookup)."""
    n = len(line)
    if n < SCRUB_MIN_CHARS or (line in known_clean if n <= CLEAN_MAX_CHARS else line in long_clean):
        return True
    try:
        return scrub_text(line) is line
    except Exception:
        return True  # each item is still scrubbed on its own (and a failure there is the failure marker)


_quiet_lines: Final[set[str]] = set()
"""Command lines of string items, none needing quoting, in which the scrubber found nothing: such a line is the
items joined by single spaces, and no other list of strings joins to it (no item holds a space, none is empty)."""
_QUIET_MAX: Final = 8192


def argv_context(items: Sequence[Any]) -> list[Any] | None:
    """``items`` with what the text rules read as a credential in their command line replaced by its marker, only
    in the item and over the span the secret takes there (``["mysql", "-p<marker>"]``, ``["curl", "-u",
    "me:<marker>"]``); ``None`` when ``items`` is no command line or its line holds nothing the items do not hold
    on their own. A command line has 2 to :data:`ARGV_MAX_ITEMS` items, each a string or a number, the first a
    string of 1 to :data:`COMMAND_MAX_CHARS` printable characters without a space (a command or an option). A
    credential whose span runs over several items is replaced in each of them by the same marker; a number item
    that holds one becomes a string."""
    n = len(items)  # every list of every payload passes here: the cheap checks first
    if n < 2 or n > ARGV_MAX_ITEMS:
        return None
    first = items[0]
    if type(first) is not str or len(first) > COMMAND_MAX_CHARS or " " in first:
        return None
    joined: str | None
    try:
        joined = " ".join(items)
    except TypeError:  # a number among the items (or anything else: decided below)
        joined = None
    else:
        if joined in _quiet_lines:  # (a line there passed every check below)
            return None
    if not first or not first.isprintable():
        return None
    return _read_argv(items, joined)


def _read_argv(items: Sequence[Any], joined: str | None) -> list[Any] | None:
    """:func:`argv_context` past its first checks."""
    made = _command_line(items, joined)
    if made is None:
        return None
    line, texts, bare = made
    if _clean(line):
        if bare and joined is not None and len(line) <= CLEAN_MAX_CHARS:
            if len(_quiet_lines) >= _QUIET_MAX:
                _quiet_lines.clear()
            _quiet_lines.add(line)
        return None
    try:
        spans = find_spans(line)
    except Exception:
        return None
    out: list[Any] | None = None
    first = 0
    for index, (text, start) in enumerate(zip(texts, _starts(texts, bare))):
        end = start + len(text)
        pieces: list[Piece] = []
        while first < len(spans) and spans[first][1] <= start:
            first += 1  # spans end in order: one before this item is before every later one
        for s, e, secret in spans[first:]:
            if s >= end:
                break
            if e > start:
                pieces.append((max(s, start) - start, min(e, end) - start, secret))
        if not pieces:
            continue
        item = items[index]
        new = _replaced(item, text, pieces)
        if new is not item:
            if out is None:
                out = list(items)
            out[index] = new
    return out


def context_items(items: Sequence[Any]) -> Sequence[Any]:
    """The items a walker walks for the list or tuple ``items``: :func:`argv_context`'s, or ``items`` itself."""
    read = argv_context(items)
    return items if read is None else read


# ---------------------------------------------------------------------------------------------
# Name/value pairs of a mapping
# ---------------------------------------------------------------------------------------------


def sibling_value(mapping: Mapping[Any, Any], key: str, value: object) -> object:
    """``value``, kept under ``key`` in ``mapping``, as the text rules read it once a sibling names it: what they
    hide (in the JSON text of the pair, the naming sibling first) replaced by its marker; ``value`` itself when no
    sibling names it or nothing is hidden. A number hidden so becomes its marker (a JSON string)."""
    cls = type(value)
    if not (cls is str or cls is int or cls is float) or not value_key(key):
        return value
    if cls is str and not value:
        return value
    for name_key, name in mapping.items():
        if type(name) is not str or type(name_key) is not str or name_key == key or not 0 < len(name) <= \
                MAX_NAME_CHARS or not credential_name(name):
            continue
        try:
            pieces = pair_pieces(key, value, (name_key, name))  # type: ignore[arg-type]  # a str, int or float
        except Exception:
            continue
        if pieces:
            new = _replaced(value, value if isinstance(value, str) else json.dumps(value), list(pieces))
            if new is not value:
                return new
    return value


def context_entries(mapping: Mapping[Any, Any], token_containers: bool = True) -> Iterable[tuple[Any, Any]]:
    """The entries a walker walks for ``mapping``: each value replaced as the key rule (:func:`key_value`, with
    ``token_containers``) or a naming sibling (:func:`sibling_value`) says; the mapping's own items when no key asks
    for a rule."""
    plain = _plain_keys
    counts = _count_keys
    for key, item in mapping.items():
        if key in plain:
            continue
        if key in counts:  # a count stays (and, unless token_containers, a container is walked)
            cls = type(item)
            if item is None or cls is int or cls is float and math.isfinite(item) or not token_containers and (
                    cls is dict or cls is list or cls is tuple):
                continue
            break
        if not plain_key(key):
            break
    else:
        return mapping.items()
    out: list[tuple[Any, Any]] = []
    for key, item in mapping.items():
        if not plain_key(key):
            if type(key) is str:
                name = key
            else:
                try:
                    name = str(key)
                except Exception:
                    out.append((key, REDACTED))
                    continue
            marker = key_value(name, item, token_containers)
            if marker is not None:
                item = marker
            elif value_key(name):
                item = sibling_value(mapping, name, item)
        out.append((key, item))
    return out


def contextual_copy(value: Any, max_nodes: int = 10_000) -> Any:
    """``value`` with the context rules applied at every level of its dicts, lists and tuples: a copy where a rule
    replaced something, else the same object; strings are not scrubbed here (the caller scrubs the result). A
    container met again on its own path (a cycle), and everything past the first ``max_nodes`` containers, are
    kept as they are."""
    budget = [max_nodes]
    path: set[int] = set()

    def copy(node: Any) -> Any:
        cls = type(node)
        if not (cls is dict or cls is list or cls is tuple) or id(node) in path or budget[0] <= 0:
            return node
        budget[0] -= 1
        path.add(id(node))
        result: Any
        if cls is dict:
            entries = {key: copy(item) for key, item in context_entries(node)}
            result = node if all(entries[key] is item for key, item in node.items()) else entries
        else:
            walked = [copy(item) for item in context_items(node)]
            same = all(new is old for new, old in zip(walked, node))
            result = node if same else walked if cls is list else tuple(walked)
        path.discard(id(node))
        return result

    return copy(value)
