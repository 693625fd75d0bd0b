"""The embedded summarizer: a ContextSummary filled from the messages themselves, no model.

Every item is copied out of the messages (a clipped sentence, a path, a command and the exit
status its result reported, an error line, a name), so it never states anything the messages
do not: the task is the first user request of the span, constraints are the user's sentences
with ``must`` / ``never`` / ``always`` / ``do not``..., decisions the assistant's sentences
saying what it does or found (``I'll``, ``Let me``, ``The fix``, ``instead``...), files come
from tool-call arguments (``file_path``, ``path``...) and paths in the texts, commands from
``command``-like arguments (or a shell block of an assistant text) with the exit status of
their result (the one it opens with, else the last one it names), errors from the results'
failed tests, error lines and failing tallies, named as the removal notes of
``RemoveOldMessages`` name them (:func:`~agent_adapter.context._digest.names_in`: one
mechanism), identifiers from the names the user and assistant texts and the edits use most,
and the open tasks from the latest user request and the latest todo list (``todos`` with a
status). A file read's result is file content, not an outcome: its lines count as errors
only when the result failed. Errors come from tool output, so a summary quotes them as data
(see :mod:`._summary_text`).

An earlier summary in the span is folded in (:func:`~._summary_text.parse`), and so is a
removal note of ``RemoveOldMessages``: its paths as files read, its ids as identifiers, its
other names (failed tests, error lines, exit statuses, commands) as quoted tool output, and
its count in the new summary's (:func:`folded_count`).

Only user and assistant texts and tool-call arguments are read whole; a tool result is read
at its two ends for its exit status and error lines, so a 100k-token span costs a few ms.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from agent_adapter._messages import Message, ToolCall
from agent_adapter.context._digest import leading_status, names_in
from agent_adapter.context._own import note_count, summary_count
from agent_adapter.context._steps._summary_text import (
    ContextSummary,
    comparable_text,
    is_summary,
    merge,
    parse,
)

__all__ = [
    "edited_paths",
    "edits_open_file",
    "extract_summary",
    "file_access",
    "folded_count",
    "folded_names",
    "held_names",
    "is_command_output",
    "note_names",
    "text_extract",
    "top_names",
]

_PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "file", "target_file")
_COMMAND_KEYS = ("command", "cmd", "script")
_CHANGE_TOOL = re.compile(r"edit|write|create|replace|patch|insert|delete|move|rename", re.I)
_READ_TOOL = re.compile(r"read|view|open|cat|grep|glob|search|find|ls", re.I)
_SHELL_BLOCK = re.compile(r"```(?:bash|sh|shell|console)?[ \t]*\n(.+?)\n```", re.S)
_PATH = re.compile(r"(?<![\w/.@:-])(?:\.{1,2}/|/|~/)?(?:[\w.-]+/)+[\w-][\w.-]*\.[A-Za-z]\w{0,5}\b")
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+[.!?]*")
_CONSTRAINT = re.compile(
    r"\b(?:must(?:n't| not)?|never|always|do not|don't|only|should(?:n't| not)?|make sure|"
    r"avoid|without)\b",
    re.I,
)
_DECISION = re.compile(
    r"^(?:I'll|I will|I'm going to|Let me|Now I|I need to|I decided|Decided|The fix|The issue|"
    r"The problem|The root cause|Instead|I've|Fixed|Switch|Use |Using |We should|Going with)"
    r"|\b(?:instead of|rather than|because|decided|root cause)\b",
)
_STRONG = re.compile(
    r"\b(?:instead of|rather than|because|decided|root cause|the fix|the issue|the problem|"
    r"fixed|switched|so that|won't work|doesn't support|needs? to|must|requires?)\b",
    re.I,
)
#: Sentences that only announce looking at something.
_LOOKING = re.compile(
    r"^(?:Let me|Now let me|I'll|Now I'll) (?:check|read|look|see|run|verify|view|explore|"
    r"find|search|examine|inspect|start|also|first|now)\b",
    re.I,
)
_TODO_DONE = ("completed", "done", "cancelled")
_BACKTICK = re.compile(r"`([^`\n]{2,80})`")
#: Names: CamelCase (two humps), dotted module paths, snake_case, name/arity, issue ids.
_NAME = re.compile(
    r"\b(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?:\.[A-Z]\w*)*"
    r"|[A-Za-z]\w*(?:\.[A-Za-z]\w*)+(?=\()"
    r"|[a-z][a-z0-9]*(?:_[a-z0-9]+)+[?!]?"
    r"|[a-z][\w-]*-[a-z0-9]+\.\d+"
    r")(?:/\d)?"
)
_ISSUE = re.compile(r"(?<![\w&/])#\d+\b")
#: A text agent's command output sent as a user turn (mini-swe-agent): not a request.
#: How a text agent's command output opens (as :func:`comparable_text` writes it).
_OBSERVATION = ("<returncode>", "<output>", "observation:")
_NOISE_USER = (
    "Caveat:",
    "[Request interrupted",
    "Read the output file to retrieve the result",
)
#: Blocks an agent harness writes into user turns (Claude Code's hook output, notifications,
#: slash-command echoes): not the user's words.
_NOISE_BLOCK = re.compile(
    r"<(system-reminder|task-notification|command-name|command-message|command-args|"
    r"local-command-stdout|local-command-stderr|local-command-caveat|user-prompt-submit-hook)>"
    r".*?</\1>",
    re.S,
)
_TAGS = re.compile(r"<[^>\n]{1,80}>")
#: Conventional source folders: a project root lies above them.
_SOURCE_DIRS = frozenset(
    {
        *("lib", "src", "test", "tests", "spec", "priv", "assets", "config", "docs"),
        *("app", "pkg", "cmd", "bench", "scripts", "internal"),
    }
)
#: A name a change defines: ``def f``, ``defmodule M``, ``class C``, ``function f``...
_DEFINED = re.compile(
    r"\b(?:def|defp|defmodule|defmacro|defmacrop|function|class|func|fn|interface|struct|"
    r"enum|trait|impl|type)\s+([A-Za-z_][\w.?!]*)"
)
_ISSUE_ID = re.compile(r"\b[a-z][a-z0-9]*-[a-z0-9]{2,4}\.\d+\b")
#: How many items of each kind a summary keeps before its renderer bounds it.
_LIMITS = {
    "constraints": 8,
    "decisions": 20,
    "files_read": 60,
    "files_changed": 60,
    "commands": 30,
    "errors": 10,
    "identifiers": 150,
    "open_tasks": 8,
}
_SENTENCE_MAX = 240
#: Characters of an edit's or a written file's text read for the names it adds.
_EDIT_SCAN = 4_000
#: What is read of a tool result for its outcome: its first and last that many characters.
_RESULT_SCAN = (3_000, 1_500)
#: Failed tests, error lines and tallies one result gives the errors at most.
_PER_RESULT = 4
#: A pytest tally without a failure: no error.
_PASSED_ONLY = re.compile(r"\A\d+ passed\b(?!.*\b(?:failed|errors?)\b)")
_RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
#: Names of a removal note that are ids (issue numbers, URLs, commit ids), not outcomes.
_NOTE_ID = re.compile(r"#\d+|https?://\S+|[0-9a-f]{7,12}")
_NOTE_MORE = re.compile(r"\+\d+ more")
#: Where a file is shown edited: a diff header (unified, git, apply_patch), a shell write.
_DIFF_HEADER = re.compile(
    r"^(?:\+\+\+ b/|diff --git a/\S+ b/|\*\*\* (?:Update|Add|Delete) File: |rename to )(\S+)",
    re.M,
)
_SHELL_WRITE = re.compile(
    r"(?:>>?|\btee(?: -a)?)\s*['\"]?([\w./~-]*\w\.\w+)"
    r"|\bsed\s+-i\S*\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s+['\"]?([\w./~-]+\w)"
)


def is_command_output(message: Message) -> bool:
    """True for a user message that is a text agent's command output (mini-swe-agent's
    ``<returncode>``, ``Observation:``), not the user's words; judged on :func:`comparable_text`
    text, so a zero-width space or a bidi override before it does not make it the user's."""
    return message.role == "user" and comparable_text(message.text[:200]).startswith(_OBSERVATION)


