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
from collections.abc import Sequence
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
    "extract_summary",
    "folded_count",
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
            path = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str)), None)
            if path and _CHANGE_TOOL.search(call.name):
                out.add(path)
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


def extract_summary(messages: Sequence[Message]) -> ContextSummary:
    """A :class:`ContextSummary` of ``messages`` copied out of them (see the module doc); an
    earlier summary among them is folded in first."""
    previous: ContextSummary | None = None
    task = ""
    constraints: list[str] = []
    decisions: list[tuple[int, int, str]] = []
    read: list[str] = []
    changed: list[str] = []
    commands: dict[str, str] = {}
    errors: list[str] = []
    todos: list[str] = []
    latest = ""
    names: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    seen_c: set[str] = set()
    seen_d: set[str] = set()
    seen_e: set[str] = set()
    results = {m.tool_call_id: m for m in messages if m.role == "tool"}
    calls = {c.id: c for m in messages for c in m.tool_calls}
    scanned: dict[int, tuple[str | None, list[str]]] = {}
    order = 0

    def scan(m: Message) -> tuple[str | None, list[str]]:
        key = id(m)
        if key not in scanned:
            scanned[key] = _scan_result(m.text)
        return scanned[key]

    def outcome_lines(lines: list[str]) -> None:
        for line in lines[:_PER_RESULT]:
            _add(errors, seen_e, _clip(line, 200))

    def name_hits(text: str, weight: int = 1) -> None:
        nonlocal order
        for found in _BACKTICK.findall(text):
            token = found.strip()
            if " " not in token and not _PATH.fullmatch(token):
                names[token] += 2 * weight
                first_seen.setdefault(token, order)
                order += 1
        for found in (*_NAME.findall(text), *_ISSUE.findall(text)):
            names[found] += weight
            first_seen.setdefault(found, order)
            order += 1

    pending_shell: list[str] = []
    for m in messages:
        if folded_count(m) is not None:
            old = parse(m.text) if is_summary(m) else _note_summary(m.text)
            previous = old if previous is None else merge(previous, old)
            continue
        if m.role == "user":
            if is_command_output(m):  # a text agent's command output
                status, lines = scan(m)
                outcome_lines(lines)
            else:
                status = _status(m.text)
            if pending_shell:  # a text agent: the shell block's result is the next user text
                commands[pending_shell[-1]] = _outcome(m, status)
                pending_shell = []
            request = _user_request(m)
            if request:
                task = task or request
                latest = request
                name_hits(request, 3)
                for s in _sentences(request):
                    if _CONSTRAINT.search(s):
                        _add(constraints, seen_c, _clip(s))
                for p in _PATH.findall(request):
                    _add(read, set(read), p)
            continue
        if m.role == "tool":
            for found in _ISSUE_ID.findall(m.text, 0, 1500):
                names[found] += 1
                first_seen.setdefault(found, order)
                order += 1
            failed = m.extras.get("is_error") is True or _status(m.text) not in (None, "0")
            call = calls.get(m.tool_call_id or "")
            if not failed and call is not None and _reads_a_file(call):
                continue  # a file's content: its lines are no outcome
            _, lines = scan(m)
            outcome_lines(lines)
            if failed and not lines:
                first = m.text.strip().splitlines()[0] if m.text.strip() else ""
                if leading_status(m.text[:200]) is None and not first.startswith(
                    "The user doesn't want"
                ):
                    _add(errors, seen_e, _clip(first, 200))
            continue
        if m.role != "assistant":
            continue
        text = m.text
        if text:
            name_hits(text, 2)
            for s in _sentences(text):
                score = _decision_score(s)
                if score > 0 and s not in seen_d:
                    seen_d.add(s)
                    decisions.append((score, len(decisions), _clip(s)))
            for p in _PATH.findall(text):
                _add(read, set(read), p)
            if not m.tool_calls:
                pending_shell = [_clip(b.strip(), 200) for b in _SHELL_BLOCK.findall(text)]
        for call in m.tool_calls:
            args = _args(call.arguments)
            path = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str)), None)
            if path:
                (changed if _CHANGE_TOOL.search(call.name) else read).append(path)
            command = next((args[k] for k in _COMMAND_KEYS if isinstance(args.get(k), str)), None)
            if command:
                cmd = _clip(command.strip().splitlines()[0] if command.strip() else "", 200)
                if cmd:
                    result = results.get(call.id)
                    commands.pop(cmd, None)
                    commands[cmd] = _outcome(result, scan(result)[0] if result else None)
            for key in ("new_string", "content", "new_str"):
                value = args.get(key)
                if isinstance(value, str):
                    value = value[:_EDIT_SCAN]  # a whole file written: its head
                    before = str(args.get("old_string") or args.get("old_str") or "")[:_EDIT_SCAN]
                    for found in set(_NAME.findall(value)) - set(_NAME.findall(before)):
                        names[found] += 1
                        first_seen.setdefault(found, order)
                        order += 1
                    for found in set(_DEFINED.findall(value)):
                        names[found] += 3
                        first_seen.setdefault(found, order)
                        order += 1
            listed = args.get("todos")
            if isinstance(listed, list):
                todos = [
                    _clip(str(t.get("content") or t.get("task") or ""))
                    for t in listed
                    if isinstance(t, dict) and str(t.get("status", "")).lower() not in _TODO_DONE
                ]

    root = _root([*changed, *read])

    def rel(p: str) -> str:
        return p[len(root) + 1 :] if root and p.startswith(root + "/") else p

    files_changed = list(dict.fromkeys(rel(p) for p in changed))
    files_read = [p for p in dict.fromkeys(rel(p) for p in read) if p not in files_changed]
    shown = " ".join((*files_changed, *files_read))
    ranked = sorted(names, key=lambda n: (-names[n], first_seen[n]))
    identifiers = [n for n in ranked if n not in shown and os.sep not in n]
    open_tasks = [_clip(latest, 600)] if latest else []
    open_tasks += [t for t in todos if t]
    cmds = [f"{c} -> {o}" if o else c for c, o in commands.items()]
    summary = ContextSummary(
        task=task,
        constraints=constraints[: _LIMITS["constraints"]],
        decisions=_best(decisions, _LIMITS["decisions"]),
        working_directory=root,
        files_read=files_read[: _LIMITS["files_read"]],
        files_changed=files_changed[: _LIMITS["files_changed"]],
        commands=cmds[-_LIMITS["commands"] :],
        errors=errors[-_LIMITS["errors"] :],
        identifiers=identifiers[: _LIMITS["identifiers"]],
        open_tasks=open_tasks[: _LIMITS["open_tasks"]],
    )
    return summary if previous is None else merge(previous, summary)
