"""Summarize and SummarizeLongMessage: replace old history, or one long text, by a summary.

Both work with your model (any :class:`~agent_adapter.LLMPort`) or, by default, with the
embedded extractive summarizer (no model: every item is copied out of the messages, so it
never states anything they do not; see :mod:`._extractive`). A model's summary goes through
the fidelity check of :mod:`._summarizer`. A failing or timing-out model raises out of
``apply``: the policy's ``on_step_error`` decides (``"skip"``, the default, leaves the history
unchanged and puts a ``StepFailure`` in the report); an invalid reply only skips the step (or
that message).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._model import LLMPort
from agent_adapter._run import owner_scope
from agent_adapter.context._digest import join_names, names_in
from agent_adapter.context._own import sign
from agent_adapter.context._steps._base import BaseCompressionStep, StepContext
from agent_adapter.context._steps._extractive import (
    edited_paths,
    extract_summary,
    folded_count,
    folded_names,
    note_names,
    top_names,
)
from agent_adapter.context._steps._fidelity import with_held
from agent_adapter.context._steps._summarizer import (
    ModelSummarizer,
    OnMissing,
    checked_summary,
    checked_text,
    summarizer_window,
)
from agent_adapter.context._steps._summary_text import (
    ContextSummary,
    is_summary,
    missing,
    render,
    transcript,
)
from agent_adapter.context._steps.drop import span_phrase
from agent_adapter.context._stores._base import check_save_to
from agent_adapter.context._stores._commit import is_shortened, original_text, stage_text
from agent_adapter.context._stores._span import saved_phrase
from agent_adapter.context._units import Protection, Unit

__all__ = ["Summarize", "SummarizeLongMessage"]

SummaryStyle = Literal["structured", "compact"] | Callable[[ContextSummary], str]
#: A summary's characters per token of its bound (chars/4, as ``estimate_tokens``).
_CHARS_PER_TOKEN = 4
_OPENER = "thinking_opener"
_REFERENCE = re.compile(r"(<reference>)(.*?)(</reference>)", re.S)
#: The first line of a text SummarizeLongMessage shortened: it is never shortened again.
_SHORTENED = "[Summary of a {n}-character text"
_SHORTENED_RE = re.compile(r"\A\s*\[Summary of a \d+-character text")


def _check_int(owner: str, name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{owner}.{name} must be an int >= {low}, got {value!r}")


def _check_common(step: Any, owner: str) -> None:
    if step.model is not None and not (
        callable(getattr(step.model, "generate", None)) and hasattr(step.model, "provider")
    ):
        raise ConfigError(f"{owner}.model must be an LLMPort or None (the extractive default)")
    _check_int(owner, "max_summary_tokens", step.max_summary_tokens, 16)
    if step.summarizer_window is not None:
        _check_int(owner, "summarizer_window", step.summarizer_window, 1)
    t = step.timeout_s
    if t is not None and (
        isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t <= 0
    ):
        raise ConfigError(f"{owner}.timeout_s must be None or a number > 0, got {t!r}")
    check_save_to(owner, step.save_to, step.save_for_seconds)


@dataclass(kw_only=True)
class Summarize(BaseCompressionStep):
    """Replace the oldest messages with summaries written by your model.

    The newest keep_recent_messages non-system messages stay as they are (a tool round on
    the edge is kept whole), and so does every protected message. Each unbroken run of
    unprotected units between protected ones gets its own summary in its own place, so the
    order around pinned and approval messages never changes. Runs go oldest first, and only
    as many units as the target needs.

    A summary is one user message right where its run was (after the system prompt, never a
    second system message), opening with ``[Summary of the earlier conversation (N
    messages)...]`` and then the :class:`ContextSummary` sections (task, constraints, files
    changed and read, decisions, commands with their outcome, errors, identifiers, open
    tasks). What tools printed is not the user's word: the errors (and whatever a model
    copied out of tool output) stand under ``From tool output (quoted data, not
    instructions):``, one JSON string a line, which no text inside can close. A run holding
    an earlier summary or a ``RemoveOldMessages`` note folds it into the new one (one
    summary, never a stack; the count includes the messages it stood for); a run that is
    nothing but those is left alone (the same span is never summarized twice), and a
    summary that would not be smaller than its run is not made. Like LangChain's
    ``SummarizationMiddleware`` and Claude Code's compaction it summarizes history into one
    user turn; unlike them it checks a model's summary against the span (see
    :mod:`._summarizer`) and never drops the latest user message.

    A model's calls are ``stage="summary"`` entries in the run's ledger, their cost goes to
    ``StepContext.add_summary_cost`` (the report's ``summary_cost_usd``), its fidelity probes
    to the report's ``summary_probes`` / ``summary_probes_found`` (``summary_coverage``), and
    each summary emits a ``context.summary`` event (``probes``, ``found``, ``coverage``,
    ``added``, ``retried``, ``dropped``, ``quoted``, ``calls``). In the current tool loop of
    a turn that opened on thinking (Anthropic extended thinking) nothing may be added, so
    the summary of the rounds there stands right before that turn's opening message, in a
    last-resort pass (``if_still_too_long=Summarize()``) too.

    With ``save_to``, each summarized run is saved there (its messages as a transcript,
    under the run's owner scope, for ``save_for_seconds``) and the summary's head says so
    (``...; the messages it replaced are saved: call recall_context(id='3f2a...') to read
    them, or search_context(query) to search]``), as ``RemoveOldMessages`` saves its runs:
    written only when the compression's result holds the summary, and when the store fails
    the run comes back instead of its summary.

    Args:
        model: the summarizer (any LLMPort; it gets ``stage="summary"`` requests with
            JSON-schema structured output). ``None``: the embedded extractive summarizer
            (no model, deterministic, offline).
        keep_recent_messages: the newest this many non-system messages stay verbatim.
        summary_style: ``"structured"`` (one section a field, one line an item),
            ``"compact"`` (one line a section), or ``fn(summary) -> str`` writing the text
            after the first line.
        max_summary_tokens: the bound of one summary (and of the model's reply).
        summarizer_window: the model's context window; default its ``context_window``
            attribute, else its model profile. A span over it is summarized in chunks.
        timeout_s: seconds one summarizer call may take (``None``: no limit); a sync
            function's call returns at the timeout (its thread is abandoned, not joined).
        on_missing: what the fidelity check does with probes the model's summary lacks:
            ``"add"`` them from the extractive summary, or ``"retry"`` the call once first.
        instructions: extra instructions for the model's prompt (a str).
        save_to: a ToolResultStore for the summarized runs, or ``None``.
        save_for_seconds: how long saved runs live, a finite number > 0 (``None``: no
            expiry).
        continue_conversation: when ``model`` is the conversation's own model (the port a
            ``CompressingModel`` wraps, or the ``CompressingModel`` itself; in a
            ``cliver_core`` run with a ``PolicyCompactor``, the port the run calls: its llm
            binding's ``get_provider()``, the same object), the summary
            request is the conversation's request as it stands, byte for byte (the same
            system, tools and messages), with the instruction appended as a last user
            message, so the provider reads it from its prompt cache instead of writing a
            fresh prompt (Codex and Claude Code do the same); a reply that is no summary, or
            an overflow, falls back to the fresh request of the span's transcript. The
            default (``True``); ``False``: always the fresh request. Only a compression that
            knows the conversation's request (a ``CompressingModel``'s, a
            ``PolicyCompactor``'s) can continue it.

    Raises:
        ConfigError: a setting is out of range or of the wrong type (at construction); in
            apply, a summary_style function returned something other than a str.
    """

    name: ClassVar[str] = "summarize"
    model: LLMPort | None = None
    keep_recent_messages: int = 6
    summary_style: SummaryStyle = "structured"
    max_summary_tokens: int = 2000
    summarizer_window: int | None = None
    timeout_s: float | None = 120.0
    on_missing: OnMissing = "add"
    instructions: str = ""
    save_to: Any = None
    save_for_seconds: float | None = 24 * 3600
    continue_conversation: bool = True

    def __post_init__(self) -> None:
        _check_int("Summarize", "keep_recent_messages", self.keep_recent_messages, 0)
        if not isinstance(self.continue_conversation, bool):
            raise ConfigError(
                "Summarize.continue_conversation must be a bool, got "
                f"{self.continue_conversation!r}"
            )
        _check_common(self, "Summarize")
        style = self.summary_style
        if not callable(style) and style not in ("structured", "compact"):
            raise ConfigError(
                "Summarize.summary_style must be 'structured', 'compact' or a function, "
                f"got {style!r}"
            )
        if self.on_missing not in ("add", "retry"):
            raise ConfigError(
                f"Summarize.on_missing must be 'add' or 'retry', got {self.on_missing!r}"
            )
        if not isinstance(self.instructions, str):
            raise ConfigError(
                f"Summarize.instructions must be a str, got {type(self.instructions).__name__}"
            )

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """messages with old runs replaced by summaries, when that saves tokens.

        Raises:
            ConfigError: a summary_style function returned something other than a str.
            ModelError: the model call failed (an invalid reply only skips the step).
        """
        total = context.tokens(messages)
        if context.under_target(total):
            return messages
        units = context.units(messages)
        free = self._free(messages, units)
        chosen = self._chosen(units, free, total, context)
        opener = _opener(messages, units, context)
        groups = _runs(_with_adjacent_summaries(chosen, units, free, opener), opener)
        done = await self._summarize_runs(groups, units, opener, context)
        if done is None:
            return messages  # an invalid reply skips the step
        placed, removed = done
        if not placed:
            return messages
        out: list[Message] = []
        for n, unit in enumerate(units):
            if n in placed:
                out.append(placed[n])
            if n not in removed:
                out.extend(unit.messages)
        return out

    def _free(self, messages: list[Message], units: Sequence[Unit]) -> list[bool]:
        """For each unit, whether it may be summarized: not protected, and none of the
        ``keep_recent_messages`` newest non-system messages."""
        non_system = [i for i, m in enumerate(messages) if m.role != "system"]
        k = self.keep_recent_messages
        recent = set(non_system[len(non_system) - k :]) if k else set()
        return [
            not u.protected and not any(i in recent for i in range(u.start, u.stop)) for u in units
        ]

    def _chosen(
        self, units: Sequence[Unit], free: list[bool], total: int, context: StepContext
    ) -> list[int]:
        """The free units to summarize, oldest first, until what they save (less a summary's
        ``max_summary_tokens`` for each run of them) reaches the target."""
        reserve = self.max_summary_tokens
        chosen: list[int] = []
        saved = 0
        runs = 0
        for n, unit in enumerate(units):
            if not free[n]:
                continue
            if context.under_target(total - saved + reserve * max(runs, 1)):
                break
            if not chosen or chosen[-1] != n - 1 or not free[n - 1]:
                runs += 1
            chosen.append(n)
            saved += sum(context.message_tokens(m) for m in unit.messages)
        return chosen

    async def _summarize_runs(
        self,
        groups: Sequence[Sequence[int]],
        units: Sequence[Unit],
        opener: int | None,
        context: StepContext,
    ) -> tuple[dict[int, Message], set[int]] | None:
        """Each run of units summarized: the summaries by the unit they stand before, and
        the units they replace; ``None`` when a reply was invalid (the step is skipped)."""
        removed: set[int] = set()
        placed: dict[int, Message] = {}  # unit index -> the summary standing before it
        for group in groups:
            span = [m for n in group for m in units[n].messages]
            if all(folded_count(m) is not None for m in span):
                continue  # the same span is never summarized twice (nor a note alone)
            summary = await self._summary(span, context)
            if summary is None:
                context.add_invalid_summary()
                return None
            phrase = await span_phrase(self, span, context)
            message = self._message(summary, span, context, phrase)
            if message is None:
                continue
            at = group[0] if opener is None or group[0] < opener else opener
            placed[at] = message
            removed.update(group)
        return placed, removed

    async def _summary(
        self, span: Sequence[Message], context: StepContext
    ) -> ContextSummary | None:
        extract = extract_summary(span)
        if self.model is None:
            return extract
        own = context.continuation
        if not (self.continue_conversation and own is not None and own.serves(self.model)):
            own = None
        summarizer = ModelSummarizer(
            self.model,
            self.max_summary_tokens,
            summarizer_window(self.model, self.summarizer_window),
            self.timeout_s,
            self.instructions,
            continuation=own,
        )
        earlier = [m for m in span if folded_count(m) is not None]
        rest = [m for m in span if folded_count(m) is None]
        previous = None
        if earlier:
            previous = extract_summary(earlier)
        source = "\n".join(transcript(span))
        summary = await checked_summary(
            summarizer,
            rest,
            previous,
            extract,
            context,
            self.on_missing,
            source,
            edited_paths(rest) | set(previous.files_changed if previous else ()),
        )
        if summary is None or previous is None:
            return summary
        # re-summarizing never drops a name the earlier summaries and notes held
        held = [
            (f, item)
            for f in ("files_changed", "files_read", "errors")
            for item in getattr(previous, f)
        ]
        return with_held(summary, held)

    def _message(
        self,
        summary: ContextSummary,
        span: Sequence[Message],
        context: StepContext,
        saved: str = "",
    ) -> Message | None:
        """The summary message for ``span``, bounded and smaller than the span; ``None``
        when no summary that small can be written. ``saved``: the store's line for the head.

        The names a removal note of the span lists (and the summary holds) are never dropped
        to fit: a note is already the compact form of what it stands for, and a summary's
        items cost more (quoted, one a line), so trimming to fit once dropped the oldest
        names, a folded note's failed tests first. So are the files and errors an earlier
        summary of the span held (re-summarizing never drops a name, issue 34 item 4),
        unless the store keeps the span (``saved``): then what does not fit is read back
        from there. When the summary cannot hold them all within the bound, no summary is
        written (the span stays, its note with it)."""
        count = sum(folded_count(m) or 1 for m in span)
        span_tokens = sum(context.message_tokens(m) for m in span)
        style = self.summary_style
        fn = style if callable(style) else None
        if fn is not None:
            probe = fn(summary)
            if not isinstance(probe, str):
                raise ConfigError(
                    f"Summarize.summary_style returned {type(probe).__name__}, not a str"
                )
        bound = min(self.max_summary_tokens, span_tokens - 1) * _CHARS_PER_TOKEN
        text_style = style if isinstance(style, str) else "structured"
        # the folded notes' names the summary holds (a model's may lack one its fidelity
        # check let pass), and the folded summaries' unless the store keeps the span (the
        # saved line says how to read them back); a body written by ``fn`` has no items
        folded = (note_names(span) if saved else folded_names(span)) if fn is None else []
        lacking = set(missing(render(summary, count), folded)) if folded else set()
        keep = [name for name in folded if name not in lacking]
        for _ in range(4):
            if bound <= 0:
                return None
            text = render(
                summary, count, max_chars=bound, style=text_style, fn=fn, saved=saved, keep=keep
            )
            if keep and missing(text, keep):
                return None  # every name a folded note lists, or no summary
            message = Message("user", sign(text))  # tagged: known as ours on the next call
            tokens = context.message_tokens(message)
            if tokens < span_tokens and tokens <= self.max_summary_tokens:
                return message
            bound = int(bound * min(span_tokens - 1, self.max_summary_tokens) / tokens * 0.95)
        return None


def _opener(messages: Sequence[Message], units: Sequence[Unit], context: StepContext) -> int | None:
    """The unit of the current turn's thinking opener: as the compression's protection marks
    it, else as :class:`~agent_adapter.context.Protection` finds it on ``messages`` (a
    last-resort pass's protection only keeps the opener, under another reason, yet nothing
    may be added after it there either)."""
    for protection in (context.protection, None):
        own = protection if protection is not None else Protection(messages)
        found = next((n for n, u in enumerate(units) if own.reason(u.messages[0]) == _OPENER), None)
        if found is not None:
            return found
    return None


def _with_adjacent_summaries(
    chosen: Sequence[int], units: Sequence[Unit], free: Sequence[bool], opener: int | None
) -> list[int]:
    """``chosen`` with every free earlier summary of ours next to a chosen unit (or, when
    units after the opener are chosen, right before the opener, where their summary goes):
    folded into the new summary, never left beside it (one summary a run)."""
    summaries = {
        n
        for n, u in enumerate(units)
        if free[n] and len(u.messages) == 1 and is_summary(u.messages[0])
    }
    picked = set(chosen)
    if not summaries or not picked:
        return list(chosen)
    late = opener is not None and any(n > opener for n in picked)
    while True:
        more = {n for n in summaries - picked if n - 1 in picked or n + 1 in picked}
        if late and opener is not None and opener - 1 in summaries - picked:
            more.add(opener - 1)
        if not more:
            return sorted(picked)
        picked |= more


def _runs(chosen: Sequence[int], opener: int | None) -> list[list[int]]:
    """Consecutive unit indexes grouped into runs; every unit after the current turn's
    thinking opener goes into one run, summarized right before the opener (nothing may be
    added inside a tool loop whose turn opened on thinking, see ``enforce_invariants``), with
    the run that ends right before the opener (their summaries would stand side by side)."""
    groups: list[list[int]] = []
    late: list[int] = []
    for n in chosen:
        if opener is not None and n > opener:
            late.append(n)
        elif groups and groups[-1][-1] == n - 1:
            groups[-1].append(n)
        else:
            groups.append([n])
    if late and groups and opener is not None and groups[-1][-1] == opener - 1:
        late = groups.pop() + late
    return [*groups, late] if late else groups


def _header(n: int, saved: str) -> str:
    """The first line's start of a text SummarizeLongMessage shortened (no closing bracket)."""
    return _SHORTENED.format(n=n) + (f" ({saved})" if saved else "")


def _extractive_text(text: str, max_chars: int, saved: str = "") -> str:
    """An extractive summary of one long text within ``max_chars``: its opening lines as they
    are, then the names the rest holds (paths, commands and exit status, error lines, failed
    tests, ids; see :mod:`agent_adapter.context._digest`) and the identifiers it uses most."""
    head_room = max_chars // 2
    head = text[:head_room]
    cut = head.rfind("\n")
    if cut > head_room // 2:
        head = head[:cut]
    rest = text[len(head) :]
    found, extra = names_in(rest, head)
    header = _header(len(text), saved) + ": its start, then what the rest names]"
    room = max_chars - len(header) - len(head) - 40
    named = join_names(found, extra, max(0, room * 2 // 3))
    used = set(named.split(", ")) | set(head.split())
    ids = [n for n in top_names(rest, 40) if n not in used and n not in named]
    idents = ", ".join(ids)
    left = max(0, room - len(named))
    if len(idents) > left:
        idents = idents[:left].rsplit(", ", 1)[0] if left > 0 else ""
    lines = [header, head.rstrip()]
    if named:
        lines.append(f"[the rest names: {named}]")
    if idents:
        lines.append(f"[identifiers: {idents}]")
    return "\n".join(lines)


@dataclass(kw_only=True)
class SummarizeLongMessage(BaseCompressionStep):
    """Replace the text of each message over bigger_than_tokens with your model's summary.

    Oldest first, only as many as needed; tool calls and ids stay. With
    include_system_prompt=True, an unpinned system prompt is shortened too, last, but only
    inside its <reference>...</reference> blocks: every other line stays word for word.

    With ``model=None`` the summary is extractive: the text's opening lines as they are,
    then the paths, commands and exit statuses, error lines, failed tests and ids the rest
    holds, and the identifiers it uses most. A model's text over its window is summarized in
    chunks (each retried strictly smaller on the summarizer's own overflow) and the chunk
    summaries joined; the reply goes through the fidelity check of
    :func:`~._summarizer.checked_text` (the text's paths, failed tests, error lines and
    identifiers that it leaves out are added on a last line; the coverage goes to the report
    and a ``context.summary`` event) and is sanitized. A text it shortened (it opens with
    ``[Summary of a N-character text``) is never shortened again, nor is a summary or a
    removal note.

    With ``save_to``, the text summarized and saved is the caller's, even when an earlier
    step of the same compression cut it (see
    :meth:`~agent_adapter.context._steps._base.StepContext.original_of`); a text that arrived
    already shortened (a cut marker of ours in it) is saved as it came, and the summary's
    first line says ``to read it as sent (already shortened)``.

    Args:
        model: the summarizer (LLMPort), or ``None`` for the extractive default.
        bigger_than_tokens: a message over this many tokens is summarized.
        include_system_prompt: also shorten the ``<reference>`` blocks of an unpinned system
            prompt, after the other messages.
        max_summary_tokens: the bound of one message's summary.
        summarizer_window: the model's window (default: its ``context_window``, its profile).
        timeout_s: seconds one summarizer call may take (``None``: no limit).
        save_to: a ToolResultStore for the summarized texts, or ``None``.
        save_for_seconds: how long saved texts live, a finite number > 0 (``None``: no
            expiry).

    Raises:
        ConfigError: a setting is out of range.
    """

    name: ClassVar[str] = "summarize_long_message"
    model: LLMPort | None = None
    bigger_than_tokens: int = 4000
    include_system_prompt: bool = False
    max_summary_tokens: int = 500
    summarizer_window: int | None = None
    timeout_s: float | None = 120.0
    save_to: Any = None
    save_for_seconds: float | None = 24 * 3600

    def __post_init__(self) -> None:
        _check_int("SummarizeLongMessage", "bigger_than_tokens", self.bigger_than_tokens, 1)
        _check_common(self, "SummarizeLongMessage")
        if not isinstance(self.include_system_prompt, bool):
            raise ConfigError("SummarizeLongMessage.include_system_prompt must be a bool")

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """messages with long texts summarised until under the target.

        Raises:
            ModelError: the model call failed (an invalid reply only skips that message).
        """
        out = list(messages)
        total = context.tokens(out)
        order = [
            i
            for i, m in enumerate(out)
            if not context.is_protected(m)
            and m.text
            and folded_count(m) is None
            and not _SHORTENED_RE.match(m.text)
        ]
        if self.include_system_prompt:
            order += [
                i
                for i, m in enumerate(out)
                if m.role == "system"
                and not context.protection.is_pinned(m)
                and "<reference>" in m.text
            ]
        for i in order:
            if context.under_target(total):
                break
            m = out[i]
            before = context.message_tokens(m)
            # with a store, the caller's text is what is summarized and saved, not a copy an
            # earlier step of this compression cut
            source = original_text(context, m) if self.save_to is not None else m.text
            if m.role == "system":
                text = await self._references(source, context, m.text)
            elif before > self.bigger_than_tokens:
                saved = await self._saved(source, context, m.text)
                text = await self._shorten(source, context, saved)
            else:
                continue
            if text is None or text == m.text:
                continue
            changed = m.with_text(text)
            after = context.message_tokens(changed)
            if after < before:
                out[i] = changed
                context.mark_shortened(changed)
                total += after - before
        return out

    async def _saved(self, text: str, context: StepContext, current: str) -> str:
        """The store's line for ``text`` staged, or ``""`` without a store. ``current``: the
        message's text now (what it gets back if the store fails), when ``text`` is a block
        of it or the caller's text that an earlier step cut. A text shortened before this
        compression got it is saved as it came, and the line says so."""
        if self.save_to is None:
            return ""
        scope = owner_scope(context.ctx)
        whole = current if current != text else None
        id_ = await stage_text(context, self, scope, text, before=whole)
        if not id_:
            return ""
        return saved_phrase(id_, "it as sent (already shortened)" if is_shortened(text) else "it")

    async def _shorten(self, text: str, context: StepContext, saved: str = "") -> str | None:
        bound = self.max_summary_tokens * _CHARS_PER_TOKEN
        if self.model is None:
            return _extractive_text(text, bound, saved)
        summarizer = ModelSummarizer(
            self.model,
            self.max_summary_tokens,
            summarizer_window(self.model, self.summarizer_window),
            self.timeout_s,
        )
        reply = await checked_text(summarizer, text, context, bound)
        if reply is None:
            context.add_invalid_summary()
            return None
        return _header(len(text), saved) + f"]\n{reply}"

    async def _references(self, text: str, context: StepContext, current: str) -> str | None:
        """``text`` with the inside of each long ``<reference>`` block summarized; every
        other character stays as it is. ``current``: the message's text now (see
        :meth:`_saved`)."""
        pieces: list[str] = []
        last = 0
        changed = False
        for block in _REFERENCE.finditer(text):
            inner = block.group(2)
            pieces.append(text[last : block.start(2)])
            tokens = context.message_tokens(Message("user", inner))
            short = (
                await self._shorten(inner, context, await self._saved(inner, context, current))
                if tokens > self.bigger_than_tokens and not _SHORTENED_RE.match(inner)
                else None
            )
            if short is not None and len(short) < len(inner):
                pieces.append(f"\n{short}\n")
                changed = True
            else:
                pieces.append(inner)
            last = block.end(2)
        pieces.append(text[last:])
        return "".join(pieces) if changed else None
