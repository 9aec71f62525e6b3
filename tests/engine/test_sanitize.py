"""Tests for the observer-payload sanitizer and value scrubber (spec 01 §8, §7.9).

Requirement ids (OBS-n) are cited in test names or docstrings.
"""

from __future__ import annotations

import array
import dataclasses
import enum
import json
import math
import string
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import hermes_pipeline.engine.sanitize as sz
import hermes_pipeline.engine.scrub as sc
from tests.engine._scrub_support import scaling_ratio
from hermes_pipeline.engine.sanitize import (
    build_error_field as _build_error_field,
    build_request_field as _build_request_field,
    payload_max_chars,
)
from hermes_pipeline.engine.scrub import (
    REDACTED,
    REDACTION_FAILED,
    is_sensitive_key,
    safe_scrub,
    scrub_message,
    scrub_prompt,
    scrub_text,
    truncate,
    url_target,
)
from hermes_pipeline.testing import unmark

from tests._payloads import payload_limit


def _unmarked(fn: Any) -> Any:
    """The function with its result's ``<redacted:xxxxxxxx>`` markers written ``<redacted>`` (these tests check
    where redactions are, not which secret each one hides: tests/engine/test_scrub_precision.py does)."""
    return lambda *args, **kwargs: unmark(fn(*args, **kwargs))


scrub_text = _unmarked(scrub_text)
safe_scrub = _unmarked(safe_scrub)
scrub_message = _unmarked(scrub_message)
scrub_prompt = _unmarked(scrub_prompt)
url_target = _unmarked(url_target)
build_error_field = _unmarked(_build_error_field)
build_request_field = _unmarked(_build_request_field)

# Results are JSON values of unknown shape; typed as Any so tests can index them freely.
sanitize: Callable[[object], Any] = _unmarked(sz.sanitize)
jsonable: Callable[..., Any] = sz.jsonable

ENV = "HERMES_PLUGIN_PAYLOAD_MAX_CHARS"
ENVELOPE_KEYS = {"_truncated", "original_type", "preview"}


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _default_limit() -> Iterator[None]:
    with payload_limit(None):
        yield


def encode(value: object) -> str:
    """The spec's encoding (§8.2.2 step 3)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def assert_json_only(value: Any) -> None:
    """OBS-51: only dict/list/str/int/float/bool/None, with str keys, exact types."""
    t = type(value)
    if t is dict:
        for k, v in value.items():
            assert type(k) is str
            assert_json_only(v)
    elif t is list:
        for v in value:
            assert_json_only(v)
    elif t is float:
        assert math.isfinite(value)
    else:
        assert value is None or t in (str, int, bool), t


def is_envelope(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == ENVELOPE_KEYS and value["_truncated"] is True


def pass2_encoding(value: object) -> str:
    return encode(jsonable(value, max_str=sz.PASS2_MAX_STR, max_items=sz.PASS2_MAX_ITEMS))


def nest(value: object, levels: int, key: str = "k") -> object:
    for _ in range(levels):
        value = {key: value}
    return value


@dataclasses.dataclass
class Box:
    value: Any
    label: str = "box"


class PBox(pydantic.BaseModel):
    value: Any = None
    label: str = "pbox"


class Plain:
    """Provider-like object converted through ``__dict__`` (rule 7.4)."""

    def __init__(self, value: object) -> None:
        self.value = value
        self._private = "hidden-private"


class StrOnly:
    """No ``__dict__``: converted through ``str()`` (rule 7.5)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


class BadStr:
    __slots__ = ()

    def __str__(self) -> str:
        raise RuntimeError("boom")


# ---------------------------------------------------------------------------------------------
# §8.2.1 constants, env var (OBS-54)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, 50_000),
        ("2000", 2000),
        ("  3000 ", 3000),
        ("999", 1000),
        ("0", 1000),
        ("-5", 1000),
        ("abc", 50_000),
        ("", 50_000),
        ("1500.5", 50_000),
        ("123456", 123_456),
    ],
)
def test_obs54_payload_max_chars_env_parsing(
    monkeypatch: pytest.MonkeyPatch, raw: str | None, expected: int
) -> None:
    """§8.2.1: default 50,000; minimum 1,000; non-integer -> 50,000."""
    if raw is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, raw)
    assert payload_max_chars() == expected


def test_obs54_env_read_on_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-54: L is read each time the sanitizer runs."""
    value = ["x" * 900, "y" * 900]
    monkeypatch.setenv(ENV, "100000")
    assert sanitize(value) == value
    monkeypatch.setenv(ENV, "1000")
    out = sanitize(value)
    assert is_envelope(out)
    assert len(out["preview"]) == 1000
    monkeypatch.delenv(ENV)
    assert sanitize(value) == value


def test_spec_constants() -> None:
    assert (sz.MAX_DEPTH, sz.PASS1_MAX_STR, sz.PASS1_MAX_ITEMS) == (8, 8000, 200)
    assert (sz.PASS2_MAX_STR, sz.PASS2_MAX_ITEMS) == (1000, 50)
    assert (sz.DEFAULT_PAYLOAD_MAX_CHARS, sz.MIN_PAYLOAD_MAX_CHARS) == (50_000, 1000)
    assert (REDACTED, REDACTION_FAILED, sz.SERIALIZATION_FAILED) == (
        "<redacted>",
        "<redaction failed>",
        "<serialization failed>",
    )


# ---------------------------------------------------------------------------------------------
# §8.2.4 sensitive-key rule (OBS-56)
# ---------------------------------------------------------------------------------------------

EXACT_NAMES = (
    "apikey authorization proxyauthorization cookie cookies setcookie headers extraheaders "
    "requestheaders httpheaders token accesstoken refreshtoken oauthtoken idtoken sessiontoken "
    "clientsecret password passwd secret secretkey secretaccesskey privatekey credentials "
    "passwords secrets privatekeys secretkeys apikeys apitokens accesstokens refreshtokens "
    "authtokens oauthtokens bearertokens sessiontokens idtokens clientsecrets"
).split()


def test_obs56_exact_names_are_the_38_of_the_spec() -> None:
    assert len(EXACT_NAMES) == 38
    assert sc._EXACT_SENSITIVE_KEYS == frozenset(EXACT_NAMES)
    for name in EXACT_NAMES:
        # (a) wins over (c): exact plural names are sensitive even for numeric values.
        assert is_sensitive_key(name, 1), name
        assert is_sensitive_key(name.upper(), None), name


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("X-Api-Key", "v", True),  # -> xapikey, suffix apikey
        ("set_cookie", "v", True),  # -> setcookie, exact
        ("Set-Cookie", 1, True),
        ("Proxy-Authorization", "v", True),
        ("max_tokens", 123, False),  # (c) numeric counter kept
        ("max_tokens", 1.5, False),
        ("max_tokens", None, False),
        ("max_tokens", "abc", True),  # (c) string value redacted
        ("max_tokens", True, True),  # bool counts as sensitive
        ("prompt_tokens", 10, False),
        ("prompt_tokens", [1], True),
        ("prompt_tokens", {"a": 1}, True),
        ("ssh_private_key", "v", True),  # hermes_pipeline's `privatekey` suffix
        ("ssh_private_keys", 1, True),
        ("OPENAI_API_KEY", 1, True),
        ("github_token", 1, True),
        ("x_auth", 1, True),
        ("oauth", 1, True),
        ("db_password", 1, True),
        ("user_passwd", 1, True),
        ("aws_secret", 1, True),
        ("gcp_credential", 1, True),
        ("model", "gpt", False),
        ("messages", [], False),
        ("author", "x", False),
        ("keyboard", "x", False),
        ("monkey", "x", False),
        ("token_count", 5, False),
        ("tokenizer", "x", False),
        ("", "x", False),
    ],
)
def test_obs56_sensitive_key_rule(key: str, value: object, expected: bool) -> None:
    """§8.2.4 (a), (b), (c) on the spec's examples and neighbours."""
    assert is_sensitive_key(key, value) is expected