def _decision_score(sentence: str) -> int:
    """How much ``sentence`` reads as a decision or a finding (0: not at all)."""
    if len(sentence) < 25 or _LOOKING.match(sentence):
        return 0
    score = 2 * len(_STRONG.findall(sentence)) + bool(_DECISION.search(sentence))
    if score and ("`" in sentence or _NAME.search(sentence) or _PATH.search(sentence)):
        score += 1
    return score


def _best(scored: list[tuple[int, int, str]], n: int) -> list[str]:
    """The ``n`` best-scored sentences (later ones on a tie), in their order."""
    chosen = sorted(scored, key=lambda t: (-t[0], -t[1]))[:n]
    return [t[2] for t in sorted(chosen, key=lambda t: t[1])]


def _args(call_arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(call_arguments) if call_arguments else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if len(s.strip()) > 3]


def _clip(text: str, limit: int = _SENTENCE_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _user_request(m: Message) -> str:
    """A real user request's text (not hook output, a tool result or a summary); ``""``.
    Tool-made blocks (``<system-reminder>``, ``<task-notification>``, ``<command-...>``) and
    the line a notification asks to act on are left out."""
    if m.role != "user" or is_summary(m) or is_command_output(m):
        return ""
    text = _NOISE_BLOCK.sub("", m.text)
    lines = [
        ln
        for ln in _TAGS.sub("", text).splitlines()
        if ln.strip() and not ln.lstrip().startswith(_NOISE_USER)
    ]
    return "\n".join(lines).strip()


def _add(items: list[str], seen: set[str], value: str) -> None:
    if value and value not in seen:
        seen.add(value)
        items.append(value)


def _root(paths: Sequence[str]) -> str:
    """The deepest directory that most absolute paths lie under (at least 3 of them), above
    any conventional source folder (``lib``, ``src``, ``tests``...): the project root."""
    absolute = [p for p in paths if p.startswith("/")]
    if len(absolute) < 3:
        return ""
    counts: Counter[str] = Counter()
    for p in absolute:
        parts = p.split("/")[:-1]
        for k in range(2, len(parts) + 1):
            if parts[k - 1] in _SOURCE_DIRS:
                break
            counts["/".join(parts[:k])] += 1
    need = max(3, len(absolute) * 6 // 10)
    best = [d for d, n in counts.items() if n >= need]
    return max(best, key=len) if best else ""


def _status(text: str) -> str | None:
    """The exit status ``text`` opens with (or a ``<returncode>`` near its start)."""
    status = leading_status(text[:200].lstrip())
    if status is None:
        found = _RETURNCODE.search(text, 0, 2000)
        status = found.group(1) if found else None
    return status


def _scan_result(text: str) -> tuple[str | None, list[str]]:
    """What a command's result says of its outcome: the exit status it opens with, else the
    last one it names, and its failed tests, error lines and failing tallies (in order), as
    :func:`~agent_adapter.context._digest.names_in` names them."""
    found, _ = names_in(text, scan=_RESULT_SCAN)
    status = _status(text)
    last: str | None = None
    lines: list[str] = []
    for label, rank, _keys, _given in found:
        if rank != 0:
            continue
        if label.startswith("exit "):
            last = label[5:]
        elif not _PASSED_ONLY.match(label):
            lines.append(label)
    return (status if status is not None else last), lines


def _outcome(result: Message | None, status: str | None) -> str:
    """A command's outcome: ``exit N`` when its result reports an exit status (``status``),
    ``failed`` / ``ok`` when the provider flagged it (Anthropic ``is_error``), else ``""``."""
    if result is None:
        return ""
    if status is not None:
        return f"exit {status}"
    flag = result.extras.get("is_error")
    if flag is True:
        return "failed"
    return "ok" if flag is False else ""  # no status and no error flag: nothing is claimed


def _reads_a_file(call: ToolCall) -> bool:
    """True for a call that reads a file: its result is the file's content."""
    args = _args(call.arguments)
    return (
        bool(_READ_TOOL.search(call.name))
        and not _CHANGE_TOOL.search(call.name)
        and any(isinstance(args.get(k), str) for k in _PATH_KEYS)
        and not any(isinstance(args.get(k), str) for k in _COMMAND_KEYS)
    )


#: A tool whose result is the file's text (not a search over files: grep, glob, find, ls).
_FILE_READ_TOOL = re.compile(r"read|view|open|cat", re.I)
#: Arguments that read a part of a file (an offset, a line range).
_PART_KEYS = ("offset", "limit", "view_range", "start_line", "end_line", "line_range", "lines")
#: A shell command that prints one file whole: ``cat f``, ``nl -ba f``.
_SHELL_CAT = re.compile(r"\A\s*(?:cat|nl(?: -ba)?)\s+(['\"]?)([\w./~-]+\.\w+)\1\s*\Z")
#: A shell command that prints a part of one file: ``sed -n '10,40p' f``, ``nl -ba f | sed
#: -n '10,40p'``, ``head -n 40 f``, ``tail -n 20 f``.
_SHELL_PART = re.compile(
    r"\A\s*(?:sed -n\s+['\"]?(?P<a>\d+,\d+p)['\"]?\s+(?P<p1>[\w./~-]+\.\w+)"
    r"|nl(?: -ba)?\s+(?P<p2>[\w./~-]+\.\w+)\s*\|\s*sed -n\s+['\"]?(?P<b>\d+,\d+p)['\"]?"
    r"|(?P<c>head|tail)\s+(?:-n\s*)?(?P<n>-?\d+)\s+(?P<p3>[\w./~-]+\.\w+))\s*\Z"
)


#: SWE-agent's windowed file commands in a shell call: ``open f [line]``, ``create f``.
_SHELL_OPEN = re.compile(r"\A\s*(open|create)\s+(['\"]?)([\w./~-]+\.\w+)\2(?:\s+(\d+))?\s*\Z")
#: SWE-agent's edit of the file it has open (no path of its own): ``edit 4:4``, ``insert 3``.
_SHELL_EDIT_OPEN = re.compile(r"\A\s*(?:edit|insert)\b")
_EDIT_OPEN_TOOL = frozenset({"edit", "insert"})


def edits_open_file(call: ToolCall) -> bool:
    """True for a call that edits the file the agent has open without naming it: SWE-agent's
    ``edit`` / ``insert`` (a tool of that name with no path argument, or a shell command
    opening with one)."""
    args = _args(call.arguments)
    if any(isinstance(args.get(k), str) for k in _PATH_KEYS):
        return False
    command = next((args[k] for k in _COMMAND_KEYS if isinstance(args.get(k), str)), None)
    if command is not None:
        return bool(_SHELL_EDIT_OPEN.match(command))
    return call.name in _EDIT_OPEN_TOOL


def file_access(call: ToolCall) -> tuple[str, str, str] | None:
    """How ``call`` touches one file: ``("read", path, part)`` when its result is that
    file's text (``part``: ``""`` for the whole file, else the range it asked for) or
    ``("edit", path, "")`` when it changes the file; ``None`` otherwise. Read from the call's
    arguments only: a path argument (``file_path``, ``path``...) of a read / view / open /
    cat tool or of an edit / write / create / replace tool (a ``command`` argument of one
    word, as SWE-agent's ``str_replace_editor`` gives ``view`` or ``str_replace``, names the
    operation), or a shell command that prints one file (``cat f``, ``nl -ba f``, ``sed -n
    '10,40p' f``, ``head -n 40 f``) or writes one (``> f``, ``tee f``, ``sed -i ... f``)."""
    args = _args(call.arguments)
    path = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str)), None)
    command = next((args[k] for k in _COMMAND_KEYS if isinstance(args.get(k), str)), None)
    if path:
        op = command if command and " " not in command.strip() else None
        if command and op is None:
            return None  # a shell command given a path: not a file tool
        judged = op or call.name
        if _CHANGE_TOOL.search(judged):
            return ("edit", path, "")
        if _FILE_READ_TOOL.search(judged):
            part = {k: args[k] for k in _PART_KEYS if args.get(k) not in (None, "", [])}
            return ("read", path, json.dumps(part, sort_keys=True) if part else "")
        return None
    if not command:
        return None
    writes = [a or b for a, b in _SHELL_WRITE.findall(command)]
    if writes:
        return ("edit", writes[0], "") if len(set(writes)) == 1 else None
    whole = _SHELL_CAT.match(command)
    if whole is not None:
        return ("read", whole.group(2), "")
    opened = _SHELL_OPEN.match(command)
    if opened is not None:  # SWE-agent: open shows a window of the file, create makes it
        kind = "read" if opened.group(1) == "open" else "edit"
        return (kind, opened.group(3), opened.group(4) or "" if kind == "read" else "")
    ranged = _SHELL_PART.match(command)
    if ranged is not None:
        path = ranged.group("p1") or ranged.group("p2") or ranged.group("p3")
        lines = ranged.group("a") or ranged.group("b") or f"{ranged['c']} {ranged['n']}"
        return ("read", path, lines.rstrip("p"))
    return None


