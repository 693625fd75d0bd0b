"""The fidelity check of a model's summary: what it must name, what it may not make up.

* Probes: the span's extractive summary's file paths, identifiers, error lines, failing
  commands, task and open task, looked up in the model's summary (:func:`fidelity`, or
  :func:`name_probes` for any text). Names match whole (:func:`has_name`): a path at path
  component boundaries (``a.py`` is not in ``data.py``, ``src/m1.py`` not in ``src/m10.py``
  nor ``src/m1.py.bak``), any other name at word boundaries (``parse`` is not in
  ``parse_config``), so a partial name or one letter never passes for the whole.
* Grounding: a path or identifier the span does not hold whole was made up and is dropped; a
  file listed as changed must be shown edited in the span (an edit or write call's path, a
  diff header, a shell write: see :func:`~._extractive.edited_paths`), else it moves to the
  files read (or goes, when the span does not hold it at all) (:func:`drop_ungrounded`).
* Voice: a summary is a user message, so an item that repeats tool output (a sentence of
  :data:`_MIN_QUOTED` characters or more that a tool result holds and no user or assistant
  text does) moves to the quoted tool output (``errors``, rendered as quoted data), never
  standing as the user's task or rules (:func:`quote_tool_output`). Both sides are compared
  as :func:`~._summary_text.comparable_text` text (NFKC, no format characters, casefolded,
  whitespace collapsed): a zero-width space, a leading bidi override or a change of case does
  not turn a copy of tool output into the user's words.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from agent_adapter._messages import Message
from agent_adapter.context._steps._extractive import is_command_output
from agent_adapter.context._steps._summary_text import LIST_FIELDS, ContextSummary, comparable_text

__all__ = [
    "add_missing",
    "drop_ungrounded",
    "fidelity",
    "has_name",
    "name_probes",
    "quote_tool_output",
    "with_held",
]

#: The lists that name files: an item the span does not hold whole was made up.
_FILE_FIELDS = ("files_read", "files_changed")
#: How a model may spell a name the span holds: in backticks, called, with an arity.
_NAME_DRESS = re.compile(r"\A`?(.*?)`?(?:\(\))?(?:/\d+)?\Z")
#: A probe of an error line is its first this many characters (whole words).
_ERROR_PROBE = 40
#: Commands whose outcome is no failure are not probed.
_OK_OUTCOMES = ("exit 0", "ok")
#: An item's sentence this long that only tool output holds was copied from it.
_MIN_QUOTED = 20
#: The prose fields a model may copy tool output into (the task is checked on its own).
_PROSE = ("constraints", "decisions", "commands", "open_tasks")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _glued(text: str, i: int, j: int, path: bool) -> bool:
    """True when ``text[i:j]`` runs on into a longer name on either side."""
    before = text[i - 1] if i > 0 else ""
    after = text[j] if j < len(text) else ""
    if path:
        if before and (_word_char(before) or before in ".-"):
            return True
        if after and (_word_char(after) or after in "-/"):
            return True
        return after == "." and j + 1 < len(text) and _word_char(text[j + 1])
    return bool(before and _word_char(before)) or bool(after and _word_char(after))


def _is_path(name: str) -> bool:
    return "/" in name or bool(re.search(r"\w\.[A-Za-z]\w{0,5}\Z", name))


def has_name(text: str, name: str, *, path: bool | None = None) -> bool:
    """True when ``text`` holds ``name`` whole: a path (``path=None``: a name with a slash
    or a file extension) at path component boundaries, any other name at word boundaries."""
    if not name:
        return False
    as_path = _is_path(name) if path is None else path
    i = text.find(name)
    while i >= 0:
        if not _glued(text, i, i + len(name), as_path):
            return True
        i = text.find(name, i + 1)
    return False


def _bare(name: str) -> str:
    found = _NAME_DRESS.match(name.strip())
    return found.group(1) if found else name.strip()


def _error_probe(error: str) -> str:
    """The first :data:`_ERROR_PROBE` characters of an error line, cut at a word's end."""
    if len(error) <= _ERROR_PROBE:
        return error
    head = error[:_ERROR_PROBE]
    if _word_char(error[_ERROR_PROBE]) and _word_char(head[-1]):
        cut = head.rstrip().rsplit(" ", 1)[0]
        head = cut if len(cut) >= _ERROR_PROBE // 2 else head
    return head.rstrip()