def test_obs56_normalization_uses_isalnum() -> None:
    """Keys are lowercased and only alphanumerics (str.isalnum) are kept."""
    assert sc.normalize_key("X-Api-Key") == "xapikey"
    assert sc.normalize_key("set_cookie") == "setcookie"
    assert sc.normalize_key("Ключ_API.key") == "ключapikey"
    assert is_sensitive_key("Ключ_API.key", 1)


def test_obs56_sensitive_value_redacted_without_traversal() -> None:
    """OBS-56: the key is kept, the value becomes exactly <redacted>, and is not traversed."""
    calls: list[str] = []

    class Spy:
        def model_dump(self, **kwargs: Any) -> dict[str, Any]:
            calls.append("model_dump")
            return {}

    out = sanitize(
        {
            "headers": {"Authorization": "Bearer abc", "X-Trace": "t"},
            "api_key": Spy(),
            "max_tokens": 123,
            "prompt_tokens": "abc",
            "model": "gpt",
        }
    )
    assert out == {
        "headers": REDACTED,
        "api_key": REDACTED,
        "max_tokens": 123,
        "prompt_tokens": REDACTED,
        "model": "gpt",
    }
    assert calls == []


# ---------------------------------------------------------------------------------------------
# §8.2.3 conversion rules
# ---------------------------------------------------------------------------------------------


def test_rule3_truncation_suffix_format() -> None:
    assert jsonable("a" * 10, max_str=4, max_items=5) == "aaaa...[truncated 6 chars]"
    assert jsonable("a" * 4, max_str=4, max_items=5) == "aaaa"
    assert truncate("abcdef", 2) == "ab...[truncated 4 chars]"
    assert truncate("ab", 2) == "ab"


def test_rule3_scrub_runs_before_truncation() -> None:
    """§8.2.5: scrubbing runs before truncation, so a secret across the cut is not half-kept."""
    text = "x" * 7990 + " Bearer ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    out = jsonable(text, max_str=8000, max_items=200)
    scrubbed = sc.scrub_text(text)
    assert scrubbed.startswith("x" * 7990 + " Bearer <redacted:")
    cut = scrubbed.index("<redacted")  # the marker crosses the bound: the cut falls before it, not inside it
    assert out == scrubbed[:cut] + f"...[truncated {len(scrubbed) - cut} chars]"
    assert "ABCDEF" not in out


def test_rule1_depth_marker_format() -> None:
    """Rule 1: depth > 8 -> <TypeName depth limit>; the root has depth 0."""
    out = jsonable(nest(42, 9), max_str=100, max_items=10)
    inner = out
    for _ in range(9):
        assert isinstance(inner, dict)
        inner = inner["k"]
    assert inner == "<int depth limit>"

    out = jsonable(nest({"leaf": 1}, 9), max_str=100, max_items=10)
    inner = out
    for _ in range(9):
        inner = inner["k"]
    assert inner == "<dict depth limit>"

    out = jsonable(nest(42, 8), max_str=100, max_items=10)
    for _ in range(8):
        out = out["k"]
    assert out == 42


def test_rule1_depth_marker_for_lists_and_objects() -> None:
    value: object = [1]
    for _ in range(9):
        value = [value]
    out = jsonable(value, max_str=100, max_items=10)
    for _ in range(9):
        out = out[0]
    assert out == "<list depth limit>"
    out = jsonable(nest(Box(1), 9), max_str=100, max_items=10)
    for _ in range(9):
        out = out["k"]
    assert out == "<Box depth limit>"


def test_rule2_scalars_unchanged() -> None:
    for v in (None, True, False, 0, -7, 2**62, 1.5, -0.0):
        out = jsonable(v, max_str=10, max_items=10)
        assert out == v and type(out) is type(v)


def test_rule2_nonfinite_floats_become_strings() -> None:
    """Addition: NaN/Infinity become strings so allow_nan=False encoding works."""
    out = sanitize({"a": math.nan, "b": math.inf, "c": -math.inf, "d": 1.25})
    assert out == {"a": "NaN", "b": "Infinity", "c": "-Infinity", "d": 1.25}
    json.dumps(out, allow_nan=False)


def test_rule2_scalar_subclasses_become_plain() -> None:
    class Color(enum.IntEnum):
        RED = 1

    class Mode(str, enum.Enum):
        FAST = "fast"

    out = sanitize({"c": Color.RED, "m": Mode.FAST, Mode.FAST: 1})
    assert out == {"c": 1, "m": "fast", "Mode.FAST": 1}
    assert type(out["c"]) is int and type(out["m"]) is str


def test_rule2_huge_int_is_marked_not_crashing() -> None:
    out = sanitize({"n": 10**5000})
    assert out == {"n": f"<int {(10**5000).bit_length()} bits>"}


