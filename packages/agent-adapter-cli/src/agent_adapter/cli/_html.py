"""``agent-adapter report``: one self-contained HTML page of where the tokens go.

The page holds its CSS and script inline and loads nothing (no CDN, no fonts, no images).
Conversation text enters it only as the first lines of each message (``preview_lines``; 0
for none) and the markers the steps left, HTML-escaped in the markup and, in the page's
JSON, with ``<``, ``>`` and ``&`` written as ``\\u003c``-style escapes; the script shows it
with ``textContent`` only, so nothing from the conversation can run.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_adapter._messages import Message
from agent_adapter.cli._html_data import (
    JSON,
    KINDS,
    Compression,
    compress_recorded,
    matched_by_ids,
    report_data,
    tool_tokens,
    units_json,
)
from agent_adapter.cli._html_template import COLOURS, CSS, LABELS, SCRIPT
from agent_adapter.cli._loaders import Trace
from agent_adapter.cli._progress import Tick
from agent_adapter.cli._report import COUNTER_LABELS, REASONS
from agent_adapter.context import (
    CompressionPolicy,
    Protection,
    TokenCounter,
    TokenMeter,
    Unit,
    split_units,
)
from agent_adapter.context._provenance import trace as trace_lists
from agent_adapter.context.formats import convert

#: Rows the input's strip is laid out on (the output uses the same tokens per row).
ROWS = 24
#: The narrowest a piece of a unit is drawn, in CSS pixels (so that it can be hovered).
MIN_PX = 8


def build_report(
    *,
    file: Path,
    trace: Trace,
    fmt: str,
    counter: str,
    count: TokenCounter,
    policy: CompressionPolicy | None,
    preview_lines: int,
    tick: Tick | None = None,
) -> JSON:
    """Everything the page shows, as JSON-safe data (also what ``--json`` prints a part of).

    Without ``policy`` only the input is shown; with it, the input and the compressed list,
    each unit marked kept / changed / dropped / added and by which step. ``tick`` is called
    as each step starts (the progress bar).
    """
    conversion = convert(trace.messages, fmt)
    before = conversion.messages
    tokens = _Tokens(count, before)
    position = {m.origin: i for i, m in enumerate(before)}
    native = [conversion.native_index(i) for i in range(len(before))]
    protection = Protection(before)
    comp = compress_recorded(conversion, policy, tick) if policy is not None else None
    data = _page_head(file, trace, fmt, counter, preview_lines)

    def native_before(m: Message) -> int | None:
        return native[position[m.origin]]

    if comp is None:
        units = units_json(
            before,
            protection,
            tokens=tokens,
            count=count,
            native_index=native_before,
            status=_unchanged,
            lines=preview_lines,
        )
        data["before"] = _side(units, len(before), count([]), tool_tokens(before, tokens, count))
        data["after"] = None
        data["report"] = None
        return data

    match = _Match(before, comp, position, native, split_units(before, protection))
    base = count([])
    data["before"] = _side(
        units_json(
            before,
            protection,
            tokens=tokens,
            count=count,
            native_index=native_before,
            status=match.status_before,
            lines=preview_lines,
        ),
        len(before),
        base,
        tool_tokens(before, tokens, count),
    )
    data["after"] = _side(
        units_json(
            comp.after,
            protection,
            tokens=tokens,
            count=count,
            native_index=match.native_after,
            status=match.status_after,
            lines=preview_lines,
            unit_of=match.unit_after,
        ),
        len(comp.after),
        base,
        tool_tokens(comp.after, tokens, count),
    )
    data["report"] = report_data(comp)
    return data


def _page_head(file: Path, trace: Trace, fmt: str, counter: str, preview_lines: int) -> JSON:
    """What the page says of the file: its name, source, format, counter and size."""
    return {
        "file": str(file),
        "name": trace.name,
        "source": trace.source,
        "format": fmt,
        "counter": COUNTER_LABELS.get(counter, counter),
        "natives": len(trace.messages),
        "labels": LABELS,
        "preview_lines": preview_lines,
    }


class _Tokens:
    """Each message's tokens as the compression of ``request`` counts them (a
    :class:`~agent_adapter.context.TokenMeter` bound to it: what the provider drops before
    an Anthropic ``compaction`` block counts 0), remembered by ``id(m)``."""

    def __init__(self, count: TokenCounter, request: Sequence[Message]) -> None:
        self.meter = TokenMeter(count)
        self.meter.bind(request)
        self.cache: dict[int, int] = {}
        self.keep: list[Message] = []  # holds the counted messages so their ids stay theirs

    def __call__(self, m: Message) -> int:
        found = self.cache.get(id(m))
        if found is None:
            found = self.cache[id(m)] = self.meter.of(m)
            self.keep.append(m)
        return found


def _unchanged(m: Message) -> tuple[str, list[str], Message | None]:
    """The status of every message when nothing was compressed."""
    return "kept", [], None


class _Match:
    """Each input message's fate and each output message's input: the two sides' statuses."""

    def __init__(
        self,
        before: Sequence[Message],
        comp: Compression,
        position: dict[int, int],
        native: Sequence[int | None],
        units: Sequence[Unit],
    ) -> None:
        self.before = before
        self.comp = comp
        self.position = position
        self.native = native
        self.slot = trace_lists(before, comp.after).slot
        self.by_ids = matched_by_ids(before, comp.after, self.slot)
        self.unit_at = [n for n, u in enumerate(units) for _ in u.messages]

    def status_before(self, m: Message) -> tuple[str, list[str], Message | None]:
        now = self.slot[self.position[m.origin]]
        if now is None:
            return "dropped", [self.comp.dropped_by.get(m.origin, "?")], None
        if now is m:
            return "kept", [], None
        return "changed", self.comp.changed_by.get(m.origin, ["?"]), None

    def input_of(self, m: Message) -> int | None:
        j = self.position.get(m.origin)
        return j if j is not None else self.by_ids.get(id(m))

    def status_after(self, m: Message) -> tuple[str, list[str], Message | None]:
        j = self.input_of(m)
        if j is None:
            return "added", [self.comp.added_by.get(m.origin, "?")], None
        old = self.before[j]
        if m is old:
            return "kept", [], None
        changed_by = self.comp.changed_by
        steps = changed_by.get(old.origin) or changed_by.get(m.origin, ["?"])
        return "changed", steps, old

    def native_after(self, m: Message) -> int | None:
        j = self.input_of(m)
        return None if j is None else self.native[j]

    def unit_after(self, m: Message) -> int | None:
        """The unit of the input message ``m`` stands for: the after side numbers as the input."""
        j = self.input_of(m)
        return None if j is None else self.unit_at[j]