def _command(item: str) -> str:
    return item.split(" -> ", 1)[0].strip()


def _failing(commands: Sequence[str]) -> list[str]:
    """The commands with an outcome that is no success (``pytest -> exit 1``)."""
    return [c for c in commands if " -> " in c and c.rsplit(" -> ", 1)[1] not in _OK_OUTCOMES]


def name_probes(
    text: str, extract: ContextSummary, *, changed: str | None = None
) -> list[tuple[str, str, bool]]:
    """The name probes of ``extract`` in ``text`` (both compared lowercase): its first 20
    changed and read files, 10 identifiers, 8 error lines and the 5 latest failing commands,
    each as ``(field, item, found)``; a changed file is looked up in ``changed`` when given
    (the summary's own list of changed files)."""
    text = text.lower()
    where = text if changed is None else changed.lower()
    probes = [
        ("files_changed", p, has_name(where, p.lower(), path=True))
        for p in extract.files_changed[:20]
    ]
    probes += [
        ("files_read", p, has_name(text, p.lower(), path=True)) for p in extract.files_read[:20]
    ]
    probes += [
        ("identifiers", n, has_name(text, _bare(n).lower())) for n in extract.identifiers[:10]
    ]
    probes += [
        ("errors", e, has_name(text, _error_probe(e).lower(), path=False))
        for e in extract.errors[:8]
    ]
    probes += [
        ("commands", c, has_name(text, _command(c).lower(), path=False))
        for c in _failing(extract.commands)[-5:]
    ]
    return probes


def _flat(summary: ContextSummary) -> str:
    """Every field of ``summary`` as plain lines (items unquoted)."""
    lines = [summary.task, summary.working_directory]
    for name in LIST_FIELDS:
        lines.extend(getattr(summary, name))
    return "\n".join(lines)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w./-]{4,}", text.lower()))


def fidelity(summary: ContextSummary, extract: ContextSummary) -> tuple[int, list[tuple[str, str]]]:
    """Probes of the span (its extractive summary's paths, top identifiers, error lines,
    failing commands, task and open task) looked up in ``summary``: how many there were, and
    the missing ones as ``(field, item)``. Names match whole (:func:`has_name`); a changed
    file must be among the summary's changed files."""
    probes = name_probes(_flat(summary), extract, changed="\n".join(summary.files_changed))
    for field, wanted, have in (
        ("task", extract.task, summary.task),
        ("open_tasks", next(iter(extract.open_tasks), ""), " ".join(summary.open_tasks)),
    ):
        if wanted:
            words = _words(wanted)
            ok = not words or len(words & _words(have)) * 2 >= len(words)
            probes.append((field, wanted, ok))
    return len(probes), [(f, item) for f, item, ok in probes if not ok]