def test_rule4_bytes_marker() -> None:
    """Rule 4: bytes, bytearray, memoryview -> <N bytes> (N = length in bytes)."""
    assert jsonable(b"abc", max_str=10, max_items=10) == "<3 bytes>"
    assert jsonable(bytearray(5), max_str=10, max_items=10) == "<5 bytes>"
    assert jsonable(memoryview(b"abcd"), max_str=10, max_items=10) == "<4 bytes>"
    arr = memoryview(array.array("i", [1, 2, 3]))
    assert jsonable(arr, max_str=10, max_items=10) == f"<{3 * arr.itemsize} bytes>"
    assert sanitize({"img": b"Bearer secret-in-bytes"}) == {"img": "<22 bytes>"}


def test_rule5_mapping_truncated_items() -> None:
    """Rule 5: at index == cap add _truncated_items = entries not emitted, and stop."""
    value = {f"k{i}": i for i in range(205)}
    out = jsonable(value, max_str=100, max_items=200)
    assert isinstance(out, dict)
    assert list(out)[:200] == [f"k{i}" for i in range(200)]
    assert out["_truncated_items"] == 5
    assert len(out) == 201
    exact = {f"k{i}": i for i in range(200)}
    assert jsonable(exact, max_str=100, max_items=200) == exact


def test_rule5_keys_are_str_and_scrubbed() -> None:
    out = sanitize({1: "a", (1, 2): "b", None: "c", "Bearer XYZSECRETXYZ": "d"})
    assert out == {"1": "a", "(1, 2)": "b", "None": "c", "Bearer <redacted>": "d"}


def test_rule5_non_dict_mapping() -> None:
    from collections import OrderedDict
    from types import MappingProxyType

    assert sanitize(MappingProxyType({"a": 1, "password": "p"})) == {"a": 1, "password": REDACTED}
    assert sanitize(OrderedDict(b=1, a=2)) == {"b": 1, "a": 2}


def test_rule6_sequence_truncated_items() -> None:
    """Rule 6: first cap items plus {"_truncated_items": dropped}, for all four types."""
    for seq in (list(range(205)), tuple(range(205)), set(range(205)), frozenset(range(205))):
        out = jsonable(seq, max_str=10, max_items=200)
        assert isinstance(out, list)
        assert len(out) == 201
        assert out[-1] == {"_truncated_items": 5}
        assert all(isinstance(x, int) for x in out[:200])
    assert jsonable([1, 2, 3], max_str=10, max_items=3) == [1, 2, 3]
    assert jsonable((1, 2, 3), max_str=10, max_items=2) == [1, 2, {"_truncated_items": 1}]


def test_rule7_model_dump_json_mode() -> None:
    """Rule 7.1 / OBS-63: pydantic objects go through model_dump(mode="json")."""
    import datetime

    class Msg(pydantic.BaseModel):
        role: str
        when: datetime.date
        api_key: str

    out = sanitize(Msg(role="assistant", when=datetime.date(2024, 1, 2), api_key="k"))
    assert out == {"role": "assistant", "when": "2024-01-02", "api_key": REDACTED}


def test_rule7_model_dump_typeerror_fallbacks() -> None:
    """Rule 7.1: TypeError on (mode, warnings) -> retry (mode) -> retry ()."""
    seen: list[dict[str, Any]] = []

    class ModeOnly:
        def model_dump(self, mode: str = "python") -> dict[str, Any]:
            seen.append({"mode": mode})
            return {"via": "mode-only", "mode": mode}

    class NoKwargs:
        def model_dump(self) -> dict[str, Any]:
            seen.append({})
            return {"via": "no-kwargs"}

    assert sanitize(ModeOnly()) == {"via": "mode-only", "mode": "json"}
    assert sanitize(NoKwargs()) == {"via": "no-kwargs"}
    assert seen == [{"mode": "json"}, {}]


def test_rule7_model_dump_failures_fall_through() -> None:
    """Rule 7: a step that raises falls through to the next one."""

    class AlwaysTypeError:
        def __init__(self) -> None:
            self.public = 1
            self._hidden = 2

        def model_dump(self, **kwargs: Any) -> None:
            raise TypeError("nope")

    class ValueErr:
        __slots__ = ()

        def model_dump(self, **kwargs: Any) -> None:
            raise ValueError("nope")

        def __str__(self) -> str:
            return "valueerr token=ZXSECRET123"

    assert sanitize(AlwaysTypeError()) == {"public": 1}
    assert sanitize(ValueErr()) == "valueerr token=<redacted>"


def test_rule7_dataclass_namespace_dict() -> None:
    """Rules 7.2–7.4: dataclasses.asdict, vars(SimpleNamespace), public __dict__."""
    assert sanitize(Box(value=Box(value=1))) == {
        "value": {"value": 1, "label": "box"},
        "label": "box",
    }
    assert sanitize(SimpleNamespace(a=1, _b=2, password="x")) == {
        "a": 1,
        "_b": 2,
        "password": REDACTED,
    }
    assert sanitize(Plain("v")) == {"value": "v"}


def test_rule7_str_fallback_scrubbed_and_cut_without_suffix() -> None:
    """Rule 7.5: str(obj), value-scrubbed, cut to the string cap with no suffix."""
    out = jsonable(StrOnly("x" * 9000), max_str=8000, max_items=200)
    assert out == "x" * 8000
    out = jsonable(StrOnly("Bearer ABCDEFSECRET " + "y" * 20), max_str=20, max_items=5)
    assert out == sc.scrub_text("Bearer ABCDEFSECRET " + "y" * 20)[:20]
    assert out.startswith("Bearer <redacted")


def test_rule7_raising_str_does_not_crash() -> None:
    assert sanitize(BadStr()) == "<unserializable BadStr>"
    assert sanitize({"a": [BadStr()]}) == {"a": ["<unserializable BadStr>"]}


def test_rule7_raising_dict_and_model_dump_do_not_crash() -> None:
    class BadDict:
        @property
        def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
            raise RuntimeError("no dict")

        def __str__(self) -> str:
            return "bad-dict"

    class BadEverything:
        def model_dump(self, **kwargs: Any) -> None:
            raise RuntimeError("x")

        @property
        def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
            raise RuntimeError("y")

        def __str__(self) -> str:
            raise RuntimeError("z")

    assert sanitize(BadDict()) == "bad-dict"
    assert sanitize(BadEverything()) == "<unserializable BadEverything>"


def test_rule5_mapping_whose_iteration_raises() -> None:
    from collections.abc import Mapping

    class Broken(Mapping[str, int]):
        def __getitem__(self, key: str) -> int:
            raise KeyError(key)

        def __iter__(self) -> Iterator[str]:
            yield "ok"
            raise RuntimeError("broken")

        def __len__(self) -> int:
            return 2

    assert sanitize({"m": Broken(), "n": 1}) == {"m": "<unserializable Broken>", "n": 1}