def folded_count(message: Message) -> int | None:
    """How many messages an earlier summary or a ``RemoveOldMessages`` removal note stands
    for; ``None`` when ``message`` is neither."""
    count = summary_count(message)
    return count if count is not None else note_count(message)


def _note_summary(text: str) -> ContextSummary:
    """A removal note's names as a summary: paths as files read, ids as identifiers, the
    rest (failed tests, error lines, exit statuses, commands) as quoted tool output (a note
    does not say which message a name came from)."""
    lines = text.splitlines()[1:]
    if lines and lines[-1].endswith("]"):
        lines[-1] = lines[-1][:-1]  # the note's closing bracket
    out = ContextSummary()
    for line in lines:
        label = line.strip()
        if not label or _NOTE_MORE.fullmatch(label):
            continue
        if _PATH.fullmatch(label):
            out.files_read.append(label)
        elif _NOTE_ID.fullmatch(label):
            out.identifiers.append(label)
        else:
            out.errors.append(label)
    return out


def note_names(messages: Sequence[Message]) -> list[str]:
    """Every name the ``RemoveOldMessages`` removal notes among ``messages`` list (paths,
    ids, failed tests, error lines, exit statuses, commands), once each, in order: what a
    summary folding them must still name."""
    names: dict[str, None] = {}
    for m in messages:
        if note_count(m) is None:
            continue
        folded = _note_summary(m.text)
        for item in (*folded.errors, *folded.files_read, *folded.identifiers):
            names.setdefault(item, None)
    return list(names)


