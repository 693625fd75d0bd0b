"""Digests of removed text: the names a cut or a dropped round leaves behind.

:func:`digest` picks out of the removed text what a reader most needs to find again: file
paths, commands and exit statuses, error and exception lines, failed tests, pytest tallies,
URLs, issue numbers and commit ids; it joins them, each once, in order of first appearance,
leaving out what the kept text still shows, within a character bound. Cuts
(:func:`~agent_adapter.context._text.cut_text`) put it in their marker; anything that drops
text can put it in its note.

Speed: every pass starts from a literal (``str.find``, or a regex with a literal prefix), and
the line regex runs only on the lines a literal was found in. Only the removed text is
scanned (its two ends when it is huge); the kept text is searched for at most
``_MAX_CHECKS`` names. The names found in a text, and whether a kept text shows a name, are
remembered by the texts' content (:class:`~agent_adapter.context._lru.Memo`, bounded): a
message cut or dropped again, in a later pass or call, is not scanned again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from agent_adapter.context._lru import Memo, clear

__all__ = [
    "DIGEST_MAX_CHARS",
    "Name",
    "clear_memos",
    "clip_ends",
    "digest",
    "drop_shown",
    "is_path",
    "join_names",
    "leading_status",
    "names_in",
    "names_room",
    "newest_error",
    "shown_by",
]

#: The default bound of a digest, in characters (about 60 tokens of paths and names).
DIGEST_MAX_CHARS = 240
#: A cut that removes much may name more: up to this share of the characters it removes,
#: at most this many characters (600 tokens, the most a drop note names).
_NAMES_SHARE, _NAMES_MAX_CHARS = 0.2, 2_400
#: Distinct names searched for in the kept text; the ones after are only counted.
_MAX_CHECKS = 64
#: A removed text longer than both is scanned at its two ends only.
_SCAN_HEAD = 6_000
_SCAN_TAIL = 3_000
#: Lines longer than this around a trigger are not read as error or test lines.
_LINE_MAX = 400
#: Lines read at most (the first three quarters and the last quarter of those found).
_MAX_LINES = 1000
#: Names read at most from the middle of a clipped text (``clip_ends(middle_names=True)``),
#: and how much of a long middle is read for them, in how many windows (``_middle_windows``).
_MIDDLE_NAMES = 256
_MIDDLE_SCAN, _MIDDLE_WINDOWS = 128_000, 16
#: What separates names in a line (where a window of a long line may start and end).
_SEPARATOR = re.compile(r"[\s\"'`,;<>()\[\]{}]")
#: How far back a path's first slash may be from its start.
_PATH_PREFIX_MAX = 120

# (start, end, key, label, label limit, rank, test, file, line): ``key`` is looked for in the
# kept text, ``label`` is shown (cut to the limit); when not all fit, lower ranks go in first;
# ``test`` is a failed test's short name (its section header and summary line are one name),
# ``file`` the file of a path or a test id (a path is one name with the same file's other
# spellings and with its first failed test's id); ``line``: an error or failure line's whole
# text (its indentation and pytest's ``E`` prefix left out), shown instead of ``label`` when
# the caller asks for whole lines, else ``None``
_Hit = tuple[int, int, str, str, int, int, str | None, str | None, str | None]
#: Ranks: the outcome (exit status, failed tests, error lines), then paths and commands,
#: then the rest (URLs, issue numbers, commit ids, "Traceback").
_OUTCOME, _PLACE, _OTHER = 0, 1, 2
#: With whole lines, the newest error or failure line comes before every other outcome.
_NEWEST = -1
#: A name found: (label, rank, keys, given): any of ``keys`` in the kept text hides it;
#: ``given`` marks the exit status the caller gave.
Name = tuple[str, int, tuple[str, ...], bool]

_TEST = r"(?:\w+\.)*[Tt]est\w*(?:\[[^\]\n]*\])?"
#: Read from the start of a line that a trigger literal is in (``match(text, start, end)``).
_LINE = re.compile(
    rf"""
      (?P<sverdict>FAILED|ERROR)\ (?P<snode>[^\s:]+\.py(?:::\S+)?|[^\s:]+::\S+)
    | (?P<vnode>[^\s:]+::\S+)\ (?P<vverdict>FAILED|ERROR)\b
    | (?:FAIL|ERROR):\ (?P<unit>\w+\ \([\w.]+\))
    | (?P<fail>(?:FAIL|FAILED):\ \S.*|FAILED\ \((?:failures|errors)=.*)
    | _{{3,}}\ (?P<header>{_TEST})\ _{{3,}}$
    | (?P<tb>Traceback\ \(most\ recent\ call\ last\))
    | \$\ (?P<cmd>\S.*)
    | (?:E\ +|[\ \t]*)(?P<exc>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*)?(?:Error|Exception)\b(?::.*)?)$
    | [\ \t]*(?P<ex>\*\*\ \((?:[A-Za-z_]\w*\.)*[A-Z]\w*\)\ .+)
    | [\ \t]*(?P<err>(?:error|fatal|ERROR|\S+:\d+(?::\d+)?:\ (?:fatal\ )?error)(?:\[[\w-]+\])?:\ .+)
    | =+\ (?P<tally>\d+\ (?:failed|passed|errors?)\b.*?)(?:\ in\ [\d.]+s\b.*?)?\ =+$
    """,
    re.VERBOSE,
)
#: Literals on the lines ``_LINE`` reads, and how far the line start is after them
#: (``None``: the line around the literal).
_LINE_TRIGGERS: tuple[tuple[str, int | None], ...] = (
    ("rror", None),
    ("Exception", None),
    ("FAIL", None),
    ("ERROR", None),
    ("Traceback", None),
    ("___ ", None),
    ("\n=", 1),
    ("\n$ ", 1),
)
_STATUS = re.compile(
    r"<returncode>(-?\d+)</returncode>|[Ee]xit(?:ed with)? (?:code|status):? (-?\d+)"
)
#: Literals in an exit status, and how far they are from its start.
_STATUS_TRIGGERS = (("<returncode>", 0), ("xit", 1))
_FENCE = re.compile(r"```(?:bash|sh|shell|console)[ \t]*\n([^\n`]+)")
_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
#: A path token from its first slash on (all of it: a failed match is never retried at its
#: next slash); the token's start is then found going back.
#: The characters of a path's parts besides ``/``: word characters (and the combining marks
#: of a decomposed accent, as macOS writes names), ``.``, ``-``, and ``+ @ % ~``, which real
#: paths hold (a pytest ``.pyc`` of ``5.2.4.dev6+ge856638ba``, ``node_modules/@babel/core``,
#: ``My%20Documents``, ``~/src``; a break test found each named cut at it). Not ``=`` nor
#: ``:``, which join an option or a URL to a path (``--file=/a/b.py``).
#: A path's first part (before its first ``/``) holds none of ``+ @ %``: there they join a
#: diff's ``+``, a credential (``postgres://admin:s3cret@db.internal/prod.sql``: the note
#: would repeat the password) or a format (``"%s/settings.json"``) to the path; a ``~`` only
#: as a home, alone before the slash (``~/src``, not ``~~docs/old.md``, a strikethrough).
_PART = r"\w\u0300-\u036f.+@%~-"
_FIRST_PART = r"\w\u0300-\u036f.-"
#: A slash run's last slash starts it: ``ssh://git@github.com/a/b.git`` is read from
#: ``/git@github.com/...``, not lost as a ``//`` that starts no path.
_SLASHED = re.compile(rf"/(?!/)[/{_PART}]+")
_TOKEN_MAX = 300
_PATH_CHARS = re.compile(rf"[{_FIRST_PART}]*")
_PATH_CHAR = re.compile(rf"[{_FIRST_PART}]")
_PATH = re.compile(rf"(?:\.{{1,2}}/|/)?(?:[{_PART}]+/)+[{_PART}]+\.\w+")
_ISSUE = re.compile(r"#\d+\b")
#: A commit id after ``commit ``: 7 to 40 hex digits, with a letter and a digit among them.
_COMMIT = re.compile(r"commit ((?=[0-9]*[a-f])(?=[a-f]*[0-9])[0-9a-f]{7,40})\b")
_SPACES = re.compile(r"\s+")
_LAST_WORD = re.compile(r"\S+\Z")
_FIRST_WORD = re.compile(r"\S+")


#: names_in results by (scanned text, kept texts, exit status, max names).
_NAMES_MEMO = Memo(entries=2048, chars=8_000_000)
#: Whether a kept text shows a name: kept text -> {key: shown}.
_SHOWN_MEMO = Memo(entries=16, chars=16_000_000)
#: Names remembered per kept text in ``_SHOWN_MEMO``.
_SHOWN_KEYS = 4096


def clear_memos() -> None:
    """Forget every remembered scan, check, cut and derived message (tests; the cold path of
    a benchmark)."""
    clear()


def names_room(removed_chars: int) -> int:
    """How many characters the names of a cut removing ``removed_chars`` characters may take
    (a fifth of them, at most 2,400): a listing shortened to its two ends keeps its file
    names, while a cut of prose or code, naming little, costs no more than before."""
    return max(0, min(_NAMES_MAX_CHARS, int(_NAMES_SHARE * removed_chars)))


def leading_status(text: str) -> str | None:
    """The exit status ``text`` opens with (``<returncode>1</returncode>``, ``Exit code 1``),
    or ``None``; a cut that keeps the head passes it to :func:`digest`."""
    match = _STATUS.match(text)
    return None if match is None else match[1] or match[2]


def _short(text: str, limit: int) -> str:
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _finds(text: str, needle: str) -> Iterator[int]:
    i = text.find(needle)
    while i >= 0:
        yield i
        i = text.find(needle, i + len(needle))


def _line_hit(match: re.Match[str], start: int, end: int) -> _Hit | None:
    kind = match.lastgroup
    if kind in ("snode", "vverdict"):
        node = match["snode"] or match["vnode"]
        verdict = match["sverdict"] or match["vverdict"]
        whole = match.string[start:end].strip()
        if "::" not in node:
            # a verdict on a whole file (``FAILED testing/test_x.py``: it failed to collect)
            # is an outcome of its own, shown only by the verdict as printed: folded into
            # the file's path, as a test id is, it was lost whenever the path was named
            # (issue 35: pytest-6197's two collection failures)
            said = f"{verdict} {node}"  # only ``FAILED <node>`` names a bare file
            return (start, end, said, said, 120, _OUTCOME, None, None, whole)
        file, test = node.split("::", 1)
        test = test.replace("::", ".")
        return (start, end, node, f"{node} {verdict}", 120, _OUTCOME, test, file, whole)
    value = match[kind] if kind else None
    if kind is None or value is None:
        return None
    if kind == "unit":
        test = value.split(" ")[0]
        line = match.string[start:end].strip()
        return (start, end, value, f"{value} FAILED", 100, _OUTCOME, test, None, line)
    if kind == "header":
        return (start, end, value, f"{value} FAILED", 100, _OUTCOME, value, None, None)
    if kind == "cmd":
        return (start, end, value.strip(), f"$ {value}", 60, _PLACE, None, None, None)
    if kind == "tb":
        return (start, end, "Traceback", "Traceback", 80, _OTHER, None, None, None)
    text = None if kind == "tally" else value.strip()
    return (start, end, value, value, 80, _OUTCOME, None, None, text)  # exc, err, tally


def _lines(text: str, hits: list[_Hit]) -> None:
    """Error, exception, failed-test, tally and ``$ cmd`` lines: read where a literal is."""
    starts: list[int] = []
    for needle, offset in _LINE_TRIGGERS:
        if needle == "\n$ " and "$" not in text:
            continue  # a one-character test is a memchr, a pass is not
        if offset is None:
            starts.extend(_finds(text, needle))
        else:
            starts.extend(i + offset for i in _finds(text, needle))
    if text.startswith(("$ ", "=")):
        starts.append(0)
    starts.sort()
    if len(starts) > _MAX_LINES:
        starts = starts[: _MAX_LINES * 3 // 4] + starts[-_MAX_LINES // 4 :]
    n = len(text)
    line_end = -1
    for i in starts:
        if i < line_end:
            continue  # on a line already read
        lo = max(0, i - _LINE_MAX)
        start = text.rfind("\n", lo, i) + 1
        end = text.find("\n", i, i + _LINE_MAX)
        line_end = end if end >= 0 else min(n, i + _LINE_MAX)
        if start == 0 and lo > 0:
            continue  # a very long line
        match = _LINE.match(text, start, line_end)
        hit = None if match is None else _line_hit(match, start, line_end)
        if hit is not None:
            hits.append(hit)


def _paths(text: str, hits: list[_Hit]) -> None:
    """Paths: found from their first slash, then read from the start of their token."""
    seen: set[str] = set()  # a token with the same characters before it was read already
    for m in _SLASHED.finditer(text):
        if "." not in m[0] or len(m[0]) > _TOKEN_MAX:
            continue
        s = m.start()
        lo = max(0, s - _PATH_PREFIX_MAX)
        around = text[max(lo, s - 24) : m.end()]
        if around in seen:
            continue
        seen.add(around)
        if s and _PATH_CHAR.match(text, s - 1):
            prefix = _PATH_CHARS.match(text[lo:s][::-1])  # the token before its first slash
            s -= prefix.end() if prefix else 0
        elif s and text[s - 1] == "~" and (s == 1 or not _PATH_CHAR.match(text, s - 2)):
            s -= 1  # a home: ~/src/a.py
        p = _PATH.match(text, s)
        if p is not None:
            # a path is shown whole or not at all: cut to a limit, it names no file (issue
            # 35: migrations' long names lost as ``.../20260211122820_add_commits_and_...``)
            hits.append((s, p.end(), p[0], p[0], len(p[0]), _PLACE, None, p[0], None))


def _scan(text: str) -> list[_Hit]:
    """Every name in ``text`` with its span, in order; a span inside an earlier one (a path
    in an error line, in a URL) is dropped."""
    hits: list[_Hit] = []
    for needle, offset in _STATUS_TRIGGERS:
        for i in _finds(text, needle):
            m = _STATUS.match(text, max(0, i - offset))
            if m is not None:
                status = f"exit {m[1] or m[2]}"
                hits.append((m.start(), m.end(), status, status, 20, _OUTCOME, None, None, None))
    _lines(text, hits)
    for i in _finds(text, "```") if "`" in text else ():
        m = _FENCE.match(text, i)
        if m is not None:
            hits.append((i, m.end(), m[1].strip(), f"$ {m[1]}", 60, _PLACE, None, None, None))
    url_end = 0
    for i in _finds(text, "http"):
        m = None if i < url_end else _URL.match(text, i)
        if m is not None:
            url = m[0].rstrip(".,;:")
            url_end = m.end()
            hits.append((i, url_end, url, url, 100, _OTHER, None, None, None))
    _paths(text, hits)
    for s in _finds(text, "#"):
        m = _ISSUE.match(text, s)
        if m is not None and (s == 0 or not (text[s - 1].isalnum() or text[s - 1] in "_&#/")):
            hits.append((s, m.end(), m[0], m[0], 20, _OTHER, None, None, None))
    for i in _finds(text, "commit "):
        m = _COMMIT.match(text, i)
        if m is not None:
            hits.append((m.start(1), m.end(1), m[1], m[1][:12], 12, _OTHER, None, None, None))
    hits.sort(key=lambda h: (h[0], -h[1]))
    out: list[_Hit] = []
    reach = 0
    for hit in hits:
        if hit[0] >= reach:
            out.append(hit)
            reach = hit[1]
    return out


def clip_ends(
    text: str,
    head_chars: int = _SCAN_HEAD,
    tail_chars: int = _SCAN_TAIL,
    *,
    middle_names: bool = False,
) -> str:
    """``text``, or when longer than both, its first ``head_chars`` and last ``tail_chars``
    characters, less the words they cut in two.

    With ``middle_names``, what lies between them is not skipped blind: the spans of the
    names found in it (paths, error and failure lines, exit statuses, commands, URLs: what
    :func:`digest` reads) stand in its place, one a line, in order, each once, at most
    ``_MIDDLE_NAMES`` of them. A drop note reads each dropped message this way (issue 35:
    the paths in the middle of a big listing, the error line in the middle of a long run,
    were the names a loop of compactions lost)."""
    if len(text) <= head_chars + tail_chars:
        return text
    head = text[:head_chars]
    tail = text[-tail_chars:]
    cut = _LAST_WORD.search(head, len(head) - _PATH_PREFIX_MAX)
    first = _FIRST_WORD.match(tail)
    head_end = cut.start() if cut else len(head)
    tail_start = len(text) - len(tail) + (first.end() if first else 0)
    middle = ""
    if middle_names and tail_start > head_end:
        middle = "".join(f"{span}\n" for span in _middle_spans(text, head_end, tail_start))
    return f"{text[:head_end]}\n{middle}{text[tail_start:]}"


def _middle_spans(text: str, start: int, end: int) -> list[str]:
    """The names of ``text[start:end]`` (a clipped text's middle) as they are written, in
    order, each once, at most ``_MIDDLE_NAMES``: its error, failure and test-tally lines
    from all of it (found by literals, at most ``_MAX_LINES`` lines: cheap at any length),
    and the other names (paths, URLs, issue numbers) from :func:`_middle_windows` of it.
    The lines come first when not all fit: a failure in the middle of a megabyte of log is
    what a reader looks for again (a break test found it lost once only windows were
    read)."""
    windows = _middle_windows(text, start, end)
    found: dict[str, int] = {}  # span -> where it is
    if windows != [(start, end)]:
        lines: list[_Hit] = []
        _lines(text[start:end], lines)
        for hit in lines:
            if hit[5] == _OUTCOME and len(found) < _MIDDLE_NAMES:
                found.setdefault(text[start + hit[0] : start + hit[1]], start + hit[0])
    for k, (lo, hi) in enumerate(windows):
        # each window its share of the room left, so that names come from all along
        room = len(found) + (_MIDDLE_NAMES - len(found)) // (len(windows) - k)
        for hit in _scan(text[lo:hi]):
            if len(found) >= room:
                break
            found.setdefault(text[lo + hit[0] : lo + hit[1]], lo + hit[0])
    return sorted(found, key=found.__getitem__)


def _middle_windows(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of ``text[start:end]`` (a clipped text's middle) read for names: all of it
    up to ``_MIDDLE_SCAN`` characters, else ``_MIDDLE_WINDOWS`` windows spread evenly over
    it, together that long, each from a line's start to a line's end (in a line longer
    than a window, from and to a separator: a space, a quote, a comma, a bracket, as a
    one-line JSON reply has; the last one to the middle's end), so no name is cut in two:
    a middle of megabytes dense in names (a log of 20 MB of ``#1``) is read in bounded time
    (found by a break test: 8.7 s against 0.14 s before middles were read), and its names
    still come from all along it."""
    if end - start <= _MIDDLE_SCAN:
        return [(start, end)]
    size = _MIDDLE_SCAN // _MIDDLE_WINDOWS
    step = (end - start - size) // (_MIDDLE_WINDOWS - 1)
    out: list[tuple[int, int]] = []
    for k in range(_MIDDLE_WINDOWS):
        last = k == _MIDDLE_WINDOWS - 1
        lo = start + k * step
        hi = end if last else lo + size  # the last window ends where the middle does
        if k:  # from the first whole line, else after the first separator
            at = text.find("\n", lo, hi)
            if at >= 0:
                lo = at + 1
            else:
                sep = _SEPARATOR.search(text, lo, min(hi, lo + _PATH_PREFIX_MAX))
                lo = sep.end() if sep else lo
        if not last:  # to the last whole line, else to the last separator
            at = text.rfind("\n", lo, hi)
            if at >= 0:
                hi = at
            else:
                seps = list(_SEPARATOR.finditer(text, max(lo, hi - _PATH_PREFIX_MAX), hi))
                hi = seps[-1].start() if seps else hi
        if hi > lo:
            out.append((lo, hi))
    return out


def _spellings(path: str) -> tuple[str, ...]:
    """``path`` and its tails of two or more parts: ``/testbed/src/a.py`` is also shown by a
    kept ``src/a.py``."""
    out = [path]
    i = path.find("/", 1)
    while i >= 0 and path.find("/", i + 1) >= 0:
        out.append(path[i + 1 :])
        i = path.find("/", i + 1)
    return tuple(out)


def _shown(keys: tuple[str, ...], parts: Sequence[str]) -> bool:
    return any(key in part for key in keys for part in parts)


def _base(path: str) -> str:
    """A path's last part: two spellings of one file share it."""
    return path.rsplit("/", 1)[-1]


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file (``/testbed/src/a.py``, ``./src/a.py``)."""
    a, b = a.lstrip("./"), b.lstrip("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def digest(
    removed: str,
    kept: str | Sequence[str] = (),
    max_chars: int = DIGEST_MAX_CHARS,
    *,
    exit_status: str | None = None,
) -> str:
    """The names in ``removed`` that ``kept`` does not show, joined, at most ``max_chars`` long.

    Names are file paths, commands (``$ cmd`` lines, a shell code block's first line), exit
    statuses (``exit 1``, from ``<returncode>1</returncode>``, ``Exit code 1``...), error and
    exception lines, failed tests (``tests/x.py::test_y FAILED``), pytest tallies, URLs,
    issue numbers (``#1234``) and commit ids. They come in order of first appearance, each
    once: a failed test's section header and summary line are one name, and so are a path,
    its other spellings (``/testbed/src/a.py``, ``src/a.py``) and its first failed test.
    When not all fit, the outcome (exit status, failed tests, error lines, tallies) goes in
    first, then paths and commands, then the rest, each kept in its place, and the last
    name is ``+N more``: N counts the distinct names left out (past the first 64 looked for
    in ``kept``, names it shows may be among them). A long ``removed`` is read whole at its
    two ends (the first 6,000 and last 3,000 characters) and for its names only between
    them (:func:`clip_ends` with ``middle_names``). A path is shown whole or not at all.

    Args:
        removed: the text that was cut or dropped; the only text scanned.
        kept: the text that stays (one string or several): names in it are left out.
        max_chars: the longest digest returned; names that do not fit are counted instead.
        exit_status: the exit status the kept text opens with (see :func:`leading_status`):
            given first when there are other names, since a command's outcome is what
            makes sense of them.

    Returns:
        The digest, e.g. ``"exit 1, src/pkg/mod.py, TypeError: bad operand, +3 more"``, or
        ``""`` when ``removed`` names nothing new or no name fits in ``max_chars``.
    """
    return join_names(*names_in(removed, kept, exit_status=exit_status), max_chars)


def names_in(
    removed: str,
    kept: str | Sequence[str] = (),
    *,
    exit_status: str | None = None,
    scan: tuple[int, int] = (_SCAN_HEAD, _SCAN_TAIL),
    max_names: int = _MAX_CHECKS,
    whole_lines: bool = False,
) -> tuple[list[Name], int]:
    """The names of :func:`digest`, not joined yet: ``(names, extra)``, ``extra`` counting the
    distinct names past the first ``max_names`` (64; not looked for in ``kept``). ``scan``
    bounds what is read whole of a long ``removed``: its first and last that many
    characters; between them only its names are read (:func:`clip_ends` with
    ``middle_names``: issue 35, a build log's files named only in its middle were left out
    of its shortened copy's marker). See :func:`join_names` and :func:`drop_shown`.

    ``whole_lines``: an error or failure line is labelled by the whole line as it was
    printed (``FAILED tests/x.py::t - AssertionError: ...``, an exception line past 80
    characters; its indentation and pytest's ``E`` prefix left out, at most 400 characters),
    not by its short form: what a dropped round leaves in its note is the words a reader
    (or a search) looks for, not a paraphrase of them (issue 34, item 5). A cut's marker,
    with less room, keeps the short form."""
    parts: Sequence[str] = (kept,) if isinstance(kept, str) else kept
    removed = clip_ends(removed, *scan, middle_names=True)
    key = (removed, tuple(parts), exit_status, max_names, whole_lines)
    hit = _NAMES_MEMO.get(key)
    if hit is None:
        hit = _names_in(removed, parts, exit_status, max_names, whole_lines)
        _NAMES_MEMO.put(key, hit, len(removed) + sum(map(len, parts)))
    return list(hit[0]), hit[1]


def _names_in(
    removed: str,
    parts: Sequence[str],
    exit_status: str | None,
    max_names: int,
    whole_lines: bool = False,
) -> tuple[tuple[Name, ...], int]:
    """:func:`names_in` on an already clipped ``removed``, computed."""
    named = _Named()
    seen: set[str] = set()
    extra = 0  # distinct names past the checked ones, counted unchecked
    checks = 0
    if exit_status is not None:
        named.names.append((f"exit {exit_status}", _OUTCOME, (), True))
        seen.add(f"exit {exit_status}")
    newest = None  # the key of the last error or failure line (whole_lines)
    for _, _, key, label, limit, rank, test, file, line in _scan(removed):
        if whole_lines and line is not None:
            label, limit, newest = line, _LINE_MAX, key
        if key in seen:
            continue
        seen.add(key)
        if checks >= max_names:
            extra += 1
            continue
        checks += 1
        keys = (key,) if file is None or test is not None else _spellings(key)
        if _shown(keys, parts):
            continue
        if test is not None and test in named.tests and "::" not in key:
            continue  # a failed test named already
        same = named.same_file(file)
        if same is not None and test is None:
            # a file named already, as a path or in a test id: a longer spelling of a path
            # takes the shorter one's place (``/testbed/src/a.py`` lists ``src/a.py`` too)
            named.lengthen(same, (_short(label, limit), rank, keys, False), key)
            continue
        named.add((_short(label, limit), rank, keys, False), test, file, same)
    names = [name for name in named.names if name is not None]
    if newest is not None:  # the newest error line goes in first: what a run came to
        at = next((i for i, name in enumerate(names) if newest in name[2]), None)
        if at is not None:
            label, _, keys, given = names[at]
            names[at] = (label, _NEWEST, keys, given)
    return tuple(names), extra


class _Named:
    """The names of :func:`_names_in` as they are gathered, by first appearance: a failed
    test's short name and a file's name (one file's spellings share it) point at their
    place, so a test id can take the place of its section header and its file's path."""

    def __init__(self) -> None:
        self.names: list[Name | None] = []  # None: merged into another
        self.tests: dict[str, int] = {}  # a failed test's short name -> its index in names
        # file name -> (file, index in names, named by a test id)
        self.files: dict[str, list[tuple[str, int, bool]]] = {}

    def same_file(self, file: str | None) -> tuple[str, int, bool] | None:
        """The entry of a file named already that is ``file``, else ``None``."""
        if file is None:
            return None
        return next((f for f in self.files.get(_base(file), ()) if _same_file(f[0], file)), None)

    def lengthen(self, same: tuple[str, int, bool], name: Name, path: str) -> None:
        """``name``, the path ``path``, in the place of ``same``, the bare path of the same
        file named before, when ``path`` is its longer spelling (``same`` ends it): one
        name then lists every spelling as a substring, so a reader (or a search) that knows
        either finds it. A test id naming the file stays."""
        file, at, by_test = same
        old = self.names[at]
        if by_test or old is None or len(path) <= len(file) or not path.endswith(file):
            return
        self.names[at] = name
        entries = self.files[_base(file)]
        entries[entries.index(same)] = (path, at, False)

    def add(
        self,
        name: Name,
        test: str | None,
        file: str | None,
        same: tuple[str, int, bool] | None,
    ) -> None:
        """``name`` (of failed test ``test``, of ``file``, a file named already as
        ``same``): appended, or in the place of its test's section header and of its
        file's bare path (the earliest of them)."""
        slots = [self.tests[test]] if test is not None and test in self.tests else []
        if same is not None and not same[2]:
            slots.append(same[1])
            self.files[_base(same[0])].remove(same)
        at = min(slots) if slots else len(self.names)
        for slot in slots:
            self.names[slot] = None
        if slots:
            self.names[at] = name
        else:
            self.names.append(name)
        if test is not None:
            self.tests[test] = at
        if file is not None and (same is None or slots):
            self.files.setdefault(_base(file), []).append((file, at, test is not None))


def newest_error(names: Sequence[Name]) -> Name | None:
    """The newest error or failure line among ``names`` (of :func:`names_in` with
    ``whole_lines``: ranked before every other name), or ``None``."""
    return next((name for name in names if name[1] == _NEWEST), None)


def is_path(name: Name) -> bool:
    """Whether ``name`` is a file path (of the place names, the ones that are not a
    ``$ command``)."""
    return name[1] == _PLACE and not name[0].startswith("$ ")


def drop_shown(names: list[Name], kept: Sequence[str]) -> list[Name]:
    """``names`` less those that ``kept`` shows (for a cut that kept more than it scanned)."""
    shown = shown_by(kept)
    return [name for name in names if not shown(name)]


def shown_by(kept: str | Sequence[str], *, exact: bool = False) -> Callable[[Name], bool]:
    """``hidden`` for :func:`join_names`: whether ``kept`` (one text or several) shows a name
    (never the given exit status). One search a name and text: a path's keys are its tails
    (:func:`_spellings`), each a tail of the longer ones, so the shortest is in a text
    whenever any is. ``exact``: a path is shown only by its whole spelling (the longest
    key), not by a tail (``src/a.py`` does not show ``/testbed/src/a.py``, nor
    ``models/base.py`` ``django/db/models/base.py``): what a dropped round's note keeps,
    where the path as the run wrote it is what is looked for again."""
    pick = max if exact else min
    if isinstance(kept, str):
        return _shown_in(kept, exact)
    parts = kept
    return lambda name: not name[3] and bool(name[2]) and _shown((pick(name[2], key=len),), parts)


def _shown_in(kept: str, exact: bool = False) -> Callable[[Name], bool]:
    """:func:`shown_by` of one text, its answers remembered by the text's content (a note
    built again over the same kept messages, in a later pass or call, searches nothing)."""
    pick = max if exact else min
    found: dict[str, bool] | None = _SHOWN_MEMO.get(kept)
    if found is None:
        found = {}
        _SHOWN_MEMO.put(kept, found, len(kept))
    memo = found

    def hidden(name: Name) -> bool:
        if name[3] or not name[2]:
            return False
        key = pick(name[2], key=len)
        shown = memo.get(key)
        if shown is None:
            shown = key in kept
            if len(memo) < _SHOWN_KEYS:
                memo[key] = shown
        return shown

    return hidden


def join_names(
    names: list[Name],
    extra: int,
    max_chars: int,
    sep: str = ", ",
    *,
    hidden: Callable[[Name], bool] | None = None,
) -> str:
    """The names that fit in ``max_chars``, lowest rank first, shown in their order and
    joined with ``sep``, with ``+N more`` counting the rest; ``""`` when none fits or only
    the given exit status is left (the kept text shows it). ``hidden(name)`` leaves a name
    out (and uncounted); it is asked only of names that would fit, so a long list costs
    what the output holds, not what the input did (the ``+N more`` may then count names
    that ``hidden`` would have left out)."""
    if not extra and all(name[3] for name in names):
        return ""
    total = len(names) + extra
    chosen: list[int] = []
    used = 0
    for i in sorted(range(len(names)), key=lambda i: names[i][1]):  # stable: by appearance
        need = used + len(names[i][0]) + (len(sep) if chosen else 0)
        reserve = len(f"{sep}+{total} more")
        if need + (0 if len(chosen) + 1 == total else reserve) <= max_chars:
            if hidden is not None and hidden(names[i]):
                total -= 1
                continue
            chosen.append(i)
            used = need
    if not chosen or (all(names[i][3] for i in chosen) and len(chosen) == total):
        return ""
    text = sep.join(names[i][0] for i in sorted(chosen))
    return f"{text}{sep}+{total - len(chosen)} more" if len(chosen) < total else text