# ---------------------------------------------------------------------------------------------
# Cycles and pathological shapes
# ---------------------------------------------------------------------------------------------


def test_cycle_self_referencing_dict_hits_depth_limit() -> None:
    d: dict[str, Any] = {"name": "loop"}
    d["self"] = d
    out = sanitize(d)
    inner = out
    for _ in range(8):  # dicts at depths 0..7 keep their contents
        assert inner["name"] == "loop"
        inner = inner["self"]
    # the dict at depth 8 is converted, its values (depth 9) are depth markers
    assert inner == {"name": "<str depth limit>", "self": "<dict depth limit>"}


def test_cycle_object_dict_refers_to_itself() -> None:
    class Node:
        def __init__(self) -> None:
            self.me = self

    out = sanitize(Node())
    # Node@0 -> its __dict__@1 -> Node@2 -> ... -> Node@8 -> its __dict__@9 = marker.
    for _ in range(3):
        out = out["me"]
    assert out == {"me": "<dict depth limit>"}


def test_cycle_wide_self_reference_terminates_with_envelope() -> None:
    """A list holding itself 200 times would expand to 200**8 nodes; must stay bounded."""
    x: list[Any] = []
    x.extend([x] * 200)
    out = sanitize(x)
    assert is_envelope(out)
    assert out["original_type"] == "list"
    preview = out["preview"]
    assert len(preview) == 50_000
    assert preview.startswith("[[[[[[[[[")
    assert "<list depth limit>" in preview


def test_budget_abort_preview_matches_full_pass2_encoding() -> None:
    """§8.2.2 step 5: the preview is the first L chars of the (full) pass-2 encoding."""
    value = {f"k{i}": [f"item {i}-{j} " * 8 for j in range(60)] for i in range(60)}
    with payload_limit("1000"):
        out = sanitize(value)
    assert is_envelope(out)
    assert out["preview"] == pass2_encoding(value)[:1000]


# ---------------------------------------------------------------------------------------------
# §8.2.2 two-pass algorithm
# ---------------------------------------------------------------------------------------------


def test_pass1_result_returned_when_within_limit() -> None:
    value = {"messages": [{"role": "user", "content": "hello"}], "n": 3}
    assert sanitize(value) == value


@pytest.mark.parametrize("leaf", [0, 7, None, True, False, "", "s", 1.5])
def test_pass1_returned_when_exactly_at_limit(leaf: object) -> None:
    """§8.2.2 step 3: length <= L returns pass 1, also when the encoding is exactly L long
    (guards the size budget against over-estimating small leaves)."""
    for value in ({f"k{i:03d}": leaf for i in range(200)}, [leaf] * 199 + [[leaf] * 200]):
        limit = len(encode(value))
        if limit < 1000:
            continue
        with payload_limit(str(limit)):
            assert sanitize(value) == value
        with payload_limit(str(limit - 1)):
            assert sanitize(value) != value


def test_pass2_huge_strings() -> None:
    """Pass 1 (8,000-char strings) exceeds L; pass 2 (1,000-char strings) fits."""
    value = ["x" * 60_000 for _ in range(10)]
    out = sanitize(value)
    assert out == ["x" * 1000 + "...[truncated 59000 chars]"] * 10
    assert len(encode(out)) <= 50_000


def test_pass2_collections() -> None:
    value = [10**8 + i for i in range(300)]  # pass 1: 200 x 11 chars > 1000
    with payload_limit("1000"):
        out = sanitize(value)
    assert out == value[:50] + [{"_truncated_items": 250}]


def test_envelope_shape_and_preview() -> None:
    value = tuple("é" * 2000 for _ in range(100))
    with payload_limit("1000"):
        out = sanitize(value)
    assert out == {
        "_truncated": True,
        "original_type": "tuple",
        "preview": pass2_encoding(value)[:1000],
    }
    assert "é" in out["preview"]  # non-ASCII kept literal


def test_obs55_serialization_failure_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-55: encoding failure -> <serialization failed>, never str(payload).

    Payloads of plain JSON types that clearly fit are returned without encoding them (they
    cannot fail to encode), so the failure is provoked with values that need conversion.
    """

    class FailingJson:
        @staticmethod
        def dumps(*args: Any, **kwargs: Any) -> str:
            raise ValueError("cannot encode")

    monkeypatch.setattr(sz, "json", FailingJson)
    assert sanitize({"a": "Bearer SECRETSECRET", "b": {"set"}}) == "<serialization failed>"
    assert build_request_field({"model": "m", "stop": {"set"}}) == {
        "method": "POST",
        "body": "<serialization failed>",
    }


def test_obs60_scrub_failure_yields_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-60: a scrub that raises yields <redaction failed>, never the raw text."""

    def boom(text: str) -> str:
        raise RuntimeError("regex engine exploded")

    monkeypatch.setattr(sc, "scrub_text", boom)
    sz._str_key_entry.cache_clear()
    try:
        assert safe_scrub("Bearer SECRET") == REDACTION_FAILED
        assert sanitize({"zzunique-key": "raw SECRET text"}) == {
            REDACTION_FAILED: REDACTION_FAILED
        }
        assert scrub_message("raw") == REDACTION_FAILED
        assert scrub_prompt("raw") == ""  # OBS-64
        assert url_target("https://h/p") == REDACTION_FAILED
    finally:
        sz._str_key_entry.cache_clear()


def test_obs51_provider_response_shape() -> None:
    """OBS-51/OBS-63: tool-call objects are normalized structurally, never left raw."""

    @dataclasses.dataclass
    class Function:
        name: str
        arguments: str

    class ToolCall(pydantic.BaseModel):
        id: str
        type: str = "function"
        function: dict[str, str]

    response = {
        "model": "gpt-x",
        "finish_reason": "tool_calls",
        "assistant_message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                ToolCall(id="c1", function={"name": "f", "arguments": '{"password": "pw1"}'}),
                SimpleNamespace(id="c2", function=Function("g", '{"q": 1}')),
            ],
        },
        "usage": {"prompt_tokens": 10, "total_tokens": 12},
    }
    out = sanitize(response)
    assert_json_only(out)
    calls = out["assistant_message"]["tool_calls"]
    assert calls[0] == {
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": '{"password": "<redacted>"}'},
    }
    assert calls[1] == {"id": "c2", "function": {"name": "g", "arguments": '{"q": 1}'}}
    assert out["usage"] == {"prompt_tokens": 10, "total_tokens": 12}