def _same_path(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file (``/w/src/a.py``, ``./src/a.py``)."""
    a, b = a.removeprefix("./"), b.removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def drop_ungrounded(
    summary: ContextSummary, source: str, *, edited: Collection[str] | None = None
) -> tuple[ContextSummary, int]:
    """``summary`` without the names that ``source`` (the span's transcript) does not hold
    whole, and how many went: a file path (working directory, files read and changed) or
    an identifier a model made up is worse than none (the agent would open it, call it).
    Identifiers count without backticks, ``()`` and an arity (``foo/2`` as ``foo``). With
    ``edited`` (the paths the span shows edited), a changed file that is not one of them
    was only mentioned: it moves to the files read (and counts as dropped). The other fields
    are prose and are not checked so."""
    out = summary.model_copy(deep=True)
    dropped = 0
    if out.working_directory and not has_name(source, out.working_directory, path=True):
        out.working_directory = ""
        dropped += 1
    for field in _FILE_FIELDS:
        items: list[str] = getattr(out, field)
        kept = [item for item in items if has_name(source, item, path=True)]
        dropped += len(items) - len(kept)
        items[:] = kept
    if edited is not None:
        mentioned = [p for p in out.files_changed if not any(_same_path(p, e) for e in edited)]
        dropped += len(mentioned)
        out.files_changed = [p for p in out.files_changed if p not in mentioned]
        out.files_read += [p for p in mentioned if p not in out.files_read]
    names = out.identifiers
    kept = [item for item in names if (bare := _bare(item)) and has_name(source, bare)]
    dropped += len(names) - len(kept)
    out.identifiers = kept
    return out, dropped


def add_missing(summary: ContextSummary, missing: Sequence[tuple[str, str]]) -> ContextSummary:
    """``summary`` with each missing ``(field, item)`` appended to its field (the task, a
    single text, is replaced: the user's own words); a changed file added leaves the files
    read."""
    out = summary.model_copy(deep=True)
    for field, item in missing:
        if field == "task":
            out.task = item
            continue
        items: list[str] = getattr(out, field)
        if item not in items:
            items.append(item)
        if field == "files_changed" and item in out.files_read:
            out.files_read.remove(item)
    return out


def with_held(summary: ContextSummary, held: Sequence[tuple[str, str]]) -> ContextSummary:
    """``summary`` with every ``(field, item)`` of ``held`` (an earlier summary's names, see
    :func:`~agent_adapter.context._steps._extractive.held_names`) it does not name added to
    its field: a model re-summarizing a summary never drops a name it held, even past the
    probes :func:`fidelity` samples."""
    text = _flat(summary).lower()
    lacking = [
        (field, item)
        for field, item in held
        if not has_name(text, (_error_probe(item) if field == "errors" else item).lower())
    ]
    return add_missing(summary, lacking) if lacking else summary


def _voices(span: Sequence[Message], previous: ContextSummary | None) -> tuple[str, str]:
    """What tools said in ``span`` (and the earlier summary's quoted tool output), and what
    the user and the assistant said (texts, tool-call arguments, the earlier summary's other
    fields), each one :func:`~._summary_text.comparable_text` text."""
    tool: list[str] = []
    own: list[str] = []
    for m in span:
        if m.role == "tool" or is_command_output(m):
            tool.append(m.text)
        elif m.role in ("user", "assistant"):
            own.append(m.text)
            own.extend(c.arguments for c in m.tool_calls)
    if previous is not None:
        tool.extend(previous.errors)
        own.extend((previous.task, *previous.constraints, *previous.decisions))
        own.extend((*previous.commands, *previous.open_tasks))
    return comparable_text("\n".join(tool)), comparable_text("\n".join(own))


def quote_tool_output(
    summary: ContextSummary,
    span: Sequence[Message],
    previous: ContextSummary | None,
    task: str,
) -> tuple[ContextSummary, int]:
    """``summary`` with each prose item (constraints, decisions, commands, open tasks, the
    task) that repeats tool output moved to the quoted tool output (``errors``), and how many
    moved: a sentence of it, :data:`_MIN_QUOTED` characters or more, that a tool result of
    ``span`` (or ``previous``'s quoted output) holds and no user or assistant text does, all
    compared as :func:`~._summary_text.comparable_text` text (so a zero-width space, a bidi
    override or a change of case in either copy does not hide it). A task so moved is
    replaced by ``task`` (the user's words)."""
    tool, own = _voices(span, previous)
    if not tool:
        return summary, 0

    def copied(item: str) -> bool:
        return any(
            len(s) >= _MIN_QUOTED and s in tool and s not in own
            for s in _SENTENCE_END.split(comparable_text(item))
        )

    out = summary.model_copy(deep=True)
    moved = 0
    for field in _PROSE:
        items: list[str] = getattr(out, field)
        quoted = [item for item in items if copied(item)]
        if quoted:
            moved += len(quoted)
            items[:] = [item for item in items if item not in quoted]
            out.errors += [item for item in quoted if item not in out.errors]
    if out.task and copied(out.task):
        moved += 1
        if out.task not in out.errors:
            out.errors.append(out.task)
        out.task = task
    return out, moved