#: The fields of a summary that hold names a later summary must keep (issue 34, item 4).
_HELD_FIELDS = ("files_changed", "files_read", "errors")


def held_names(summary: ContextSummary) -> list[str]:
    """The names ``summary`` holds that a summary folding it must still hold: its changed
    and read files and its errors (failed tests, error lines, exception classes), once
    each, in order."""
    return list(dict.fromkeys(item for name in _HELD_FIELDS for item in getattr(summary, name)))


def folded_names(messages: Sequence[Message]) -> list[str]:
    """Every name the removal notes (:func:`note_names`) and the summaries of ours
    (:func:`held_names`) among ``messages`` hold, once each, in order: what a summary
    folding them must still name (re-summarizing never drops a name a summary held)."""
    names: dict[str, None] = dict.fromkeys(note_names(messages))
    for m in messages:
        if summary_count(m) is not None:
            names.update(dict.fromkeys(held_names(parse(m.text))))
    return list(names)


def edited_paths(messages: Sequence[Message]) -> set[str]:
    """The paths ``messages`` show edited or written: the path argument of an edit or write
    call, a diff header (``+++ b/x``, ``diff --git``, ``*** Update File: x``) in a call's
    arguments, a shell block or a tool result, and a shell write (``> x``, ``tee x``,
    ``sed -i ... x``) in a command or a shell block."""
    out: set[str] = set()

    def diffs(text: str) -> None:
        if "+++ " in text or "diff --git" in text or "*** " in text or "rename to" in text:
            out.update(_DIFF_HEADER.findall(text))

    def writes(command: str) -> None:
        for a, b in _SHELL_WRITE.findall(command):
            out.add(a or b)

    for m in messages:
        if m.role == "tool":
            diffs(m.text)
            continue
        if m.role != "assistant":
            continue
        for block in _SHELL_BLOCK.findall(m.text):
            diffs(block)
            writes(block)
        for call in m.tool_calls:
            args = _args(call.arguments)
            access = file_access(call)
            if access is not None and access[0] == "edit":
                out.add(access[1])
            for key, value in args.items():
                if isinstance(value, str):
                    diffs(value)
                    if key in _COMMAND_KEYS:
                        writes(value)
    return out


