"""The table of ``quality.py``: its columns, as text or Markdown."""

from collections.abc import Sequence

HEADERS = (
    "data set",
    "budget",
    "contender",
    "traces",
    "window fits",
    "target reached",
    "unchanged",
    "task+system identical",
    "last 3 turns verbatim",
    "... where the window fits",
    "paths named (median)",
    "error lines named (median)",
    "error lines by name (pooled)",
    "error lines verbatim (pooled)",
    "last error line verbatim",
    "valid",
    "median ms",
)
NUMERIC = set(range(3, 17))


def render(rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(HEADERS) + " |"]
        lines.append(
            "|" + "|".join("---:" if i in NUMERIC else "---" for i in range(len(HEADERS))) + "|"
        )
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [list(HEADERS), *rows]) for i in range(len(HEADERS))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in NUMERIC else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    return "\n".join([line(HEADERS), "  ".join("-" * w for w in widths), *map(line, rows)])