# ---------------------------------------------------------------------------------------------
# §8.3 field builders (OBS-61, OBS-62)
# ---------------------------------------------------------------------------------------------


def test_obs61_build_request_field() -> None:
    kwargs = {
        "model": "gpt-x",
        "messages": [{"role": "user", "content": "hi, my key is sk-ZXABCDEFGHIJKLMNOP"}],
        "max_tokens": 256,
        "timeout": 30.0,
        "http_client": object(),
        "extra_headers": {"Authorization": "Bearer ZXTOKEN"},
    }
    out = build_request_field(kwargs)
    assert out == {
        "method": "POST",
        "body": {
            "model": "gpt-x",
            "messages": [{"role": "user", "content": "hi, my key is <redacted>"}],
            "max_tokens": 256,
            "extra_headers": REDACTED,
        },
    }
    assert "timeout" in kwargs  # the caller's dict is not modified


def test_obs62_build_error_field() -> None:
    """OBS-62: type unchanged; message scrubbed then cut to 8,000 with the suffix."""
    out = build_error_field("ContentPolicyBlocked", "401: Bearer ZXSECRETTOKEN rejected")
    assert out == {"type": "ContentPolicyBlocked", "message": "401: Bearer <redacted> rejected"}
    long = build_error_field("RateLimitError", "Bearer ZXSECRETTOKEN " + "e" * 9000)
    marked = sc.scrub_text("Bearer ZXSECRETTOKEN ")
    assert long["message"] == unmark((marked + "e" * 9000)[:8000]) + (
        f"...[truncated {len(marked) + 9000 - 8000} chars]"
    )
    assert build_error_field(ValueError("x"), "m")["type"] == "ValueError"
    assert build_error_field(KeyError, "m")["type"] == "KeyError"


def test_obs39_scrub_message_cap() -> None:
    assert scrub_message("a" * 8001) == "a" * 8000 + "...[truncated 1 chars]"
    assert scrub_message("token=ZXABC", cap=500) == "token=<redacted>"


def test_obs64_scrub_prompt() -> None:
    out = scrub_prompt("Enter password=ZXHUNTER2 to continue")
    assert out == "Enter password=<redacted> to continue"
    assert scrub_prompt(None) == ""
    assert scrub_prompt("Approve?") == "Approve?"


# ---------------------------------------------------------------------------------------------
# §8.2.5 value scrubbing (OBS-57, OBS-58, OBS-59)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Bearer abc.def", "Bearer <redacted>"),
        ("Authorization: bearer abc.def-ghi", "Authorization: bearer <redacted>"),
        ("BASIC dXNlcjpwYXNz", "BASIC <redacted>"),
        ('{"auth": "Bearer abc"}', '{"auth": "<redacted>"}'),
        ("header='Bearer abc' end", "header='Bearer <redacted>' end"),
        ("Bearer\tabc", "Bearer\t<redacted>"),
        ("xBearer abc", "xBearer abc"),  # not a whole word
        ("Bearer", "Bearer"),
        ("Basic Bearer ZXTOKEN", "Basic Bearer <redacted>"),
    ],
)
def test_obs57_authorization_schemes(text: str, expected: str) -> None:
    assert scrub_text(text) == expected


SECRET = "ZX9Q7W3E5R1T8Y2U4I6O0P"


@pytest.mark.parametrize(
    "template",
    [
        "sk-{s}",
        "sk-proj-{s}",
        "sk-ant-api03-{s}",
        "sk_live_{s}",
        "ghp_{s}",
        "github_pat_{s}",
        "xoxb-{s}",
        "AIza{s}",
        "AKIA{s}",
        "hf_{s}",
        "npm_{s}",
        "pypi-{s}",
        "gsk_{s}",
        "xai-{s}",
        "eyJ{s}.eyJ{s}.{s}",
        "-----BEGIN RSA PRIVATE KEY-----\n{s}\n{s}\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{s}",  # unterminated block
    ],
)
def test_obs58_obs59_whole_token_patterns(template: str) -> None:
    """OBS-58 token classes; OBS-59: the match is replaced entirely (no prefix/suffix kept)."""
    text = "before " + template.format(s=SECRET) + " after"
    out = scrub_text(text)
    assert SECRET[:6] not in out and SECRET[-4:] not in out
    assert out.startswith("before <redacted>")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgres://admin:{s}@db:5432/app", "postgres://admin:<redacted>@db:5432/app"),
        ("mongodb+srv://u:{s}@cluster0/x", "mongodb+srv://u:<redacted>@cluster0/x"),
        ("https://user:p@ss{s}@host/p", "https://user:<redacted>@host/p"),
        ("redis://:{s}@cache:6379", "redis://:<redacted>@cache:6379"),
        ("https://h/cb?code={s}&state=ok", "https://h/cb?code=<redacted>&state=ok"),
        ("https://h/p?X-Amz-Signature={s}#f", "https://h/p?X-Amz-Signature=<redacted>#f"),
        ("https://h/p?a=1&session={s}", "https://h/p?a=1&session=<redacted>"),
        ("https://h/p?monkey=1&keyring=2", "https://h/p?monkey=1&keyring=2"),
        ("export OPENAI_API_KEY={s}", "export OPENAI_API_KEY=<redacted>"),
        ("GITHUB_TOKEN='{s} x' rest", "GITHUB_TOKEN='<redacted>' rest"),
        ('db_password = "{s}"', 'db_password = "<redacted>"'),
        ("Server=db;Password={s};Database=x", "Server=db;Password=<redacted>;Database=x"),
        ("--api-key={s}", "--api-key=<redacted>"),
        ("if token == other:", "if token == other:"),
        ("width=3 height=4", "width=3 height=4"),
        ('{{"client_secret": "{s}", "id": "c"}}', '{{"client_secret": "<redacted>", "id": "c"}}'),
        ("{{'password': '{s}'}}", "{{'password': '<redacted>'}}"),
        ('{{"password": 12345}}', '{{"password": "<redacted>"}}'),
        ('{{"max_tokens": 12345}}', '{{"max_tokens": 12345}}'),
        ('{{"prompt_tokens": "x{s}"}}', '{{"prompt_tokens": "<redacted>"}}'),
        (
            '{{"d": "{{\\"api_key\\": \\"{s}\\"}}"}}',
            '{{"d": "{{\\"api_key\\": \\"<redacted>\\"}}"}}',
        ),
    ],
)
def test_obs58_obs59_structured_patterns(text: str, expected: str) -> None:
    """OBS-59: for structured matches only the value part is replaced."""
    assert scrub_text(text.format(s=SECRET)) == expected.format(s=SECRET)