def text_extract(text: str) -> ContextSummary:
    """The names one long text holds, as a summary to check a shortened form against: the
    paths, failed tests and error lines :func:`~agent_adapter.context._digest.names_in` finds
    and the identifiers it uses most."""
    found, _ = names_in(text)
    files: list[str] = []
    errors: list[str] = []
    for label, rank, _keys, _given in found:
        if rank == 0 and not label.startswith("exit ") and not _PASSED_ONLY.match(label):
            errors.append(label)
        elif rank == 1 and _PATH.fullmatch(label):
            files.append(label)
    shown = " ".join(files)
    names = [n for n in top_names(text, 20) if n not in shown][:10]
    return ContextSummary(files_read=files, errors=errors, identifiers=names)


def top_names(text: str, n: int) -> list[str]:
    """The ``n`` names ``text`` uses most (backticked names count double), first seen first
    on a tie."""
    counts: Counter[str] = Counter()
    for found in _BACKTICK.findall(text):
        token = found.strip()
        if " " not in token and not _PATH.fullmatch(token):
            counts[token] += 2
    for found in (*_NAME.findall(text), *_ISSUE.findall(text)):
        counts[found] += 1
    return [name for name, _ in counts.most_common(n)]


class _Notes:
    """What the sections read out of the messages, oldest first: the summary's makings."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.previous: ContextSummary | None = None  # earlier summaries and notes, folded
        self.request = ""  # the current message's user request (:func:`_user_request`)
        self.task = ""
        self.latest = ""
        self.constraints: list[str] = []
        self.decisions: list[tuple[int, int, str]] = []
        self.read: list[str] = []
        self.changed: list[str] = []
        self.commands: dict[str, str] = {}
        self.pending_shell: list[str] = []  # a text agent's shell block, awaiting its result
        self.errors: list[str] = []
        self.todos: list[str] = []
        self.names: Counter[str] = Counter()
        self.first_seen: dict[str, int] = {}
        self.order = 0  # hits so far: a name's first one ranks it among equals
        self.seen_c: set[str] = set()
        self.seen_d: set[str] = set()
        self.seen_e: set[str] = set()
        self.results = {m.tool_call_id: m for m in messages if m.role == "tool"}
        self.calls = {c.id: c for m in messages for c in m.tool_calls}
        self._scanned: dict[int, tuple[str | None, list[str]]] = {}
        self._args: dict[int, dict[str, Any]] = {}

    def fold(self, m: Message) -> None:
        """An earlier summary or removal note: folded into ``previous``."""
        old = parse(m.text) if is_summary(m) else _note_summary(m.text)
        self.previous = old if self.previous is None else merge(self.previous, old)

    def scan(self, m: Message) -> tuple[str | None, list[str]]:
        """:func:`_scan_result` of ``m``'s text, once a message."""
        key = id(m)
        if key not in self._scanned:
            self._scanned[key] = _scan_result(m.text)
        return self._scanned[key]

    def args(self, call: ToolCall) -> dict[str, Any]:
        """A call's arguments, parsed once a call."""
        key = id(call)
        if key not in self._args:
            self._args[key] = _args(call.arguments)
        return self._args[key]

    def outcome_lines(self, lines: list[str]) -> None:
        """A result's first error lines, as errors."""
        for line in lines[:_PER_RESULT]:
            _add(self.errors, self.seen_e, _clip(line, 200))

    def hit(self, name: str, weight: int) -> None:
        """``name`` used once more, worth ``weight``."""
        self.names[name] += weight
        self.first_seen.setdefault(name, self.order)
        self.order += 1

    def summary(self) -> ContextSummary:
        """The summary of what was read, with the folded ones merged in."""
        root = _root([*self.changed, *self.read])

        def rel(p: str) -> str:
            return p[len(root) + 1 :] if root and p.startswith(root + "/") else p

        files_changed = list(dict.fromkeys(rel(p) for p in self.changed))
        files_read = [p for p in dict.fromkeys(rel(p) for p in self.read) if p not in files_changed]
        shown = " ".join((*files_changed, *files_read))
        names, first_seen = self.names, self.first_seen
        ranked = sorted(names, key=lambda n: (-names[n], first_seen[n]))
        identifiers = [n for n in ranked if n not in shown and os.sep not in n]
        open_tasks = [_clip(self.latest, 600)] if self.latest else []
        open_tasks += [t for t in self.todos if t]
        cmds = [f"{c} -> {o}" if o else c for c, o in self.commands.items()]
        summary = ContextSummary(
            task=self.task,
            constraints=self.constraints[: _LIMITS["constraints"]],
            decisions=_best(self.decisions, _LIMITS["decisions"]),
            working_directory=root,
            files_read=files_read[: _LIMITS["files_read"]],
            files_changed=files_changed[: _LIMITS["files_changed"]],
            commands=cmds[-_LIMITS["commands"] :],
            errors=self.errors[-_LIMITS["errors"] :],
            identifiers=identifiers[: _LIMITS["identifiers"]],
            open_tasks=open_tasks[: _LIMITS["open_tasks"]],
        )
        return summary if self.previous is None else merge(self.previous, summary)


