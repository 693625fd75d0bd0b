"""Names survive a loop (issue 34, item 4): folding a note never drops a name it held.

A real mini-swe-agent run is replayed as an agent sends it (call k sends the history up to
the k-th assistant turn) through one :class:`Compactor` at a tight budget (threshold =
target = 6k tokens: a compaction on nearly every call, the protected newest turns often
most of it). Before the fix, a note folded under that pressure was written bare (its count
alone): 39 names of pytest-6197's history fell out in one call, and the final request named
38% of the run's paths where one compression of the same history names 74%.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent_adapter import Message
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import Compactor, CompressionPolicy, compress_for_sync
from agent_adapter.context._own import note_count
from agent_adapter.context.formats import convert, strip_reserved

RUN = "pytest-dev__pytest-6197"
PATH = re.compile(r"(?:[\w.-]+/)+[\w.-]+\.\w+")
MORE = re.compile(r"\+\d+ more")


def _text(messages: list[Message]) -> str:
    return "\n".join(
        [m.text for m in messages] + [c.arguments for m in messages for c in m.tool_calls]
    )


def _cuts(natives: list[Any]) -> list[int]:
    roles = [n.get("role") for n in natives]
    first = roles.index("user")
    return [i for i, r in enumerate(roles) if i > first and r == "assistant"] + [len(natives)]


def _names(note: Message) -> list[str]:
    lines = [ln.rstrip("]") for ln in note.text.splitlines()[1:]]
    return [ln for ln in lines if ln and not MORE.fullmatch(ln)]


def test_a_folded_note_keeps_every_name_it_held(data_dir: Path) -> None:
    trace = load_trace(data_dir / "mini-swe-agent-gemini3pro" / "trajs" / f"{RUN}.traj.json")
    natives, fmt = trace.messages, trace.format
    policy = CompressionPolicy(threshold_tokens=6000, target_tokens=6000)
    compactor = Compactor(policy, conversation=RUN, save_to=None)
    previous: list[Message] = []
    folds = 0
    request: list[Any] = []
    for cut in _cuts(natives):
        request, _ = compactor.compress_sync(natives[:cut])
        messages = convert(strip_reserved(request), fmt).messages
        texts = {m.text for m in messages}
        sent = _text(messages)
        for note in (m for m in previous if note_count(m) is not None and m.text not in texts):
            folds += 1
            lost = [name for name in _names(note) if name not in sent]
            assert not lost, f"call {cut}: a folded note's names are gone: {lost[:5]}"
        previous = messages
    assert folds >= 10  # the loop folded notes again and again

    wanted = set(PATH.findall(_text(convert(natives, fmt).messages)))
    once, _ = compress_for_sync(natives, policy, format=fmt, states=False)
    alone = _text(convert(strip_reserved(once), fmt).messages)
    loop = _text(convert(strip_reserved(request), fmt).messages)
    kept_once = sum(p in alone for p in wanted)
    kept_loop = sum(p in loop for p in wanted)
    assert kept_loop >= 0.9 * kept_once, (kept_loop, kept_once, len(wanted))
