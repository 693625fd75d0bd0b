"""RemoveOldMessages walks its list a stretch at a time (dropped or kept) and reads a run
that grows between settling rounds only past what it read: the same notes, in the same
places, as the message-at-a-time walk it replaced."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_adapter._messages import Message
from agent_adapter.context import Protection, RemoveOldMessages
from agent_adapter.context._steps._base import StepContext
from agent_adapter.context._steps._drop_note import _note, _remembered_note, _Scans, _text
from agent_adapter.context._steps.drop import _stretches, _Walk
from agent_adapter.context._tokens import TokenMeter


def _old_with_notes(
    messages: list[Message], drop: set[int], chars: int, opener: int, foldable: set[int]
) -> list[Message]:
    """RemoveOldMessages._with_notes as it was written (a message at a time, a set of
    dropped indexes; no store, so no saved line, and no summary to fold into)."""
    drop = set(drop)
    grown = True
    while grown:
        more = {i for i in foldable - drop if i - 1 in drop or i + 1 in drop}
        grown = bool(more)
        drop |= more
    kept = tuple(m for i, m in enumerate(messages) if i not in drop)

    def kept_text() -> str:
        return "\n".join(map(_text, kept))

    late = [m for i, m in enumerate(messages) if i in drop and i > opener]
    out: list[Message] = []
    run: list[Message] = []
    at_opener = -1
    for i, m in enumerate(messages):
        if i in drop:
            if i < opener:
                run.append(m)
            continue
        if i == opener:
            late = run + late
            run = []
            at_opener = len(out)
        if run:
            out.append(_remembered_note(run, kept, kept_text, chars))
            run = []
        out.append(m)
    if run:
        out.append(_remembered_note(run, kept, kept_text, chars))
    if late:
        out.insert(at_opener, _remembered_note(late, kept, kept_text, chars))
    return out


def _messages(n: int, notes: set[int]) -> list[Message]:
    out: list[Message] = []
    for i in range(n):
        if i in notes:  # an earlier note of ours, to fold in
            out.append(_note([Message("user", f"old {i} see /srv/app{i}.py")], "", 400))
        else:
            role = "user" if i % 2 else "assistant"
            out.append(Message(role, f"message {i} about /srv/file{i % 7}.py"))
    return out


def _context(messages: list[Message]) -> StepContext:
    return StepContext(
        target_tokens=100,
        threshold_tokens=200,
        protection=Protection(messages),
        meter=TokenMeter(),
    )


@settings(max_examples=120, deadline=None)
@given(
    st.integers(1, 24).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.sets(st.integers(0, n - 1)),
            st.sets(st.integers(0, n - 1)),
            st.integers(0, n),
        )
    ),
    st.sampled_from([0, 120, 400]),
)
def test_the_notes_are_those_of_the_message_at_a_time_walk(
    case: tuple[int, set[int], set[int], int], chars: int
) -> None:
    n, dropped, notes, opener = case
    if opener < n:
        dropped.discard(opener)  # the opener is protected: never dropped
        notes.discard(opener)
    messages = _messages(n, notes)
    foldable = notes - {opener}
    mask = bytearray(n)
    for i in dropped:
        mask[i] = 1
    step = RemoveOldMessages()
    walk = _Walk(messages, opener, foldable, set(), {})
    new = asyncio.run(step._with_notes(walk, mask, chars, _context(messages)))
    old = _old_with_notes(messages, dropped, chars, opener, foldable)
    assert [(m.role, m.content) for m in new] == [(m.role, m.content) for m in old]


def test_stretches_cover_the_list_in_order() -> None:
    assert _stretches(bytearray()) == []
    assert _stretches(bytearray(b"\x00\x00\x01\x01\x01\x00\x01")) == [
        (False, 0, 2),
        (True, 2, 5),
        (False, 5, 6),
        (True, 6, 7),
    ]


def test_a_run_grown_between_rounds_is_read_only_past_what_was_read() -> None:
    run = [Message("user", f"ran /srv/job{i}.sh, exit {i % 3}") for i in range(50)]
    scans: _Scans = {}
    reads: list[int] = []
    first = _note(run[:30], "", 400, scans=scans)
    assert first == _note(run[:30], "", 400)
    seen = scans[id(run[0])]
    assert len(seen.run) == 30 and seen.count == 30

    class Counting(list[Message]):
        def __getitem__(self, k):  # type: ignore[no-untyped-def]
            if isinstance(k, int):
                reads.append(k)
            return super().__getitem__(k)

    grown: Callable[[], Message] = lambda: _note(Counting(run), "", 400, scans=scans)  # noqa: E731
    assert grown() == _note(run, "", 400)
    assert min(i for i in reads if i > 0) == 30  # the first 30 were not read again
    assert scans[id(run[0])].count == 50