def _errors(n: _Notes, m: Message) -> None:
    """Errors: the failed tests, error lines and failing tallies of a tool result (of a file
    read's only when it failed) and of a text agent's command output; a failed result that
    names none, its first line."""
    if m.role == "user":
        if is_command_output(m):  # a text agent's command output
            n.outcome_lines(n.scan(m)[1])
        return
    if m.role != "tool":
        return
    failed = m.extras.get("is_error") is True or _status(m.text) not in (None, "0")
    call = n.calls.get(m.tool_call_id or "")
    if not failed and call is not None and _reads_a_file(call):
        return  # a file's content: its lines are no outcome
    _, lines = n.scan(m)
    n.outcome_lines(lines)
    if failed and not lines:
        first = m.text.strip().splitlines()[0] if m.text.strip() else ""
        if leading_status(m.text[:200]) is None and not first.startswith("The user doesn't want"):
            _add(n.errors, n.seen_e, _clip(first, 200))


def _commands(n: _Notes, m: Message) -> None:
    """Commands: a call's command-like argument with its result's outcome; a text agent's
    shell block (an assistant text without calls) with the next user text's."""
    if m.role == "user":
        if n.pending_shell:  # a text agent: the shell block's result is the next user text
            status = n.scan(m)[0] if is_command_output(m) else _status(m.text)
            n.commands[n.pending_shell[-1]] = _outcome(m, status)
            n.pending_shell = []
        return
    if m.role != "assistant":
        return
    if m.text and not m.tool_calls:
        n.pending_shell = [_clip(b.strip(), 200) for b in _SHELL_BLOCK.findall(m.text)]
    for call in m.tool_calls:
        args = n.args(call)
        command = next((args[k] for k in _COMMAND_KEYS if isinstance(args.get(k), str)), None)
        if not command:
            continue
        cmd = _clip(command.strip().splitlines()[0] if command.strip() else "", 200)
        if cmd:
            result = n.results.get(call.id)
            n.commands.pop(cmd, None)
            n.commands[cmd] = _outcome(result, n.scan(result)[0] if result else None)