def _side(units: list[JSON], messages: int, base: int, tools: list[JSON]) -> JSON:
    return {
        "units": units,
        "tools": tools,
        "messages": messages,
        "tokens": base + sum(u["tokens"] for u in units),
        "protected_units": sum(u["protected"] for u in units),
        "protected_tokens": sum(u["tokens"] for u in units if u["protected"]),
        "counts": {s: sum(u["status"] == s for u in units) for s in _STATUSES},
    }


_STATUSES = ("kept", "changed", "dropped", "added")


# --------------------------------------------------------------------------------------------
# rendering


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _n(value: int) -> str:
    return f"{value:,}"


def _json_for_script(data: JSON) -> str:
    """``data`` as JSON that cannot end its ``<script>`` element nor open another."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, code)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _gradient(kinds: Sequence[Sequence[Any]], lo: int, hi: int) -> str:
    """The CSS background of a unit's tokens ``lo..hi``: its kinds as hard colour stops."""
    span = hi - lo
    if span <= 0 or len(kinds) == 1:
        return COLOURS[kinds[0][0]] if kinds else "#d1d5db"
    stops: list[str] = []
    at = 0
    for kind, size in kinds:
        a, b = max(at, lo), min(at + size, hi)
        at += size
        if b <= a:
            continue
        c = COLOURS[kind]
        stops.append(f"{c} {100 * (a - lo) / span:.2f}% {100 * (b - lo) / span:.2f}%")
    return f"linear-gradient(90deg, {', '.join(stops)})" if stops else "#d1d5db"


