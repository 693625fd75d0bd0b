"""RemoveDuplicates: drop older copies of later messages or tool rounds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from agent_adapter._errors import ConfigError
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    TextPart,
    ThinkingPart,
)
from agent_adapter.context._lru import Memo, chars_of
from agent_adapter.context._scorers import (
    BM25Scorer,
    check_scorer,
    checked_scores,
    scoring_context,
)
from agent_adapter.context._steps._base import BaseCompressionStep, StepContext, spans_of
from agent_adapter.context._steps._dedup_index import Bm25Index, Chains, comparable
from agent_adapter.context._units import Unit, UnitSpans

__all__ = ["RemoveDuplicates"]

#: Stands for a missing neighbour (before the first unit, after the last).
_EDGE: Hashable = ("<edge>",)


def _digest(data: str | None) -> str | None:
    """sha256 of a payload (base64 image or file data), so it is hashed once, never compared."""
    if data is None:
        return None
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def _blob(value: Any) -> str | None:
    """A digest of vendor fields or an opaque item: their JSON (keys sorted), else their repr.

    Objects JSON cannot write go by their repr, so one whose repr shows only its identity is
    equal to nothing else (never a false duplicate).
    """
    if isinstance(value, Mapping) and not value:
        return None
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):  # keys of mixed types, a cycle
        try:
            text = repr(value)
        except RecursionError:  # nested too deep for repr too: equal to nothing else
            text = f"<unreadable {id(value)}>"
    return _digest(text)


def _part_key(part: Part) -> Hashable:
    """A part's kind and fields; payloads (image, file, opaque data) by their sha256."""
    if isinstance(part, TextPart):
        return ("text", part.text, _blob(part.extras))
    if isinstance(part, ImagePart):
        return (
            "image",
            part.url,
            _digest(part.data),
            part.media_type,
            part.detail,
            _blob(part.extras),
        )
    if isinstance(part, FilePart):
        return (
            "file",
            part.url,
            _digest(part.data),
            part.file_id,
            part.media_type,
            part.filename,
            _blob(part.extras),
        )
    if isinstance(part, ThinkingPart):
        return ("thinking", part.text, part.signature, part.redacted)
    if isinstance(part, OpaquePart):
        return ("opaque", part.provider, _blob(part.data))
    return ("?", repr(part))  # pragma: no cover - Message admits no other part


#: Message keys by the message's identity (the message held, so its id stays its own): a
#: message compared again, in the next pass or call, is not keyed again. Bounded by the
#: characters the messages held hold (the keys share their strings).
_KEYS = Memo(entries=8192, chars=16_000_000)


def _message_key(message: Message, answers: int | None, remember: bool = True) -> Hashable:
    """What makes a message the same as another; ``answers`` is the call it answers, by position.
    ``remember``: through the memo (else computed, neither looked up nor remembered)."""

    def compute() -> Hashable:
        content = message.content
        if isinstance(content, str):  # message.parts' one TextPart (no extras), not made
            parts: tuple[Hashable, ...] = (("text", content, None),) if content else ()
        else:
            parts = tuple(_part_key(p) for p in content)
        return (
            message.role,
            message.name,
            parts,
            tuple((c.name, c.arguments) for c in message.tool_calls),
        )

    key = (
        _KEYS.by_identity((message,), compute, size=lambda: chars_of(message) + 1)
        if remember
        else compute()
    )
    return (key, answers)


def _key(unit: tuple[Message, ...], remember: bool = True) -> Hashable:
    """Every message of a unit (its messages), compared whole; a result by the position of
    the call it answers.

    Call ids differ between two runs of the same call, so a result names its call by that
    call's position among the unit's calls (two parallel calls whose results swapped are not
    the same round). ``remember``: through the memos (see :func:`_keys`).
    """
    if not remember:
        return _unit_key(unit, remember=False)
    return _UNIT_KEYS.by_identity(unit, lambda: _unit_key(unit), size=lambda: chars_of(*unit) + 1)


