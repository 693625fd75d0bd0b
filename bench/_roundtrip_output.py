"""The tables and notes of ``roundtrip_report.py``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from _roundtrip_run import MODES, TARGETS, Found, TargetResult

# ----------------------------------------------------------------------------------------------
# output


def render(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def _ratio(good: int, total: int) -> str:
    return f"{good}/{total}" if total else "-"


def _exact_cell(rs: list[TargetResult]) -> str:
    cross = [r for r in rs if r.exact is not None]
    cell = _ratio(sum(bool(r.exact) for r in cross), len(cross))
    like = [r for r in cross if r.like_uncarried is not None]
    if like:
        cell += f" ({sum(bool(r.like_uncarried) for r in like)}/{len(like)} as carry=False dicts)"
    return cell


def main_table(results: list[TargetResult]) -> str:
    header = [
        "target",
        "real convs",
        "messages",
        "round-trip identical",
        "cross-format exact",
        "compressions",
        "in viol. carrier/stripped",
        "out viol. carrier/stripped",
        "thinking/sig changes",
    ]
    rows = []
    for target in TARGETS:
        rs = [r for r in results if r.target == target]
        rows.append(
            [
                target,
                str(len(rs)),
                f"{sum(r.messages for r in rs):,}",
                _ratio(sum(r.identical for r in rs), len(rs)),
                _exact_cell(rs),
                f"{sum(r.compressions for r in rs):,}",
                " / ".join(f"{sum(len(r.inputs.get(m, [])) for r in rs):,}" for m in MODES),
                " / ".join(f"{sum(len(r.outputs.get(m, [])) for r in rs):,}" for m in MODES),
                f"{sum(len(r.thinking) for r in rs):,}",
            ]
        )
    return render(header, rows)


def source_table(results: list[TargetResult]) -> str:
    """Cross-format exact and new output violations (carrier/stripped) by source."""
    sources = list(dict.fromkeys(r.source for r in results))
    header = ["source \\ target", *TARGETS]
    rows = []
    for source in sources:
        cells = [source]
        for target in TARGETS:
            rs = [r for r in results if r.source == source and r.target == target]
            cross = [r for r in rs if r.exact is not None]
            exact = _ratio(sum(bool(r.exact) for r in cross), len(cross)) if cross else "own"
            out = "/".join(str(sum(len(r.outputs.get(m, [])) for r in rs)) for m in MODES)
            cells.append(f"{exact}, {out}")
        rows.append(cells)
    return render(header, rows)


def _examples(
    results: list[TargetResult], pick: Callable[[TargetResult], list[Found]]
) -> list[str]:
    """Per target and rule: count, conversations, and the first example."""
    out: list[str] = []
    for target in TARGETS:
        by_rule: dict[str, list[tuple[TargetResult, Found]]] = {}
        for r in results:
            if r.target == target:
                for f in pick(r):
                    by_rule.setdefault(f[0], []).append((r, f))
        for rule, hits in sorted(by_rule.items()):
            convs = len({(r.source, r.name) for r, _ in hits})
            r, (_, index, message, where) = hits[0]
            at = f" after {where}" if where else ""
            out.append(
                f"{target}: {rule} x{len(hits):,} in {convs} conversation(s); first: "
                f"{r.source}/{r.name}{at}: [{index}] {message}"
            )
    return out


def notes(results: list[TargetResult]) -> list[str]:
    lines: list[str] = []
    for mode in MODES:
        found = _examples(results, lambda r, m=mode: r.inputs.get(m, []))
        lines.append(f"Input violations ({mode}):" + ("" if found else " none"))
        lines += [f"  - {f}" for f in found]
    for mode in MODES:
        found = _examples(results, lambda r, m=mode: r.outputs.get(m, []))
        lines.append(f"New output violations ({mode}):" + ("" if found else " none"))
        lines += [f"  - {f}" for f in found]
    ignored: Counter[str] = Counter()
    for r in results:
        ignored.update({f"{r.target} {k}": v for k, v in r.ignored.items()})
    if ignored:
        lines.append(
            "Output violations not counted (their rule is already broken by the input): "
            + ", ".join(f"{k} x{v:,}" for k, v in sorted(ignored.items()))
        )
    for mode in MODES:
        found = _examples(
            results,
            lambda r, m=mode: [f for k, f in r.elsewhere if k == m],
        )
        lines.append(
            f"  of those, neither at an input native that breaks the rule nor naming the same "
            f"ids as an input violation (reserved_key left out: rebuilt carried natives keep "
            f"it) ({mode}):" + ("" if found else " none")
        )
        lines += [f"    - {f}" for f in found]
    lines.append("Cross-format round trips that are not exact:")
    any_inexact = False
    for target in TARGETS:
        bad = [r for r in results if r.target == target and r.exact is False]
        if not bad:
            continue
        any_inexact = True
        counts: Counter[str] = Counter()
        for r in bad:
            counts.update(r.exact_fields)
        first = bad[0]
        lines.append(
            f"  - {target}: {len(bad)} conversation(s); differing message fields: "
            + ", ".join(f"{k} x{v:,}" for k, v in counts.most_common())
            + f"; first: {first.source}/{first.name}: {first.exact_problem}"
        )
    if not any_inexact:
        lines[-1] += " none"
    unlike = [r for r in results if r.like_uncarried is False]
    if unlike:
        counts = Counter()
        for r in unlike:
            counts.update(r.like_uncarried_fields)
        lines.append(
            f"  - gemini-objects vs the same messages dumped as carry=False dicts: "
            f"{len(unlike)} conversation(s) load differently; fields: "
            + ", ".join(f"{k} x{v:,}" for k, v in counts.most_common())
            + f"; first: {unlike[0].source}/{unlike[0].name}"
        )
    signed: Counter[str] = Counter()
    for r in results:
        if r.target.startswith("gemini"):
            signed[f"{r.target} from {r.source}"] += r.signed_calls
    lines.append(
        "Gemini function_call parts with a thought_signature in the sendable natives: "
        + ", ".join(f"{k} {v:,}" for k, v in signed.items())
    )
    kinds: Counter[str] = Counter()
    firsts: dict[str, str] = {}
    for r in results:
        for kind, what in r.thinking:
            key = f"{r.target} {kind}"
            kinds[key] += 1
            firsts.setdefault(key, f"{r.source}/{r.name} {what}")
    lines.append("Thinking/signature changes:" + ("" if kinds else " none"))
    lines += [f"  - {k} x{v:,}; first: {firsts[k]}" for k, v in sorted(kinds.items())]
    rejected = [(r, e) for r in results for e in r.rejected]
    lines.append(
        "Inputs compress_for refuses (validate_messages raises; not compressed): "
        + (
            f"{len(rejected)}: "
            + ", ".join(f"{t} x{n}" for t, n in Counter(f"{r.target}" for r, _ in rejected).items())
            + f"; first: {rejected[0][0].source}/{rejected[0][0].name} {rejected[0][1]}"
            if rejected
            else "none"
        )
    )
    groups: dict[str, list[tuple[TargetResult, tuple[str, str, str]]]] = {}
    for r in results:
        for e in r.errors:
            groups.setdefault(f"{r.target}: {e[0]} raised {e[2].split(':')[0]}", []).append((r, e))
    lines.append("Exceptions:" + ("" if groups else " none"))
    for key, hits in groups.items():
        r, (_, where, error) = hits[0]
        convs = len({(x.source, x.name) for x, _ in hits})
        at = f" after {where}" if where else ""
        lines.append(
            f"  - {key} x{len(hits):,} in {convs} conversation(s); first: "
            f"{r.source}/{r.name}{at}: {error}"
        )
    copies = [(r, c) for r in results for c in r.copies]
    lines.append(
        "Kept natives that came back as equal copies, not the same objects: "
        + (
            f"{len(copies):,}; first: {copies[0][0].target} {copies[0][0].source}/"
            f"{copies[0][0].name} {copies[0][1]}"
            if copies
            else "none"
        )
    )
    mutated = [r for r in results if r.mutated]
    lines.append(
        "Inputs mutated: "
        + (", ".join(f"{r.target} {r.source}/{r.name}" for r in mutated[:10]) or "none")
    )
    return lines