def _strip(
    side: str, units: list[JSON], per_row: int, ticks: Sequence[tuple[str, str, int]]
) -> str:
    """The units laid out left to right on rows of ``per_row`` tokens (area = tokens).

    Each row is a flex box whose pieces grow in proportion to their tokens, none narrower
    than :data:`MIN_PX` (less when a row holds very many), so a unit of a few tokens (the
    task, the latest user message) can still be seen and hovered. A unit longer than what
    is left of a row goes on over the next; a zero-token unit gets a sliver. ``ticks`` are
    ``(limit, label, token position)`` (the threshold and target lines), each drawn inside
    the piece that holds its position; a position at or past the strip's end (a compressed
    list under the limit) is drawn on the last row's rest, so the limit always shows.
    """
    rows: list[list[tuple[JSON, int, int, int]]] = [[]]  # (unit, start, end, into the unit)
    at = 0
    for u in units:
        size, done = u["tokens"], 0
        while True:
            row, offset = divmod(at, per_row)
            take = min(size - done, per_row - offset)
            rows.extend([] for _ in range(row + 1 - len(rows)))
            rows[row].append((u, offset, offset + take, done))
            done += take
            at += take
            if done >= size:
                break
    marks: dict[tuple[int, int], str] = {}  # (row, piece; len(row) = the rest) -> its ticks
    for limit, label, position in ticks:
        if position < 0:
            continue
        if position >= at:  # at or past the strip's end (the list fits): on the last row's rest
            row = len(rows) - 1
            i = len(rows[row])
            lo = rows[row][-1][2] if rows[row] else 0
            hi = per_row
            offset = min(max(position - row * per_row, lo), hi)
        else:
            row, offset = divmod(position, per_row)
            spans = [(lo, hi) for _, lo, hi, _ in rows[row]]
            spans.append((spans[-1][1] if spans else 0, per_row))
            i = next(
                i for i, (lo, hi) in enumerate(spans) if lo <= offset < hi or i == len(spans) - 1
            )
            lo, hi = spans[i]
        marks[row, i] = marks.get((row, i), "") + (
            f'<div class="tick {limit.partition(" ")[0]}" '
            f'style="left:{100 * (offset - lo) / max(1, hi - lo):.2f}%">'
            f"<span>{_e(label)}</span></div>"
        )
    out: list[str] = []
    for r, pieces in enumerate(rows):
        least = f"min({MIN_PX}px,{100 / max(1, len(pieces)):.3f}%)"
        cells = []
        for i, (u, lo, hi, into) in enumerate(pieces):
            cls = f"u s-{u['status']}" + (" prot" if u["protected"] else "")
            style = (
                f"flex-grow:{hi - lo};min-width:{least};"
                f"background:{_gradient(u['kinds'], into, into + hi - lo)}"
            )
            cells.append(
                f'<div class="{cls}" data-side="{side}" data-n="{u["n"]}" style="{style}">'
                f"{marks.get((r, i), '')}</div>"
            )
        used = pieces[-1][2] if pieces else 0
        if used < per_row or (r, len(pieces)) in marks:
            cells.append(
                f'<div class="rest" style="flex-grow:{per_row - used}">'
                f"{marks.get((r, len(pieces)), '')}</div>"
            )
        out.append('<div class="row">' + "".join(cells) + "</div>")
    return f'<div class="strip" id="strip-{side}">' + "".join(out) + "</div>"


def _card(key: str, value: int | str, ident: str) -> str:
    raw = f' data-value="{value}"' if isinstance(value, int) else ""
    shown = _n(value) if isinstance(value, int) else _e(value)
    return (
        f'<div class="card"><div class="v" id="{ident}"{raw}>{shown}</div>'
        f'<div class="k">{_e(key)}</div></div>'
    )