def test_scrub_clean_text_unchanged_and_same_object() -> None:
    """The common case: no trigger substring -> the input is returned as is."""
    text = "The quick brown fox jumps over the lazy dog; 42 + 1, then (x) ok."
    assert scrub_text(text) is text
    assert scrub_text("") == ""


@pytest.mark.parametrize(("prefix", "unit", "suffix"), [
    ("", "token", ""), ("", "a_token_", "="), ('"' + "k" * 100 + '": "', "v\\", ""), ("https://", "a:", ""),
    ("", "-----BEGIN PRIVATE KEY-----", ""), ("", "Bearer ", ""), ("", '"token": "', ""), ("", "?token=", ""),
    ("eyJ", "a", ""),
])
def test_scrub_is_linear_on_adversarial_input(prefix: str, unit: str, suffix: str) -> None:
    """No catastrophic backtracking: eight times the input costs about eight times the CPU (a quadratic
    pattern would cost 64 times); measured as a ratio of CPU times in the same run, never a wall-clock bound."""
    count = max(1, 25_000 // len(unit))
    ratio = scaling_ratio(scrub_text, unit, count, prefix=prefix, suffix=suffix)
    assert ratio < 24, f"{prefix!r} + {unit!r} x {count}: 8x the input cost {ratio:.1f}x the CPU time"


# ---------------------------------------------------------------------------------------------
# §7.9 targets (OBS-48)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://user:pw@example.com/a/b?token=x&y=2#frag", "https://example.com/a/b"),
        ("https://example.com/search?q=secret+stuff", "https://example.com/search"),
        ("http://host:8080/p#section", "http://host:8080/p"),
        ("ftp://u@files.example.com/", "ftp://files.example.com/"),
        ("/tmp/work/file.txt", "/tmp/work/file.txt"),
        ("./a?b", "./a?b"),
        ("/home/me/.env API_KEY=ZXABC", "/home/me/.env API_KEY=<redacted>"),
    ],
)
def test_obs48_url_target(value: str, expected: str) -> None:
    assert url_target(value) == expected


def test_obs48_url_target_cap() -> None:
    out = url_target("https://example.com/" + "p" * 600 + "?q=1")
    assert out == ("https://example.com/" + "p" * 600)[:512] + "...[truncated 108 chars]"
    assert url_target("/" + "d" * 511) == "/" + "d" * 511


# ---------------------------------------------------------------------------------------------
# Hypothesis properties
# ---------------------------------------------------------------------------------------------

# Keys: lowercase only (no "_", so no key collides with _truncated / _truncated_items).
keys = st.text(alphabet=string.ascii_lowercase, min_size=0, max_size=8)
# Noise text: no uppercase letters, so it can never contain a planted secret (which are
# "ZX" + uppercase/digits), and planted secrets can never be a substring of markers.
noise_alphabet = string.ascii_lowercase + string.digits + " .,:;=-_/?&'\"\n\t{}[]é漢"
noise = st.text(alphabet=noise_alphabet, max_size=40)
long_noise = st.builds(lambda s, n: s * n, noise, st.integers(1, 120))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    noise,
    long_noise,
    st.binary(max_size=20),
)


def _wrap(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(strategy, max_size=8),
        st.lists(strategy, min_size=40, max_size=60),
        st.tuples(strategy, strategy),
        st.dictionaries(keys, strategy, max_size=8),
        st.builds(Box, strategy),
        st.builds(lambda v: SimpleNamespace(value=v, _p=1), strategy),
        st.builds(PBox, value=strategy),
        st.builds(Plain, strategy),
    )


values = st.recursive(scalars, _wrap, max_leaves=60)
limits = st.integers(min_value=1000, max_value=12_000).map(str)


def check_bounds(value: object, raw: Any, limit: int) -> None:
    """§8.2.2: pass-1/pass-2 results encode to <= L chars; the envelope's preview is exactly
    the first L chars of the pass-2 encoding (so its own encoding is L + fixed overhead,
    modulo re-escaping). ``raw`` is the sanitizer's own output: the preview is compared with its
    markers as they are (a marker the cut halves is no marker to ``unmark``)."""
    out = unmark(raw)
    encoded = encode(raw)
    json.dumps(raw)
    json.dumps(raw, allow_nan=False)
    assert_json_only(raw)
    # Reference model of §8.2.2: the first pass whose encoding fits is returned.
    first = jsonable(value, max_str=sz.PASS1_MAX_STR, max_items=sz.PASS1_MAX_ITEMS)
    second = jsonable(value, max_str=sz.PASS2_MAX_STR, max_items=sz.PASS2_MAX_ITEMS)
    if len(encode(first)) <= limit:
        assert out == unmark(first)
    elif len(encode(second)) <= limit:
        assert out == unmark(second)
    else:
        assert is_envelope(raw)
    if is_envelope(raw):
        full = pass2_encoding(value)
        assert len(full) > limit
        assert raw["preview"] == full[:limit]
        assert len(raw["preview"]) == limit
        assert raw["original_type"] == type(value).__name__
    else:
        assert len(encoded) <= limit


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=values, limit=limits)
def test_property_obs51_output_json_and_bounded(value: object, limit: str) -> None:
    """OBS-51 + §8.2.2: output is JSON-only, json.dumps-able (also allow_nan=False), and
    within the bound the spec guarantees."""
    with payload_limit(limit):
        out = sz.sanitize(value)
    check_bounds(value, out, int(limit))


# Payloads dominated by long strings exercise pass 2 and the envelope more often.
very_long_noise = st.builds(lambda s, n: (s or "x") * n, noise, st.integers(100, 600))
large_values = st.lists(st.one_of(very_long_noise, values), min_size=2, max_size=12)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=large_values, limit=st.integers(min_value=1000, max_value=40_000).map(str))
# The envelope's preview holding a whole keyed marker (a number under a foreign credential word).
@example(value=[{"sifre": 1000}, "a" * 2000], limit="1000")
def test_property_large_payloads_bounded(value: object, limit: str) -> None:
    """§8.2.2 bound, on payloads that mostly need pass 2 or the envelope."""
    with payload_limit(limit):
        out = sz.sanitize(value)
    check_bounds(value, out, int(limit))


@st.composite
def pass2_case(draw: st.DrawFn) -> tuple[object, int]:
    """A payload plus an L with len(pass-2 encoding) <= L < len(pass-1 encoding)."""
    value = draw(large_values)
    p1 = len(encode(jsonable(value, max_str=sz.PASS1_MAX_STR, max_items=sz.PASS1_MAX_ITEMS)))
    p2 = len(pass2_encoding(value))
    lo = max(p2, sz.MIN_PAYLOAD_MAX_CHARS)
    assume(lo < p1)
    return value, draw(st.integers(lo, p1 - 1))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(case=pass2_case())
