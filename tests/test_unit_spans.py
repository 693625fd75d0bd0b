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
from agent_adapter.context._invariants import _Starts
from agent_adapter.context._steps._base import (
    StepContext,
    last_non_system,
    spans_of,
)
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context._units import _bounds, _unit_reasons, unit_spans

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


def _old_unit_reasons(
    messages: list[Message], bounds: list[tuple[int, int]], why: list[str], newest_turn: bool
) -> dict[int, str]:
    """Protection's unit reasons as they were written (a slice of ``why`` a unit)."""
    reasons: dict[int, str] = {}
    for n, (start, stop) in enumerate(bounds):
        newest = newest_turn and n == len(bounds) - 1
        if newest or any(why[start:stop]):
            for j in range(start, stop):
                reasons[messages[j].origin] = why[j] or ("newest_turn" if newest else "unit")
    return reasons


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(_KINDS), max_size=20),
    st.data(),
    st.booleans(),
)
def test_unit_reasons_are_those_of_the_unit_by_unit_walk(
    kinds: list[str], data: st.DataObject, newest_turn: bool
) -> None:
    messages = _conversation(kinds)
    why = data.draw(
        st.lists(
            st.sampled_from(["", "", "", "system", "pinned", "approval"]),
            min_size=len(messages),
            max_size=len(messages),
        )
    )
    bounds = _bounds(messages)
    as_list = list(bounds)
    new = _unit_reasons(messages, bounds, why, newest_turn)  # type: ignore[arg-type]
    assert new == _old_unit_reasons(messages, as_list, why, newest_turn)
    assert _unit_reasons(messages, as_list, why, newest_turn) == new  # type: ignore[arg-type]
    assert list(new.items()) == list(_old_unit_reasons(messages, as_list, why, newest_turn).items())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(_KINDS), max_size=15))
def test_the_guards_unit_starts_are_the_set_it_replaced(kinds: list[str]) -> None:
    messages = _conversation(kinds)
    bounds = _bounds(messages)
    expected = {start for start, _ in bounds}
    for given_bounds in (bounds, list(bounds)):
        starts = _Starts(given_bounds)
        assert [g in starts for g in range(-1, len(messages) + 2)] == [
            g in expected for g in range(-1, len(messages) + 2)
        ]
