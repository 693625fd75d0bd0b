"""UnitSpans (a list's units as bounds and flags, no object a unit) and the helpers the steps
walk instead of ``Unit`` objects: the same units, flags and picks as the Unit-based code they
replaced."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from _convo import calls, result
from agent_adapter._messages import Message
from agent_adapter.context import Protection, Unit, split_units
from agent_adapter.context._engine import _SharedCostContext
from agent_adapter.context._steps._base import (
    StepContext,
    last_non_system,
    spans_of,
)
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context._units import unit_spans

_KINDS = ("system", "user", "assistant", "round1", "round2")


def _conversation(kinds: list[str]) -> list[Message]:
    out: list[Message] = []
    for n, kind in enumerate(kinds):
        if kind == "round1":
            out += [calls(f"c{n}"), result(f"c{n}")]
        elif kind == "round2":
            out += [calls(f"a{n}", f"b{n}"), result(f"a{n}"), result(f"b{n}")]
        else:
            out.append(Message(kind, f"{kind} {n}"))  # type: ignore[arg-type]
    return out


def _old_split(messages: list[Message], protection: Protection) -> list[Unit]:
    """split_units as it was written before UnitSpans (a Unit built per unit)."""
    units, start = [], 0
    for stop in [u.stop for u in split_units(messages, protection)]:
        chunk = tuple(messages[start:stop])
        protected = any(protection.is_protected(m) for m in chunk)
        units.append(Unit(start, stop, chunk, protected))
        start = stop
    return units


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_KINDS), max_size=30), st.integers(0, 6))
def test_spans_are_the_units_split_units_gives(kinds: list[str], pin_every: int) -> None:
    messages = _conversation(kinds)
    pinned = {id(m) for i, m in enumerate(messages) if pin_every and i % pin_every == 0}
    protection = Protection(messages, lambda m: id(m) in pinned)
    spans = unit_spans(messages, protection)
    units = split_units(messages, protection)
    assert units == _old_split(messages, protection)
    assert spans.units() == units
    assert [spans.unit(n) for n in range(len(spans))] == units
    assert [spans.is_tool_round(n) for n in range(len(spans))] == [u.is_tool_round for u in units]
    assert list(spans.protected) == [int(u.protected) for u in units]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(("system", "user", "assistant")), max_size=12), st.integers(0, 15))
def test_last_non_system_is_the_slice_it_replaced(roles: list[str], n: int) -> None:
    messages = [Message(r, r) for r in roles]  # type: ignore[arg-type]
    non_system = [i for i, m in enumerate(messages) if m.role != "system"]
    # RemoveOldMessages' keep_last as it was written (a negative start when n is over)
    expected = set(non_system[len(non_system) - n :]) if n else set()
    assert last_non_system(messages, n) == expected


def test_a_context_splits_a_list_once_for_spans_and_units() -> None:
    messages = _conversation(["system", "user", "round1", "assistant", "user", "round2"])
    context = StepContext(
        target_tokens=10,
        threshold_tokens=20,
        protection=Protection(messages),
        meter=TokenMeter(),
    )
    spans = spans_of(context, messages)
    assert spans_of(context, list(messages)) is spans  # the same messages: not split again
    units = context.units(messages)
    assert units == spans.units()
    assert context.units(messages) == units and context.units(messages)[0] is units[0]
    other = _SharedCostContext(context, Protection(messages, lambda m: m.role == "user"))
    assert spans_of(other, messages) is not spans  # its own protection: its own split
    assert spans_of(context, messages[:-1]) is not spans