def _task(n: _Notes, m: Message) -> None:
    """Task and constraints: the first user request is the task (the latest one an open
    task); its sentences with ``must`` / ``never`` / ``do not``... are constraints."""
    if not n.request:
        return
    n.task = n.task or n.request
    n.latest = n.request
    for s in _sentences(n.request):
        if _CONSTRAINT.search(s):
            _add(n.constraints, n.seen_c, _clip(s))


def _names(n: _Notes, m: Message) -> None:
    """Identifiers: the names the user's requests (worth 3) and the assistant's texts (2)
    use, the issue ids tool results open with, and the names an edit adds or defines."""
    if n.request:
        _name_hits(n, n.request, 3)
    elif m.role == "tool":
        for found in _ISSUE_ID.findall(m.text, 0, 1500):
            n.hit(found, 1)
    elif m.role == "assistant":
        if m.text:
            _name_hits(n, m.text, 2)
        for call in m.tool_calls:
            _edit_names(n, n.args(call))


def _name_hits(n: _Notes, text: str, weight: int) -> None:
    """The names in ``text``: a backticked token (twice ``weight``), a code-like name or an
    issue reference."""
    for found in _BACKTICK.findall(text):
        token = found.strip()
        if " " not in token and not _PATH.fullmatch(token):
            n.hit(token, 2 * weight)
    for found in (*_NAME.findall(text), *_ISSUE.findall(text)):
        n.hit(found, weight)