def test_property_pass2_returned_when_it_fits(case: tuple[object, int]) -> None:
    """§8.2.2 step 4: pass 1 too long, pass 2 fits -> the pass-2 result is returned."""
    value, limit = case
    with payload_limit(str(limit)):
        out = sz.sanitize(value)
    assert unmark(out) == unmark(jsonable(value, max_str=sz.PASS2_MAX_STR, max_items=sz.PASS2_MAX_ITEMS))
    check_bounds(value, out, limit)


@settings(max_examples=30, deadline=None)
@given(value=values)
def test_property_default_limit_bounded(value: object) -> None:
    out = sz.sanitize(value)
    check_bounds(value, out, 50_000)


# --- planted secrets (OBS-55, OBS-56, OBS-57, OBS-58, OBS-59) --------------------------------

secrets = st.text(
    alphabet=string.ascii_uppercase + string.digits, min_size=20, max_size=30
).map(lambda s: "ZX" + s)

PLANTERS: list[Callable[[str], object]] = [
    # sensitive keys (OBS-56)
    lambda s: {"api_key": s},
    lambda s: {"Authorization": f"Bearer {s}"},
    lambda s: {"X-Api-Key": s},
    lambda s: {"headers": {"x-custom": s}},
    lambda s: {"ssh_private_key": s},
    lambda s: {"access_tokens": [s]},
    lambda s: {"session_tokens": Box(s)},
    lambda s: {"db_password": s},
    lambda s: {"cookies": {"sid": s}},
    # authorization schemes (OBS-57)
    lambda s: f"Bearer {s}",
    lambda s: f"authorization: basic {s}",
    lambda s: {f"Bearer {s}": 1},
    # vendor tokens, JWT, PEM (OBS-58)
    lambda s: f"sk-{s}",
    lambda s: f"sk-proj-{s}",
    lambda s: f"sk_live_{s}",
    lambda s: f"ghp_{s}",
    lambda s: f"github_pat_{s}",
    lambda s: f"xoxb-{s}",
    lambda s: f"AIza{s}",
    lambda s: f"AKIA{s}",
    lambda s: f"hf_{s}",
    lambda s: f"npm_{s}",
    lambda s: f"pypi-{s}",
    lambda s: f"gsk_{s}",
    lambda s: f"xai-{s}",
    lambda s: f"eyJ{s}.eyJ{s}.{s}",
    lambda s: f"-----BEGIN EC PRIVATE KEY-----\n{s}\n-----END EC PRIVATE KEY-----",
    # URLs and connection strings
    lambda s: f"https://user:{s}@example.com/path",
    lambda s: f"postgresql://admin:{s}@db.internal:5432/app",
    lambda s: f"https://example.com/cb?access_token={s}&x=1",
    lambda s: f"https://bucket.s3.amazonaws.com/k?X-Amz-Signature={s}",
    # assignments and quoted pairs
    lambda s: f"API_KEY={s}",
    lambda s: f"export GITHUB_TOKEN='{s}'",
    lambda s: f"client_secret = {s}",
    lambda s: json.dumps({"client_secret": s}),
    lambda s: repr({"password": s}),
    lambda s: json.dumps({"data": json.dumps({"api_key": s})}),
    # objects
    lambda s: StrOnly(f"token={s}"),
    lambda s: SimpleNamespace(password=s),
    lambda s: PBox(value={"secret": s}),
    lambda s: Plain({"auth": s}),
]


def _in_text(planted: object, before: str, after: str) -> object:
    """Embed string plantings in noise; separators keep word boundaries intact."""
    if isinstance(planted, str):
        return f"{before} {planted} {after}"
    return planted


planted_values = st.builds(
    lambda secret, idx, before, after: (secret, _in_text(PLANTERS[idx](secret), before, after)),
    secrets,
    st.integers(0, len(PLANTERS) - 1),
    noise,
    noise,
)


def _embed(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(lambda v, other: [other, v], strategy, values),
        st.builds(lambda v, k: {k: v}, strategy, keys),
        st.builds(lambda v: (v,), strategy),
        st.builds(Box, strategy),
        st.builds(lambda v: SimpleNamespace(v=v), strategy),
        st.builds(PBox, value=strategy),
        st.builds(Plain, strategy),
        st.builds(lambda v: {"messages": [{"role": "user", "content": v}]}, strategy),
    )


@st.composite
def payload_with_secret(draw: st.DrawFn) -> tuple[str, object]:
    secret, planted = draw(planted_values)
    depth = draw(st.integers(0, 4))
    strategy: st.SearchStrategy[Any] = st.just(planted)
    for _ in range(depth):
        strategy = _embed(strategy)
    return secret, draw(strategy)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=payload_with_secret(), limit=st.sampled_from(["1000", "50000"]))
def test_property_obs55_planted_secret_never_in_output(
    case: tuple[str, object], limit: str
) -> None:
    """OBS-55/56/57/58/59: a planted secret never appears in the sanitized output, whatever
    path (pass 1, pass 2, envelope) produced it."""
    secret, value = case
    with payload_limit(limit):
        out = sanitize(value)
    assert secret not in json.dumps(out, ensure_ascii=False)
    assert secret not in json.dumps(out)
    request = build_request_field({"messages": [value], "timeout": 1})
    assert secret not in json.dumps(request, ensure_ascii=False)


TEXT_PLANTERS = [p for p in PLANTERS if isinstance(p("ZX"), str)]


@settings(max_examples=200, deadline=None)
@given(
    secret=secrets,
    planter=st.sampled_from(TEXT_PLANTERS),
    before=noise,
    after=noise,
)
def test_property_planted_secret_never_in_scrubbed_text(
    secret: str, planter: Callable[[str], str], before: str, after: str
) -> None:
    """OBS-59/60/62/64/48: the string-level helpers never echo a planted secret."""
    text = f"{before} {planter(secret)} {after}"
    for out in (
        scrub_text(text),
        safe_scrub(text),
        scrub_message(text),
        scrub_prompt(text),
        build_error_field("E", text)["message"],
        url_target(text),
    ):
        assert secret not in out


def test_obs58_vendor_precheck_regression() -> None:
    """Found by hypothesis: an AWS key in text that also contains '-' was skipped."""
    assert scrub_text(" AKIAZX00000000000000000000 -") == " <redacted> -"
    assert scrub_text("x_AIzaZX000000000000000000000000") == "x_<redacted>"


