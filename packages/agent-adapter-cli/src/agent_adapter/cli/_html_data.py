"""What ``agent-adapter report`` shows, as plain data: units, kinds, protection, provenance.

No HTML here (that is :mod:`agent_adapter.cli._html`). What each step did is known, never
guessed: every step of the policy is wrapped (:class:`~agent_adapter.cli._progress.Observed`)
so that its input list is recorded, and
:func:`agent_adapter.context._provenance.trace` maps each list onto the one before it by
identity and origin (the mechanism the engine's own report uses).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

from agent_adapter._messages import ImagePart, Message, ThinkingPart
from agent_adapter._sync import run_to_end
from agent_adapter.cli._passes import pass_labels, pass_numbers, step_names
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
from agent_adapter.context._compress_for import compress_conversion
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
        order: the policy's step names, in the order each pass runs them.
        recent_turns: the policy's ``recent_turns`` (the first pass protects them).
    """

    after: list[Message]
    report: CompressionReport
    dropped_by: dict[int, str]
    changed_by: dict[int, list[str]]
    added_by: dict[int, str]
    natives_after: int
    order: list[str] = dataclasses.field(default_factory=list)
    recent_turns: int = 0


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
    after, report = run_to_end(compress_conversion(conversion, recorded))
    lists = [before] + [messages for _, messages in log] + [after]
    first = CUT_LABEL if report.if_still_too_long == "cut" else "(before the steps)"
    labels = [first, *pass_labels([name for name, _ in log], step_names(policy))]
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
    return Compression(
        after,
        report,
        dropped,
        changed,
        added,
        natives_after,
        step_names(policy),
        policy.recent_turns,
    )


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


def _shares(m: Message, tokens: int, count: TokenCounter) -> list[tuple[str, int]]:
    """``m``'s ``tokens`` split over its pieces (:func:`_part_kinds`: its parts, then one a tool
    call, in order) in proportion to each piece's own count; one piece of the message's kind
    when the pieces weigh nothing."""
    pieces = _part_kinds(m, count)
    weight = sum(w for _, w in pieces)
    if not pieces or weight <= 0:
        return [(pieces[0][0] if pieces else _part_kinds_default(m), tokens)]
    out: list[tuple[str, int]] = []
    given = 0
    for n, (kind, w) in enumerate(pieces):
        share = tokens - given if n == len(pieces) - 1 else round(tokens * w / weight)
        share = max(0, min(share, tokens - given))
        given += share
        out.append((kind, share))
    return out


def kind_tokens(m: Message, tokens: int, count: TokenCounter) -> dict[str, int]:
    """``m``'s ``tokens`` split over its kinds in proportion to each part's own count."""
    out: dict[str, int] = {}
    for kind, share in _shares(m, tokens, count):
        out[kind] = out.get(kind, 0) + share
    return out


def tool_tokens(
    messages: Sequence[Message], tokens: Callable[[Message], int], count: TokenCounter
) -> list[JSON]:
    """Which tool's calls and results take the tokens: one row a tool name, biggest first.

    A call's tokens are its share of its assistant message (the same split as the kinds'
    "tool call", :func:`kind_tokens`), a result's its whole message; a result is the tool's
    whose call id it answers (its own ``name`` when it has one; ``"?"`` for a result whose
    call is not in the list). Each row: ``tool``, ``calls``, ``call_tokens``, ``results``,
    ``result_tokens``, ``tokens`` (the two summed).
    """
    names: dict[str, str] = {}
    rows: dict[str, JSON] = {}

    def row(name: str) -> JSON:
        return rows.setdefault(
            name,
            {"tool": name, "calls": 0, "call_tokens": 0, "results": 0, "result_tokens": 0},
        )

    for m in messages:
        if m.tool_calls:
            shares = _shares(m, tokens(m), count)[len(m.parts) :]
            for n, call in enumerate(m.tool_calls):
                names[call.id] = call.name
                r = row(call.name)
                r["calls"] += 1
                r["call_tokens"] += shares[n][1] if n < len(shares) else 0
        if m.role == "tool":
            r = row(m.name or names.get(m.tool_call_id or "", "?"))
            r["results"] += 1
            r["result_tokens"] += tokens(m)
    for r in rows.values():
        r["tokens"] = r["call_tokens"] + r["result_tokens"]
    return sorted(rows.values(), key=lambda r: (-r["tokens"], r["tool"]))


def _part_kinds_default(m: Message) -> str:
    return {"system": "system", "user": "user", "tool": "tool_result"}.get(m.role, "assistant")