#: The legend's swatch of each status and of protection.
_MARKS = {
    "protected": "background:repeating-linear-gradient(45deg,#111827 0 3px,#fde047 3px 6px)",
    "changed": "border:2px solid #dc2626",
    "dropped": "opacity:.35;background:repeating-linear-gradient(-45deg,#9ca3af 0 4px,"
    "#111 4px 6px)",
    "added": "border:2px dashed #111827",
}


def _legend(sides: Sequence[JSON]) -> str:
    """The kinds, protection and statuses that the strips of ``sides`` show, and no other."""
    units = [u for side in sides for u in side["units"]]
    kinds = {k for u in units for k, _ in u["kinds"]}
    shown = {u["status"] for u in units} | (
        {"protected"} if any(u["protected"] for u in units) else set()
    )
    items = [
        f'<span><i class="sw" style="background:{COLOURS[k]}"></i>{_e(LABELS[k])}</span>'
        for k in KINDS
        if k in kinds
    ]
    items += [
        f'<span><i class="sw" style="{style}"></i>'
        f"{'protected (top band)' if name == 'protected' else name}</span>"
        for name, style in _MARKS.items()
        if name in shown
    ]
    return '<div class="legend" id="legend">' + "".join(items) + "</div>"


def _kinds_table(side: JSON) -> str:
    totals: dict[str, int] = {}
    for u in side["units"]:
        for kind, size in u["kinds"]:
            totals[kind] = totals.get(kind, 0) + size
    whole = sum(totals.values()) or 1
    rows = "".join(
        f"<tr><td>{_e(LABELS[k])}</td><td>{_n(totals[k])}</td>"
        f"<td>{100 * totals[k] / whole:.1f}%</td></tr>"
        for k in KINDS
        if k in totals
    )
    return f"<table><tr><th>kind</th><th>tokens</th><th>%</th></tr>{rows}</table>"


def _tools_table(before: JSON, after: JSON | None) -> str:
    """Tokens per tool: its calls and results in the input (and in the compressed list)."""
    tools: list[JSON] = before.get("tools", [])
    if not tools:
        return '<p class="note">No tool calls or results.</p>'
    whole = before["tokens"] or 1
    kept = {r["tool"]: r["tokens"] for r in (after or {}).get("tools", [])}
    cols = ["tool", "calls", "call tokens", "result tokens", "tokens", "% of input"]
    if after is not None:
        cols.append("compressed")
    head = "<tr>" + "".join(f"<th>{c}</th>" for c in cols) + "</tr>"
    rows = []
    for r in tools:
        cells = [
            _e(r["tool"]),
            _n(r["calls"]),
            _n(r["call_tokens"]),
            _n(r["result_tokens"]),
            _n(r["tokens"]),
            f"{100 * r['tokens'] / whole:.1f}%",
        ]
        if after is not None:
            cells.append(_n(kept.get(r["tool"], 0)))
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f'<table id="tools">{head}{"".join(rows)}</table>'