def _keys(spans: UnitSpans) -> list[int]:
    """Each unit's :func:`_key` as a small int (equal keys, equal ints): hashed once, then
    compared at once. A plain message's key (no call, not a result) is made inline, for less
    than a memo lookup costs; of the others, only the newest units go through the memos: the
    puts of the newer ones would evict an older one's key within this very walk (a memo holds
    ``entries`` keys), so the older ones are keyed without looking up or remembering (same
    keys, no churn)."""
    classes: dict[Hashable, int] = {}
    messages = spans.messages
    fresh = len(spans) - _UNIT_KEYS.entries
    out: list[int] = []
    start = 0
    for n, stop in enumerate(spans.bounds.stops):
        m = messages[start]
        content = m.content
        key: Hashable
        if (
            stop - start == 1
            and type(content) is str
            and not m.tool_calls
            and m.tool_call_id is None
        ):
            # _unit_key of a plain message (no call, not a result: most of a chat), inlined:
            # the same key, made at less than the memos' lookup costs (they hold the others)
            parts = (("text", content, None),) if content else ()
            key = (((m.role, m.name, parts, ()), None),)
        else:
            key = _key(messages[start:stop], n >= fresh)
        out.append(classes.setdefault(key, len(classes)))
        start = stop
    return out


#: Unit keys by the identities of the unit's messages (held), bounded by their characters.
_UNIT_KEYS = Memo(entries=8192, chars=16_000_000)


def _unit_key(unit: tuple[Message, ...], remember: bool = True) -> Hashable:
    """:func:`_key`, computed (its messages' keys through their memo with ``remember``)."""
    if len(unit) == 1 and unit[0].tool_call_id is None:
        return (_message_key(unit[0], None, remember),)  # most units: no call
    position: dict[str, int] = {}
    for m in unit:
        for c in m.tool_calls:
            position.setdefault(c.id, len(position))
    return tuple(
        _message_key(m, None if m.tool_call_id is None else position.get(m.tool_call_id), remember)
        for m in unit
    )