def _scrub_ungated(text: str) -> str:
    """Reference: every rule of scrub_text over every view, with no pre-check and no cache, applied until
    nothing changes (a credential glued to another's end is found once the first is replaced)."""
    for _ in range(4):
        spans = sc.find_spans(text, gated=False)
        if not spans:
            break
        text = sc.replace_spans(text, spans)
    return unmark(text)


FRAGMENTS = [
    "Bearer ", "basic ", "BEARER\t", "sk-", "sk_live_", "AKIA", "ASIA", "AIza", "eyJ", "ghp_",
    "github_pat_", "xoxb-", "hf_", "npm_", "pypi-", "gsk_", "xai-", "=", "==", "&", "?", ";",
    "token", "API_KEY", "Api-Key", "secret", "password", "passwd", "auth", "code", "session",
    '"', "'", "\\", ":", ": ", "://", "@", "https://u:p", "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----", "_", "-", ".", "ZX0123456789ABCDEF", "abcdefghijk", " ", "\t",
    "mysql+x://", "1a://", "u@", "a:b@", "/", "#",
    "MY_TOKEN", "x.auth-id", "= ", " = ", "\"v\"", "'v'",
    "\n", "x", "7", "{", "}", "é", "Basic", "xbearer ", "_basic ",
    "pwd", "pass", "PASS", "passphrase", "access_key", "PASSWORD:", "password: ", "--", "--password ",
    "--api-key\t", "mysql ", "mysqldump -u root ", " -p", "-p'", "sshpass -p ", "|", "pk-lf-", "tokens: ", "12",
    "by", "bearer",
]  # fmt: skip
trigger_text = st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join)


@settings(max_examples=600, deadline=None)
@given(text=st.one_of(trigger_text, st.text(max_size=200)))
def test_property_prechecks_never_change_the_result(text: str) -> None:
    """The fast pre-checks of scrub_text are exact: gating never skips a rule that matches,
    and the '='-driven assignment scanner behaves exactly like its reference regex."""
    assert scrub_text(text) == _scrub_ungated(text)


@settings(max_examples=100, deadline=None)
@given(text=st.one_of(trigger_text, st.text(max_size=300)))
def test_property_scrub_never_raises_and_is_idempotent(text: str) -> None:
    once = scrub_text(text)
    assert scrub_text(once) == once


# ---------------------------------------------------------------------------------------------
# The plain-JSON shortcut of pass 1 (performance path) is exact
# ---------------------------------------------------------------------------------------------

# Keys that exercise every branch of the shortcut: plain, sensitive (OBS-56), plural-token,
# changed by scrubbing, and the truncation keys.
shortcut_keys = st.one_of(
    keys,
    st.sampled_from(["token", "api_key", "access_tokens", "input_tokens", "headers", "Authorization",
                     "password=hunter2hunter2", "sk-ZX0123456789ABCDEFGHIJ", "_truncated_items", "é"]),
)
shortcut_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**62, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), noise, long_noise,
    st.sampled_from(["Bearer ZX0123456789ABCDEFGHIJ", "sk-ZX0123456789ABCDEFGHIJ", "x" * 9000, "\x01\x1f"]),
)
shortcut_values = st.recursive(
    shortcut_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.lists(inner, min_size=199, max_size=202),
        st.tuples(inner, inner), st.dictionaries(shortcut_keys, inner, max_size=6),
    ),
    max_leaves=40,
)


def full_algorithm(value: object) -> Any:
    """sanitize() with the shortcut switched off."""
    original = sz._plain_pass
    sz._plain_pass = lambda value, limit: sz._NOTHING  # type: ignore[assignment]
    try:
        return sanitize(value)
    finally:
        sz._plain_pass = original


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.one_of(shortcut_values, st.builds(lambda v: nest(v, 7), shortcut_values),
                       st.builds(lambda v: nest(v, 8), shortcut_scalars)),
       limit=st.sampled_from([None, "1000", "3000"]))
def test_property_obs51_plain_shortcut_equals_full_algorithm(value: object, limit: str | None) -> None:
    """OBS-51/OBS-55/OBS-56: the plain-JSON shortcut of pass 1 gives exactly what the full
    two-pass algorithm gives, for every input (it bails out wherever it does not apply)."""
    with payload_limit(limit):
        assert sanitize(value) == full_algorithm(value)


def test_obs51_plain_shortcut_applies_to_provider_payloads() -> None:
    """The shortcut is taken for an ordinary chat completion (and gives the full algorithm's result)."""
    calls = [{"id": f"call_{k}", "type": "function",
              "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}} for k in range(10)]
    response = {"model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": calls}}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 8}, "api_key": "sk-ZX0123456789ABCDEFGHIJ"}
    assert sz._plain_pass(response, 50_000) is not sz._NOTHING
    out = sanitize(response)
    assert out == full_algorithm(response)
    assert out["api_key"] == REDACTED


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(trigger_text, st.text(max_size=300), st.text(min_size=257, max_size=600),
                      st.lists(st.sampled_from(FRAGMENTS), min_size=60, max_size=120).map("".join)))
def test_property_obs55_clean_text_cache_never_skips_a_rule(text: str) -> None:
    """Scrubbing the same text again (answered from the clean-text cache when it was clean) gives
    the ungated reference result every time; texts that scrubbing changes are never cached."""
    assert scrub_text(text) == _scrub_ungated(text)
    assert scrub_text(text) == _scrub_ungated(text)
    if text in sc.known_clean or text in sc.long_clean:
        assert _scrub_ungated(text) == text


def test_plural_token_keys_judged_by_value_every_time() -> None:
    """The fast pass caches a ``*_tokens`` key's class; every later payload is still judged by its value: a
    number or ``None`` is kept, anything else (a string, a bool, a list) is redacted."""
    for _ in range(3):  # the first round fills the cache, the later ones use it
        out = sanitize({"usage": {"input_tokens": 12, "cached_tokens": None, "output_tokens": 2.5,
                                  "refresh_tokens": "ZQ3N6B9V2C5X8Z1L4K7J0H", "auth_tokens": True,
                                  "more_tokens": ["ZQ3N6B9V2C5X8Z1L4K7J0H"]}})
        assert out == {"usage": {"input_tokens": 12, "cached_tokens": None, "output_tokens": 2.5,
                                 "refresh_tokens": "<redacted>", "auth_tokens": "<redacted>",
                                 "more_tokens": "<redacted>"}}