def _reasons_table(side: JSON) -> str:
    rows = []
    for reason in (*REASONS, "unit"):
        hit = [u for u in side["units"] if reason in u["reasons"]]
        if hit:
            rows.append(
                f"<tr><td>{_e(reason)}</td><td>{len(hit)}</td>"
                f"<td>{_n(sum(u['tokens'] for u in hit))}</td></tr>"
            )
    if not rows:
        return '<p class="note">Nothing is protected.</p>'
    head = "<tr><th>protected for</th><th>units</th><th>tokens</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _gauge(report: JSON) -> str:
    """Tokens before, after each step and at the end, against the threshold and target."""
    bars: list[tuple[str, int, int]] = [("input", report["tokens_before"], 0)]
    for s in report["steps"]:
        bars.append((s["label"], s["tokens_after"], s["tokens_saved"]))
    if report["if_still_too_long"] == "cut" or not report["steps"]:
        bars.append(("result", report["tokens_after"], 0))
    top = max([b for _, b, _ in bars] + [report["threshold_tokens"]]) or 1
    width = "(100% - 340px)"  # 200px of labels on the left, 140px for the figures on the right

    def x(v: int) -> str:
        return f"calc(200px + {width} * {v / top:.5f})"

    out = []
    for label, value, saved in bars:
        fill = f'<div class="fill" style="width:calc({width} * {value / top:.5f})"></div>'
        if saved > 0:
            fill += (
                f'<div class="fill saved" style="left:{x(value)};'
                f'width:calc({width} * {saved / top:.5f})"></div>'
            )
        num = f"{_n(value)}" + (f" (\u2212{_n(saved)})" if saved > 0 else "")
        out.append(
            f'<div class="bar"><div class="lbl" title="{_e(label)}">{_e(label)}</div>{fill}'
            f'<div class="num" style="left:{x(value + max(saved, 0))}">{num}</div></div>'
        )
    for name, value in _limits(report):
        out.append(
            f'<div class="line {name.partition(" ")[0]}" style="left:{x(value)}">'
            f"<span>{name} {_n(value)}</span></div>"
        )
    return '<div class="gauge">' + "".join(out) + "</div>"


def _limits(report: JSON) -> list[tuple[str, int]]:
    """The threshold and target lines: one ``threshold = target`` line when they are equal."""
    threshold, target = report["threshold_tokens"], report["target_tokens"]
    if threshold == target:
        return [("threshold = target", target)]
    return [("threshold", threshold), ("target", target)]


def _steps_table(report: JSON) -> str:
    if not report["steps"]:
        why = report["skipped"].replace("_", " ") or "no step was needed"
        return f'<p class="note">No step ran ({_e(why)}).</p>'
    cols = ("tokens before", "after", "saved", "removed", "changed", "added", "reverted")
    head = "<tr><th>step</th>" + "".join(f"<th>{c}</th>" for c in cols) + "</tr>"
    rows = "".join(
        f"<tr><td>{_e(s['label'])}</td><td>{_n(s['tokens_before'])}</td>"
        f"<td>{_n(s['tokens_after'])}</td><td>{_n(s['tokens_saved'])}</td>"
        f"<td>{s['messages_removed']}</td><td>{s['messages_changed']}</td>"
        f"<td>{s['messages_added']}</td><td>{s['changes_reverted']}</td></tr>"
        for s in report["steps"]
    )
    last, after = report["steps"][-1]["tokens_after"], report["tokens_after"]
    if report["if_still_too_long"] == "cut" and last > after:  # from the last step's list
        rows += (
            f'<tr id="last-resort"><td>last-resort cut (if_still_too_long)</td>'
            f"<td>{_n(last)}</td><td>{_n(after)}</td><td>{_n(last - after)}</td>"
            "<td></td><td></td><td></td><td></td></tr>"
        )
    passes = ""
    if any(s["pass"] > 1 for s in report["steps"]):
        passes = (
            '<p class="note" id="passes">Pass 1 ran the steps with the newest '
            f"{report['recent_turns']} turns protected (recent_turns); it left the list over "
            "the target, so pass 2 ran them again over everything but the newest turn.</p>"
        )
    counts = (
        '<p class="note" id="counts-note">Three counts of changes, three units: the card '
        "<i>removed / changed / added</i> counts messages of the final list against the input "
        "(the library's messages: one native may load as several); the strips' headings count "
        "units (a tool round is one unit, changed when any of its messages is); this table "
        "counts the messages each step changed, so a message two steps changed is in both "
        "rows.</p>"
    )
    return f'<table id="steps">{head}{rows}</table>{passes}{counts}'