@dataclass(kw_only=True)
class RemoveDuplicates(BaseCompressionStep):
    """Drop an older copy of a later message or tool round, oldest first, only as many as needed.

    ``match="exact"`` compares whole messages: role, name, every part by its kind and all its
    fields (text; images and files by a sha256 of their ``data`` plus ``url`` / ``file_id``,
    media type, detail, filename and vendor fields; thinking by text, signature and
    ``redacted``; opaque items by their data's JSON, else repr), tool calls by name and
    arguments (not call ids) and tool results by their content and the call they answer.
    Message ``extras`` (vendor ids and metadata) are not compared. Copies are found in
    context:

    * A tool round (calls and their results) is the same as a later round when every message
      is: the call is what the results answer, so an agent that ran ``cat foo.py`` twice and
      got the same output (with the same text beside the call) loses the older round. A round
      is compared alone and goes alone.
    * Any other message is the same as a later one only together with the unit right before
      it (the question it answers, or the round it follows): both must equal the later one
      and the unit before that, so a short "no" answering "delete the production backups?"
      is not a copy of a later "no" answering "restart nginx?". The two go together (an
      answer never goes without its question), and only where the gap closes cleanly: the
      unit after them is a tool round, or a copy of the first of them (the exchange was
      repeated back to back), so no reply is left under a different question. Neither goes
      when the unit before is protected, already dropped or the later copy of an earlier
      drop.

    The later copy a drop relies on is never dropped, and a round goes whole, so no result
    loses its call. Protected units are never dropped. The step stops as soon as the list is
    under the target.

    ``match="similar"`` asks scorer and treats two units whose texts score above
    same_if_score_above as the same, then applies the rules above unchanged: an older tool
    round goes for a later near-copy (a file read again after an edit, a test run again with
    a new timing line), a plain message only together with the unit before it, both near
    copies of a later pair, and only where the gap closes cleanly. Only units of one shape
    are scored against each other: the same role, for rounds the same calls (names and
    arguments, in order: the same command run again, not another test file whose output
    opens with the same header), and texts within a factor of two in length. A round's text
    is its results, then the text beside its calls. Near-copies are chained
    (if A is like B and B like C, all three count as one text); a round goes whole, so no
    kept result loses its call.

    A pair is scored on its own: the later text's score with the older one as the query, what
    ``scorer.score(older, [later])`` returns. With :class:`BM25Scorer` (whose scores hang on
    the texts of a call: their word frequencies) that is computed pair by pair from its
    cached word counts, through an inverted index of the units' words: only pairs that share
    one of the older text's rarest words (as many as a later text lacking them all could not
    score above same_if_score_above, see
    :mod:`~agent_adapter.context._steps._dedup_index`) are scored, and a unit is not
    scored against units already chained to it, so the cost grows about linearly with the
    conversation. Any other scorer is asked once per unit, about its later units of the same
    shape not already chained to it (every pair of units of one shape, at worst); its own
    cache keeps that cheap (EmbeddingScorer embeds each text once), and its score for a text
    must not depend on the other texts of the call. ``EmbeddingScorer(LocalEmbedder())`` at
    0.9 is the measured choice (``bench/dedup_similar.py``); BM25Scorer's scores are relative
    to the query's own, so they also work as a similarity (``bench/dedup_scale.py`` times it
    on 50,000 messages).

    Args:
        match: ``"exact"`` or ``"similar"``.
        scorer: a Scorer, needed for ``"similar"``.
        same_if_score_above: the similarity (0..1) above which two texts count as the same.

    Raises:
        ConfigError: an unknown match, "similar" without a scorer, a scorer that is not a
            Scorer instance (see :func:`~agent_adapter.context._scorers.check_scorer`), or a
            same_if_score_above that is not a number in 0..1 (a str, a bool, NaN).
    """

    name: ClassVar[str] = "remove_duplicates"
    match: Literal["exact", "similar"] = "exact"
    scorer: Any = None
    same_if_score_above: float = 0.9

    def __post_init__(self) -> None:
        if not isinstance(self.match, str) or self.match not in ("exact", "similar"):
            raise ConfigError(
                f"RemoveDuplicates.match must be 'exact' or 'similar', got {self.match!r}"
            )
        if self.scorer is not None:
            check_scorer(self.scorer, "RemoveDuplicates.scorer")
        elif self.match == "similar":
            raise ConfigError("RemoveDuplicates(match='similar') needs a scorer")
        above = self.same_if_score_above
        if isinstance(above, bool) or not isinstance(above, int | float) or not 0 <= above <= 1:
            raise ConfigError(
                f"RemoveDuplicates.same_if_score_above must be a number in 0..1, got {above!r}"
            )

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """messages without older duplicates until under the target."""
        total = context.tokens(messages)
        if context.under_target(total):
            return messages
        spans = spans_of(context, messages)
        keys: Sequence[Hashable]
        if self.match == "similar":
            keys = await self._similar_keys(context.units(messages), context)
        else:
            keys = _keys(spans)
        groups = _groups(spans, keys, total, context)
        drop: set[int] = set()
        for group in groups:
            if context.under_target(total):
                break
            for n in group:
                start, stop = spans.bounds[n]
                drop.update(range(start, stop))
                total -= sum(context.message_tokens(m) for m in messages[start:stop])
        return [m for i, m in enumerate(messages) if i not in drop]

    async def _similar_keys(self, units: list[Unit], context: StepContext) -> list[Hashable]:
        """A key per unit: the same for units that are near-copies (chained), else its own.

        Raises:
            ConfigError: the scorer returned bad scores.
        """
        chains = Chains(len(units))
        shapes: dict[Hashable, list[int]] = {}
        texts = [_similar_text(u) for u in units]
        for n, unit in enumerate(units):
            if texts[n].strip():
                shapes.setdefault(_shape(unit), []).append(n)
        protected = [u.protected for u in units]
        scorer = self.scorer
        indexed = type(scorer) is BM25Scorer and scorer.k1 > 0 and 0 <= scorer.b <= 1
        with scoring_context(context.ctx):
            for members in shapes.values():
                if len(members) < 2:
                    continue
                if indexed:
                    if self.same_if_score_above >= 1:
                        break  # BM25Scorer's scores are at most 1: nothing scores above
                    Bm25Index(scorer, texts, self.same_if_score_above).chain(
                        members, protected, chains
                    )
                else:
                    await self._ask(members, texts, protected, chains)
        return [("similar", chains.root(n)) for n in range(len(units))]

    async def _ask(
        self, members: list[int], texts: list[str], protected: list[bool], chains: Chains
    ) -> None:
        """Chain the near-copies among ``members`` (one shape, oldest first) by asking the
        scorer once per unit about its later units not already chained to it (one text a
        call for a BM25Scorer the index cannot stand in for: its scores hang on the call).

        Raises:
            ConfigError: the scorer returned bad scores.
        """
        alone = isinstance(self.scorer, BM25Scorer)
        for at, n in enumerate(members[:-1]):
            if protected[n]:
                continue  # never dropped: its later copies need not be known
            size, mine = len(texts[n]), chains.root(n)
            later = [
                k
                for k in members[at + 1 :]
                if comparable(size, len(texts[k])) and chains.root(k) != mine
            ]
            batches = [[k] for k in later] if alone else [later] if later else []
            for batch in batches:
                raw = await self.scorer.score(texts[n], [texts[k] for k in batch])
                scores = checked_scores(raw, len(batch), "RemoveDuplicates")
                for k, s in zip(batch, scores, strict=True):
                    if s > self.same_if_score_above:
                        chains.join(n, k)