def _edit_names(n: _Notes, args: dict[str, Any]) -> None:
    """The names an edit's new text adds (not in its old text) and those it defines (worth
    3); of a whole file written, its head."""
    for key in ("new_string", "content", "new_str"):
        value = args.get(key)
        if isinstance(value, str):
            value = value[:_EDIT_SCAN]  # a whole file written: its head
            before = str(args.get("old_string") or args.get("old_str") or "")[:_EDIT_SCAN]
            for found in set(_NAME.findall(value)) - set(_NAME.findall(before)):
                n.hit(found, 1)
            for found in set(_DEFINED.findall(value)):
                n.hit(found, 3)


def _files(n: _Notes, m: Message) -> None:
    """Files: paths in the user's requests and the assistant's texts (read), and the path
    arguments of calls (changed when the tool edits, else read)."""
    for p in _PATH.findall(n.request):  # a user request's (``""`` for other messages)
        _add(n.read, set(n.read), p)
    if m.role != "assistant":
        return
    for p in _PATH.findall(m.text):
        _add(n.read, set(n.read), p)
    for call in m.tool_calls:
        args = n.args(call)
        path = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str)), None)
        if path:
            (n.changed if _CHANGE_TOOL.search(call.name) else n.read).append(path)


def _decisions(n: _Notes, m: Message) -> None:
    """Decisions: the assistant's sentences saying what it does or found, scored."""
    if m.role != "assistant" or not m.text:
        return
    for s in _sentences(m.text):
        score = _decision_score(s)
        if score > 0 and s not in n.seen_d:
            n.seen_d.add(s)
            n.decisions.append((score, len(n.decisions), _clip(s)))


def _open_tasks(n: _Notes, m: Message) -> None:
    """Open tasks (with the latest request, :func:`_task`): the latest todo list's items
    not done."""
    if m.role != "assistant":
        return
    for call in m.tool_calls:
        listed = n.args(call).get("todos")
        if isinstance(listed, list):
            n.todos = [
                _clip(str(t.get("content") or t.get("task") or ""))
                for t in listed
                if isinstance(t, dict) and str(t.get("status", "")).lower() not in _TODO_DONE
            ]


#: The sections of a summary, each reading what it needs of a message, in this order.
_SECTIONS: tuple[Callable[[_Notes, Message], None], ...] = (
    _errors,
    _commands,
    _task,
    _names,
    _files,
    _decisions,
    _open_tasks,
)


def extract_summary(messages: Sequence[Message]) -> ContextSummary:
    """A :class:`ContextSummary` of ``messages`` copied out of them (see the module doc); an
    earlier summary among them is folded in first."""
    notes = _Notes(messages)
    for m in messages:
        if folded_count(m) is not None:
            notes.fold(m)
            continue
        notes.request = _user_request(m)
        for section in _SECTIONS:
            section(notes, m)
    return notes.summary()