def _markers(side: JSON) -> str:
    items = []
    for u in side["units"]:
        for m in u["messages"]:
            for text in m["markers"]:
                steps = ", ".join(m["steps"])
                items.append(
                    f"<div><b>{_e(u['label'])}</b> ({_e(m['status'])} by {_e(steps)})"
                    f"<pre>{_e(text)}</pre></div>"
                )
    if not items:
        return ""
    shown = items[:200]
    more = f'<p class="note">and {len(items) - 200} more</p>' if len(items) > 200 else ""
    return (
        "<h2>Markers the steps left (the names they kept of what went)</h2>"
        f'<div class="markers">{"".join(shown)}{more}</div>'
    )


def render(data: JSON) -> str:
    """The page for :func:`build_report`'s ``data``: one HTML document, nothing to fetch."""
    before: JSON = data["before"]
    after: JSON | None = data["after"]
    report: JSON | None = data["report"]
    per_row = max(1, math.ceil((before["tokens"] or 1) / ROWS))
    title = f"{data['name']}: where the tokens go"
    meta = (
        f"{_e(data['file'])} \u00b7 {_e(data['source'])}, format {_e(data['format'])} \u00b7 "
        f"{_e(data['counter'])} \u00b7 {_n(data['natives'])} messages in the file"
    )
    ticks = _ticks(before, report) if report is not None and after is not None else None
    body: list[str] = []
    if ticks is not None and report is not None:
        miss = "" if report["reached_target"] else " miss"
        body.append(f'<div class="explain{miss}" id="explain">{_e(report["explain"])}</div>')
    body.append('<div class="cards">' + "".join(_cards(before, after, report)) + "</div>")
    body += _strips(before, after, report, per_row, ticks or {"b": [], "a": []})
    if report is not None:
        body += _report_sections(report)
    body.append(
        '<div class="sides">'
        f"<div><h2>Tokens per kind (input)</h2>{_kinds_table(before)}</div>"
        f"<div><h2>What is protected and why</h2>{_reasons_table(before)}</div></div>"
    )
    body.append(
        f"<h2>Tokens per tool (which tool's output takes them)</h2>{_tools_table(before, after)}"
    )
    if after is not None:
        body.append(_markers(after))
    body.append(_text_note(data["preview_lines"]))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>{_e(title)}</h1><div class="meta">{meta}</div></header>'
        f'<main>{"".join(body)}</main><div id="tip"></div>'
        f'<script type="application/json" id="report-data">{_json_for_script(data)}</script>'
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def _cards(before: JSON, after: JSON | None, report: JSON | None) -> list[str]:
    """The figures at the top: the input's, and the compressed list's when there is one."""
    cards = [
        _card("tokens (input)", before["tokens"], "tokens-before"),
        _card("units (input)", len(before["units"]), "units-before"),
        _card("messages (input)", before["messages"], "messages-before"),
        _card("protected tokens (input)", before["protected_tokens"], "protected-before"),
    ]
    if report is not None and after is not None:
        cards += [
            _card("tokens (compressed)", report["tokens_after"], "tokens-after"),
            _card("units (compressed)", len(after["units"]), "units-after"),
            _card("tokens saved", report["tokens_saved"], "tokens-saved"),
            _card("removed / changed / added", _counts(report), "message-counts"),
        ]
    return cards


def _ticks(before: JSON, report: JSON) -> dict[str, list[tuple[str, str, int]]]:
    """The limits' lines on each strip (``"b"`` the input, ``"a"`` the compressed list)."""
    limits = _limits(report)
    return {
        "b": [  # where the newest that many tokens of the input start
            (name, f"newest {_n(value)} tokens ({name}) \u2192", before["tokens"] - value)
            for name, value in limits
            if value < before["tokens"]
        ],
        "a": [(name, f"{name} {_n(value)}", value) for name, value in limits],
    }