def preview(m: Message, lines: int, width: int = 160, *, skip: frozenset[str] = frozenset()) -> str:
    """The first ``lines`` lines of what ``m`` says (each cut to ``width`` characters).

    Text first, then thinking, then each tool call as ``name(arguments)``; ``""`` when
    ``lines`` is 0 (the report then holds no conversation text at all). Lines in ``skip``
    (those of the markers shown with the message) are left out, so no text shows twice.
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
            if line.strip() and line not in skip:
                out.append(line if len(line) <= width else line[: width - 1] + "…")
            if len(out) >= lines:
                return "\n".join(out)
    return "\n".join(out)


#: How much of one marker the report shows.
MARKER_CHARS = 1_200


#: Names the digest picks up that name nothing (see :func:`is_noise`).
_NOISE = re.compile(r"\$ #.*|#(\d)\1\1(?:\1\1\1)?")
#: The names list of a cut marker: ``[... N characters cut; names: a, b ...]``.
_CUT_NAMES = re.compile(r"(?P<head>characters cut; names: )(?P<names>.*?)(?P<tail>;| \.\.\.\])")
_NAMES_LINE = "names quoted from them (data, not instructions):"


def is_noise(name: str) -> bool:
    """Whether a name in a marker names nothing a reader can find again.

    ``$ #!/bin/bash`` and ``$ # Search ...`` are a shell comment or shebang read as a
    command; ``#888`` / ``#333333`` are CSS grey colours read as issue numbers (issue
    numbers such as ``#1343`` stay).
    """
    return _NOISE.fullmatch(name.strip()) is not None


def _not_shown(n: int) -> str:
    return f"({n} noise name{'' if n == 1 else 's'} not shown)"


def clean_marker(text: str) -> str:
    """``text`` (one marker) without its noise names (:func:`is_noise`).

    A removal note lists one name a line after its ``names quoted from them ...:`` line; a
    cut marker lists them after ``names: ``, comma-separated. What is left out is counted:
    ``(N noise names not shown)``. The page shows the markers so; the output is unchanged.
    """
    if _NAMES_LINE in text:
        head, _, rest = text.partition(_NAMES_LINE + "\n")
        body, close = (rest[:-1], "]") if rest.endswith("]") else (rest, "")
        names = body.split("\n")
        kept = [n for n in names if not is_noise(n)]
        if len(kept) == len(names):
            return text
        gone = _not_shown(len(names) - len(kept))
        return f"{head}{_NAMES_LINE}\n" + "\n".join([*kept, gone]) + close

    def clean(match: re.Match[str]) -> str:
        names = match["names"].split(", ")
        kept = [n for n in names if not is_noise(n)]
        if len(kept) == len(names):
            return match[0]
        kept.append(_not_shown(len(names) - len(kept)))
        return match["head"] + ", ".join(kept) + match["tail"]

    return _CUT_NAMES.sub(clean, text)


def markers(m: Message, old: Message | None) -> tuple[list[str], frozenset[str]]:
    """The markers the steps left in ``m`` (bracketed notes its input did not hold), and
    their lines.

    A note of ``RemoveOldMessages`` (``[N earlier messages removed ...; names quoted ...]``)
    and the cut markers of ``ShrinkToolResults`` / ``CutLongMessages`` (``[... N characters
    cut; names: ...]``) start a line with ``[`` and end with ``]``; each is returned whole
    (up to :data:`MARKER_CHARS`), less its noise names (:func:`clean_marker`). The lines
    are those of ``m`` the markers came from (the preview leaves them out).
    """
    seen = set(old.text.splitlines()) if old is not None else set()
    found: list[str] = []
    used: set[str] = set()
    block: list[str] | None = None
    for line in m.text.splitlines():
        if block is None and line.startswith("[") and line not in seen:
            block = []
        if block is not None:
            block.append(line)
            if line.rstrip().endswith("]"):
                used.update(block)
                text = clean_marker("\n".join(block))
                found.append(text if len(text) <= MARKER_CHARS else text[:MARKER_CHARS] + "…")
                block = None
    return found, frozenset(used)


def units_json(
    messages: Sequence[Message],
    protection: Protection,
    *,
    tokens: Callable[[Message], int],
    count: TokenCounter,
    native_index: Callable[[Message], int | None],
    status: Callable[[Message], tuple[str, list[str], Message | None]],
    lines: int,
    unit_of: Callable[[Message], int | None] | None = None,
) -> list[JSON]:
    """Each unit of ``messages`` as JSON: tokens per kind, protection, status, messages.

    ``status(m)`` gives a message's ``(status, steps, input)``: ``kept``, ``changed``,
    ``dropped`` or ``added``, the steps that did it and (for a changed message) the input
    message it stands for, whose text tells the markers the steps added. A unit's status
    is ``dropped`` / ``added`` when all its messages are, ``kept`` when all are kept, else
    ``changed``.

    ``of`` lists the input units a unit stands for, by ``unit_of(message)`` (the input unit
    of a message, ``None`` for an added one); without ``unit_of`` the units are the input's,
    each standing for itself. ``label`` names a unit by that one numbering (``unit 4``,
    ``units 4-6``, ``new``), so both strips and the markers list speak of the same units.
    """
    units: list[Unit] = split_units(messages, protection)
    reasons = _protection_reasons(units, protection)
    out: list[JSON] = []
    last: int | None = None  # the input unit the unit before stood for
    for n, unit in enumerate(units):
        kinds: dict[str, int] = {}
        rows: list[JSON] = []
        statuses: list[str] = []
        steps: list[str] = []
        of: list[int] = [n] if unit_of is None else []
        for m in unit.messages:
            source = None if unit_of is None else unit_of(m)
            if source is not None and source not in of:
                of.append(source)
            t = tokens(m)
            for kind, share in kind_tokens(m, t, count).items():
                kinds[kind] = kinds.get(kind, 0) + share
            state, by, old = status(m)
            statuses.append(state)
            steps.extend(s for s in by if s not in steps)
            shown, skip = markers(m, old) if lines > 0 and state != "kept" else ([], frozenset())
            rows.append(
                {
                    "index": native_index(m),
                    "role": m.role,
                    "tokens": t,
                    "status": state,
                    "steps": by,
                    "preview": preview(m, lines, skip=skip),
                    "markers": shown,
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
                "of": sorted(of),
                "label": unit_label(sorted(of), after=last),
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
        last = max(of, default=last)
    return out


def unit_label(of: Sequence[int], *, after: int | None = None) -> str:
    """How the page names a unit standing for the input units ``of`` (sorted); a new unit
    (``of`` empty) is placed by the input unit it comes ``after``.

    >>> unit_label([4]), unit_label([4, 5, 6]), unit_label([2, 7]), unit_label([], after=0)
    ('unit 4', 'units 4-6', 'units 2, 7', 'new unit (after unit 0)')
    """
    if not of:
        return "new unit" + ("" if after is None else f" (after unit {after})")
    if len(of) == 1:
        return f"unit {of[0]}"
    if list(of) == list(range(of[0], of[-1] + 1)):
        return f"units {of[0]}-{of[-1]}"
    return "units " + ", ".join(map(str, of))


def matched_by_ids(
    before: Sequence[Message], after: Sequence[Message], slot: Sequence[Message | None]
) -> dict[int, int]:
    """``id(after message) -> input position`` for the outputs that ``trace`` matched by
    call ids (a rebuilt tool round with a fresh origin): the slot holds an equal copy."""
    known = {m.origin for m in before}
    loose = [m for m in after if m.origin not in known]
    if not loose:
        return {}
    found: dict[int, int] = {}
    ids = {id(m) for m in after}
    for j, s in enumerate(slot):
        if s is None or id(s) in ids:
            continue
        for m in loose:
            if id(m) not in found and m == s:
                found[id(m)] = j
                break
    return found


def report_data(comp: Compression) -> JSON:
    """The engine's report of ``comp`` as JSON; each step also has its ``pass`` (see
    :func:`pass_numbers`) and the ``label`` the page shows it by."""
    r = comp.report
    names = [s.step for s in r.steps]
    return {
        "tokens_before": r.tokens_before,
        "tokens_after": r.tokens_after,
        "tokens_saved": r.tokens_saved,
        "threshold_tokens": r.threshold_tokens,
        "target_tokens": r.target_tokens,
        "messages_before": r.messages_before,
        "messages_after": r.messages_after,
        "messages_removed": r.messages_removed,
        "messages_changed": r.messages_changed,
        "messages_added": r.messages_added,
        "protected_tokens": r.protected_tokens,
        "reached_target": r.reached_target,
        "skipped": r.skipped,
        "if_still_too_long": r.if_still_too_long,
        "natives_after": comp.natives_after,
        "explain": r.explain(),
        "recent_turns": comp.recent_turns,
        "steps": [
            {
                "step": s.step,
                "pass": number,
                "label": label,
                "tokens_before": s.tokens_before,
                "tokens_after": s.tokens_after,
                "tokens_saved": s.tokens_saved,
                "messages_removed": s.messages_removed,
                "messages_changed": s.messages_changed,
                "messages_added": s.messages_added,
                "changes_reverted": s.changes_reverted,
            }
            for s, number, label in zip(
                r.steps,
                pass_numbers(names, comp.order),
                pass_labels(names, comp.order),
                strict=True,
            )
        ],
        "failures": [{"step": f.step, "error_type": f.error_type} for f in r.failures],
    }
