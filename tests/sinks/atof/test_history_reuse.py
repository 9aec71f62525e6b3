"""FMT-25: the ATOF history delta of a session whose requests reuse the same message objects (as the engine's
request field does) is exactly the delta computed from the messages' content (``AtofEncoder`` skips hashing
a prefix of the very same objects it wrote last time)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.export.events import LLM_SCOPE, SCOPE, START, ScopeEvent
from hermes_pipeline.sinks.atof.encoder import AtofEncoder

SESSION = 7


def llm_start(n: int, messages: list[Any]) -> ScopeEvent:
    return ScopeEvent(SCOPE, START, 1000 + n, SESSION, 1_700_000_000_000_000 + n, LLM_SCOPE, "llm", (), None,
                      {"request": {"method": "POST", "body": {"messages": messages}}},
                      {"hermes.api_mode": "chat_completions"}, SESSION, SESSION)


pool = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool"]),
                                       "content": st.text(max_size=30)}), min_size=1, max_size=5)
# each step: keep the first k messages of the previous history, then add picks from the pool; sometimes an
# equal copy of a kept message, or a message replaced by another object of the pool
steps = st.lists(st.tuples(st.integers(0, 8), st.lists(st.integers(0, 4), max_size=3), st.integers(-1, 8),
                           st.booleans()), min_size=1, max_size=8)


@given(pool, steps)
def test_reused_message_objects_give_the_delta_of_their_content(messages: list[dict[str, Any]],
                                                                plan: list[tuple[int, list[int], int, bool]]) -> None:
    shared, copied = AtofEncoder(), AtofEncoder()
    history: list[Any] = []
    for n, (keep, picks, swap, duplicate) in enumerate(plan):
        history = history[:keep] + [messages[i % len(messages)] for i in picks]
        if 0 <= swap < len(history):
            history[swap] = dict(history[swap]) if duplicate else messages[swap % len(messages)]
        # the same content as new objects every time: the encoder can only compare hashes
        assert shared(llm_start(n, list(history))) == copied(llm_start(n, copy.deepcopy(history)))


def test_a_prefix_of_the_same_objects_is_a_delta_and_a_changed_one_is_not() -> None:
    first, second, third = ({"role": "user", "content": f"m{n}"} for n in range(3))
    encoder = AtofEncoder()
    lines = [encoder(llm_start(0, [first])), encoder(llm_start(1, [first, second])),
             encoder(llm_start(2, [third, second, first]))]
    assert [b'"messages_offset":0' in lines[0], b'"messages_offset":1' in lines[1],
            b'"messages_offset":0' in lines[2]] == [True, True, True]