def _strips(
    before: JSON,
    after: JSON | None,
    report: JSON | None,
    per_row: int,
    ticks: dict[str, list[tuple[str, str, int]]],
) -> list[str]:
    """The legend, the strip of each side and (with limits) the note on how to read them."""
    sides = [("b", "Input", before)] + ([("a", "Compressed", after)] if after else [])
    columns = []
    for key, label, side in sides:
        c = side["counts"]
        status = ", ".join(f"{c[s]} {s}" for s in _STATUSES if c[s])
        columns.append(
            f'<div class="side"><h3>{label}: {_n(side["tokens"])} tokens, '
            f"{len(side['units'])} units{' (' + status + ')' if report is not None else ''}"
            f"</h3>{_strip(key, side['units'], per_row, ticks[key])}</div>"
        )
    one = "" if after else " one"
    out = [
        _legend([side for _, _, side in sides]),
        "<h2>The conversation, unit by unit (area = tokens; each row "
        f"{_n(per_row)} tokens; hover a unit)</h2>"
        f'<div class="sides{one}">{"".join(columns)}</div>',
    ]
    if ticks["a"]:
        out.append(
            '<p class="note" id="limits-note">The compressed strip must end before its line '
            "(the limit, counted from its start). On the input the line is drawn where its "
            "newest that many tokens begin: what lies left of it is how far the input is "
            "over, wherever the steps took the tokens from.</p>"
        )
    return out


def _report_sections(report: JSON) -> list[str]:
    """The gauge of tokens after each step, the steps' table and the steps that raised."""
    out = [
        "<h2>Tokens after each step</h2>" + _gauge(report),
        "<h2>Steps</h2>" + _steps_table(report),
    ]
    if report["failures"]:
        failed = ", ".join(f"{f['step']} ({f['error_type']})" for f in report["failures"])
        out.append(f'<p class="note">Steps that raised and were skipped: {_e(failed)}</p>')
    return out


def _text_note(lines: int) -> str:
    """What conversation text the page holds."""
    return (
        '<p class="note">'
        + (
            f"Text shown: the first {lines} lines of each message and the steps' markers."
            if lines > 0
            else "No conversation text is in this page (--preview-lines 0)."
        )
        + " Generated by agent-adapter report.</p>"
    )


def _counts(report: JSON) -> str:
    return (
        f"{report['messages_removed']} / {report['messages_changed']} / {report['messages_added']}"
    )


def write_report(out: Path, data: JSON) -> int:
    """Write the page for ``data`` to ``out``; returns its size in bytes."""
    text = render(data)
    out.write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))


def index_page(folder: Path, rows: Sequence[JSON]) -> str:
    """The ``index.html`` of ``report DIR``: a plain page linking the pages (nothing loaded).

    One row a trace (``rows`` as ``report --json`` prints them): its units and tokens, the
    tokens after compression and whether the target was reached (``yes`` / ``no``; blank
    without a policy).
    """
    items = []
    for r in rows:
        name = _e(Path(r["file"]).relative_to(folder))
        if "error" in r:
            items.append(f"<tr><td>{name}</td><td colspan=4>error: {_e(r['error'])}</td></tr>")
            continue
        after, report = r["tokens_after"], r["report"]
        reached = "" if report is None else "yes" if report["reached_target"] else "no"
        items.append(
            f'<tr><td><a href="{_e(Path(r["output"]).name)}">{name}</a></td>'
            f"<td>{_n(r['units_before'])}</td><td>{_n(r['tokens_before'])}</td>"
            f"<td>{'' if after is None else _n(after)}</td>"
            f'<td class="{reached}">{reached}</td></tr>'
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\"><title>agent-adapter reports</title><style>"
        "body{font:14px system-ui,sans-serif;margin:20px}td,th{padding:3px 10px;"
        "border-bottom:1px solid #e5e7eb;text-align:right}td:first-child{text-align:left}"
        "td.no{color:#dc2626;font-weight:600}"
        f"</style></head><body><h1>Reports for {_e(folder)}</h1><table>"
        "<tr><th>trace</th><th>units</th><th>tokens</th><th>compressed</th>"
        "<th>target reached</th></tr>" + "".join(items) + "</table></body></html>\n"
    )
