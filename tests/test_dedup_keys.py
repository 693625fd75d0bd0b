"""RemoveDuplicates keys a list's units as small ints (equal keys, equal ints), plain
messages inlined and only the newest units through the memos: the same ints as keying every
unit with ``_key`` on its own."""

from __future__ import annotations

import random
from collections.abc import Hashable

from _convo import calls, result
from agent_adapter._messages import Message, TextPart
from agent_adapter.context import Protection
from agent_adapter.context._lru import clear
from agent_adapter.context._steps.dedup import _UNIT_KEYS, _key, _keys, _rounds
from agent_adapter.context._units import unit_spans


def _chat(n: int, seed: int) -> list[Message]:
    rng = random.Random(seed)
    out: list[Message] = [Message("system", "be kind")]
    while len(out) < n:
        kind = rng.random()
        if kind < 0.08:
            c = f"c{len(out)}"
            out += [calls(c), result(c, rng.choice(["ok", "done", ""]))]
        elif kind < 0.12:
            out.append(Message("user", (TextPart(rng.choice(["hi", "ok"])),)))
        elif kind < 0.14:
            out.append(Message("user", "Thanks!", name="ann"))
        else:
            role = "user" if len(out) % 2 else "assistant"
            out.append(Message(role, rng.choice(["Thanks!", "ok", "", "Anything else?"])))
    return out


def _reference(messages: list[Message]) -> list[int]:
    classes: dict[Hashable, int] = {}
    return [
        classes.setdefault(_key(u.messages, False), len(classes))
        for u in unit_spans(messages, Protection(messages)).units()
    ]


def test_keys_are_those_of_each_unit_keyed_on_its_own() -> None:
    for seed in range(3):
        messages = _chat(_UNIT_KEYS.entries + 1500, seed)  # past the memo's newest units
        spans = unit_spans(messages, Protection(messages))
        clear()
        assert _keys(spans) == _reference(messages)
        assert _keys(spans) == _reference(messages)  # again, through the memos
        assert _rounds(spans) == [spans.is_tool_round(n) for n in range(len(spans))]
