"""What ``agent-adapter report`` shows, as plain data: units, kinds, protection, provenance.

No HTML here (that is :mod:`agent_adapter.cli._html`). What each step did is known, never
guessed: every step of the policy is wrapped (:class:`~agent_adapter.cli._progress.Observed`)
so that its input list is recorded, and
:func:`agent_adapter.context._provenance.trace` maps each list onto the one before it by
identity and origin (the mechanism the engine's own report uses).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

from agent_adapter._messages import ImagePart, Message, ThinkingPart
from agent_adapter.cli._progress import Tick, observed
from agent_adapter.cli._report import _protection_reasons
from agent_adapter.context import (
    CompressionPolicy,
    CompressionReport,
    Protection,
    TokenCounter,
    Unit,
    split_units,
)
from agent_adapter.context._compress_for import _run_to_end
from agent_adapter.context._engine import _compress
from agent_adapter.context._provenance import trace
from agent_adapter.context.formats import Conversion

#: The kinds a unit's area is coloured by, in legend order.
KINDS = ("system", "user", "assistant", "thinking", "tool_call", "tool_result", "image")
#: Label of the change ``if_still_too_long="cut"`` makes after the steps.
CUT_LABEL = "if_still_too_long=cut"

JSON = dict[str, Any]


@dataclasses.dataclass
class Compression:
    """One recorded compression: the result, the report and who changed what.

    Attributes:
        after: the compressed messages (agent_adapter messages).
        report: the engine's report (what ``compress`` prints).
        dropped_by: input message origin -> the step that removed it.
        changed_by: input message origin -> the steps that edited it, in order.
        added_by: origin of a message in ``after`` that no input stands for -> its step.
        natives_after: how many natives the compressed list turns back into.
    """

    after: list[Message]
    report: CompressionReport
    dropped_by: dict[int, str]
    changed_by: dict[int, list[str]]
    added_by: dict[int, str]
    natives_after: int


def compress_recorded(
    conversion: Conversion[Any], policy: CompressionPolicy, tick: Tick | None = None
) -> Compression:
    """Compress ``conversion.messages`` as ``compress_for`` does, recording every step.

    The engine is called the way :func:`agent_adapter.context.compress_for` calls it (with the
    format's ``starts_native``), so the report equals the ``compress`` command's. ``tick``
    is called with each step's name as it starts (the progress bar).
    """
    log: list[tuple[str, list[Message]]] = []

    def record(name: str, messages: list[Message]) -> None:
        log.append((name, list(messages)))
        if tick is not None:
            tick(name)

    recorded = observed(policy, record)
    before = conversion.messages
    after, report = _run_to_end(_compress(before, recorded, insertable=conversion.starts_native))
    lists = [before] + [messages for _, messages in log] + [after]
    first = CUT_LABEL if report.if_still_too_long == "cut" else "(before the steps)"
    labels = [first] + [name for name, _ in log]
    if report.if_still_too_long == "cut" and log:
        labels[-1] = f"{labels[-1]}, then {CUT_LABEL}"
    dropped: dict[int, str] = {}
    changed: dict[int, list[str]] = {}
    added: dict[int, str] = {}
    inputs = {m.origin for m in before}
    for (a, b), label in zip(pairwise(lists), labels, strict=True):
        tr = trace(a, b)
        for old, new in zip(a, tr.slot, strict=True):
            if new is None:
                if old.origin in inputs:
                    dropped[old.origin] = label
                else:  # an earlier step's addition, gone again (e.g. a note folded in)
                    added.pop(old.origin, None)
            elif new is not old:
                changed.setdefault(new.origin, []).append(label)
        for new_ones in tr.added.values():
            for m in new_ones:
                added[m.origin] = label
    natives_after = len(conversion.back(after)) if after is not before else len(before)
    return Compression(after, report, dropped, changed, added, natives_after)


def _part_kinds(m: Message, count: TokenCounter) -> list[tuple[str, int]]:
    """``(kind, weight)`` of each piece of ``m``, in order; weights are token counts."""
    base = _part_kinds_default(m)
    pieces: list[tuple[str, int]] = []
    for part in m.parts:
        kind = (
            "thinking"
            if isinstance(part, ThinkingPart)
            else "image"
            if isinstance(part, ImagePart)
            else base
        )
        pieces.append((kind, count([dataclasses.replace(m, content=(part,), tool_calls=())])))
    for call in m.tool_calls:
        pieces.append(
            ("tool_call", count([dataclasses.replace(m, content="", tool_calls=(call,))]))
        )
    return pieces


def kind_tokens(m: Message, tokens: int, count: TokenCounter) -> dict[str, int]:
    """``m``'s ``tokens`` split over its kinds in proportion to each part's own count."""
    pieces = _part_kinds(m, count)
    weight = sum(w for _, w in pieces)
    if not pieces or weight <= 0:
        return {pieces[0][0] if pieces else _part_kinds_default(m): tokens}
    out: dict[str, int] = {}
    given = 0
    for n, (kind, w) in enumerate(pieces):
        share = tokens - given if n == len(pieces) - 1 else round(tokens * w / weight)
        share = max(0, min(share, tokens - given))
        given += share
        out[kind] = out.get(kind, 0) + share
    return out


def _part_kinds_default(m: Message) -> str:
    return {"system": "system", "user": "user", "tool": "tool_result"}.get(m.role, "assistant")


def preview(m: Message, lines: int, width: int = 160) -> str:
    """The first ``lines`` lines of what ``m`` says (each cut to ``width`` characters).

    Text first, then thinking, then each tool call as ``name(arguments)``; ``""`` when
    ``lines`` is 0 (the report then holds no conversation text at all).
    """
    if lines <= 0:
        return ""
    texts: list[str] = []
    for part in m.parts:
        if isinstance(part, ThinkingPart):
            texts.append("[thinking] " + part.text)
        elif isinstance(part, ImagePart):
            texts.append(f"[image {part.media_type or part.url or ''}]".replace(" ]", "]"))
        elif hasattr(part, "text"):
            texts.append(str(part.text))
    texts.extend(f"{c.name}({c.arguments})" for c in m.tool_calls)
    out: list[str] = []
    for text in texts:
        for line in text.splitlines():
            if line.strip():
                out.append(line if len(line) <= width else line[: width - 1] + "…")
            if len(out) >= lines:
                return "\n".join(out)
    return "\n".join(out)


#: How much of one marker the report shows.
MARKER_CHARS = 1_200


def markers(m: Message, old: Message | None) -> list[str]:
    """The markers the steps left in ``m``: bracketed notes that its input did not hold.

    A note of ``RemoveOldMessages`` (``[N earlier messages removed ...; names quoted ...]``)
    and the cut markers of ``ShrinkToolResults`` / ``CutLongMessages`` (``[... N characters
    cut; names: ...]``) start a line with ``[`` and end with ``]``; each is returned whole
    (up to :data:`MARKER_CHARS`).
    """
    seen = set(old.text.splitlines()) if old is not None else set()
    found: list[str] = []
    block: list[str] | None = None
    for line in m.text.splitlines():
        if block is None and line.startswith("[") and line not in seen:
            block = []
        if block is not None:
            block.append(line)
            if line.rstrip().endswith("]"):
                text = "\n".join(block)
                found.append(text if len(text) <= MARKER_CHARS else text[:MARKER_CHARS] + "…")
                block = None
    return found


def units_json(
    messages: Sequence[Message],
    protection: Protection,
    *,
    tokens: Callable[[Message], int],
    count: TokenCounter,
    native_index: Callable[[Message], int | None],
    status: Callable[[Message], tuple[str, list[str], Message | None]],
    lines: int,
) -> list[JSON]:
    """Each unit of ``messages`` as JSON: tokens per kind, protection, status, messages.

    ``status(m)`` gives a message's ``(status, steps, input)``: ``kept``, ``changed``,
    ``dropped`` or ``added``, the steps that did it and (for a changed message) the input
    message it stands for, whose text tells the markers the steps added. A unit's status
    is ``dropped`` / ``added`` when all its messages are, ``kept`` when all are kept, else
    ``changed``.
    """
    units: list[Unit] = split_units(messages, protection)
    reasons = _protection_reasons(units, protection)
    out: list[JSON] = []
    for n, unit in enumerate(units):
        kinds: dict[str, int] = {}
        rows: list[JSON] = []
        statuses: list[str] = []
        steps: list[str] = []
        for m in unit.messages:
            t = tokens(m)
            for kind, share in kind_tokens(m, t, count).items():
                kinds[kind] = kinds.get(kind, 0) + share
            state, by, old = status(m)
            statuses.append(state)
            steps.extend(s for s in by if s not in steps)
            rows.append(
                {
                    "index": native_index(m),
                    "role": m.role,
                    "tokens": t,
                    "status": state,
                    "steps": by,
                    "preview": preview(m, lines),
                    "markers": markers(m, old) if lines > 0 and state != "kept" else [],
                }
            )
        if all(s == "kept" for s in statuses):
            state = "kept"
        elif all(s == statuses[0] for s in statuses) and statuses[0] in ("dropped", "added"):
            state = statuses[0]
        else:
            state = "changed"
        out.append(
            {
                "n": n,
                "tokens": sum(r["tokens"] for r in rows),
                "kinds": [[k, kinds[k]] for k in KINDS if kinds.get(k)],
                "round": unit.is_tool_round,
                "protected": unit.protected,
                "reasons": reasons[n],
                "status": state,
                "steps": steps,
                "messages": rows,
            }
        )
    return out