def _shape(unit: Unit) -> Hashable:
    """What two units must share to be compared: the role, and a round's calls (names and
    arguments, in order)."""
    first = unit.messages[0]
    return (first.role, tuple((c.name, c.arguments) for m in unit.messages for c in m.tool_calls))


def _similar_text(unit: Unit) -> str:
    """A unit's text for match="similar": a round's results, then the text beside its calls."""
    results = [m.text for m in unit.messages if m.role == "tool"]
    said = [m.text for m in unit.messages if m.role != "tool"]
    return "\n".join(filter(None, [*results, *said]))


def _groups(
    spans: UnitSpans, keys: Sequence[Hashable], total: int, context: StepContext
) -> list[list[int]]:
    """The units to drop, oldest first, as groups that go together (see RemoveDuplicates);
    units with equal ``keys`` are copies.

    Walks until the groups found so far bring ``total`` under the target.
    """
    count = len(spans)
    protected, bounds, messages = spans.protected, spans.bounds, spans.messages
    rounds = _rounds(spans)

    def key(i: int) -> Hashable:
        return keys[i] if 0 <= i < count else _EDGE

    def plain(i: int) -> bool:
        return 0 <= i < count and not rounds[i]

    newest_round: dict[Hashable, int] = {}  # the newest unit holding each key
    pairs: dict[Hashable, int] = {}  # the newest plain unit holding each (before, unit) key
    for m in range(count):
        if rounds[m]:
            newest_round[keys[m]] = m
        else:
            pairs[(key(m - 1), keys[m])] = m
    groups: list[list[int]] = []
    gone: set[int] = set()
    kept: set[int] = set()  # later copies some drop relies on
    for n in range(count):
        if context.under_target(total):
            break
        if protected[n] or n in gone or n in kept:
            continue
        if rounds[n]:
            m = newest_round[keys[n]]
            if m <= n:
                continue
            group = [n]
        else:
            before = n - 1
            if before < 0 or protected[before] or before in gone or before in kept:
                continue
            if plain(n + 1) and key(n + 1) != keys[before]:
                continue  # the reply to this message would land under another question
            m = pairs[(keys[before], keys[n])]
            if m - 1 <= n:  # no later copy, or only one overlapping this pair
                continue
            group = [before, n]
        groups.append(group)
        gone.update(group)
        kept.update(range(m - len(group) + 1, m + 1))
        for i in group:
            start, stop = bounds[i]
            total -= sum(context.message_tokens(msg) for msg in messages[start:stop])
    return groups


def _rounds(spans: UnitSpans) -> list[bool]:
    """:meth:`UnitSpans.is_tool_round` of every unit, in one walk of its bounds."""
    messages = spans.messages
    out: list[bool] = []
    start = 0
    for stop in spans.bounds.stops:
        if stop - start == 1:
            out.append(bool(messages[start].tool_calls))
        else:
            out.append(any(m.tool_calls for m in messages[start:stop]))
        start = stop
    return out
