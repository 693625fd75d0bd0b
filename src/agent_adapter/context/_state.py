"""Compaction state: compact once, then append, so the provider's prompt cache keeps hitting.

An agent sends the same conversation again and again, one round longer. Compressing the
caller's full history again on every call past the threshold moves the drop boundary each
time, so the request's prefix changes and every provider's prompt cache misses (Anthropic
``cache_control``; OpenAI and Gemini cache prefixes automatically; a cached input token costs a
tenth of a fresh one). The peers that keep their own state (Claude Code, LangChain's
summarization middleware, Anthropic's compaction) append after a compaction by construction.

So after a compression the library remembers, for that conversation, the history it
compressed (``original``) and what it sent (``sent``). A later call whose history *extends*
the original (every remembered message is there, in order: the same object or equal content,
checked in full, never judged by a key or the first messages alone) is sent as the
remembered request plus the new messages, unchanged (the same natives: byte-identical when
serialized), as long as that stays at or under the threshold; over it, the compression runs
on that request (earlier notes and summaries are folded, as on any later call), not on the
full history. A history that does not extend the remembered one (edited, rewound, branched)
is compressed fresh, and its state forgotten. Losing the state (a restart, an eviction,
another worker) costs one fresh compression, never a wrong request.

Who holds it: a :class:`~agent_adapter.context.Compactor` (one conversation, an object the
caller makes and keeps), ``CompressingModel``, each integration and ``cliver_core``'s policy
compactor, each in a :class:`CompactionStates` of its own; ``compress_for`` only when given one
(``states=``). Nothing is kept for the process: a function of its arguments stays one.

The state is keyed by the conversation: the caller's ``conversation=`` key, else the run
context's thread id (``RunContext(thread_id=)``; the integrations pass their own thread or
session), else a fingerprint of the history's opening; every key is scoped to the run's owner
(:func:`~agent_adapter.owner_scope`). A key is where to look, never what decides: a key holds
a few *branches*, and a history continues the one whose remembered history (or request) it
holds first, checked in full, so conversations that share a key never take or evict each
other's state. A :class:`CompactionStates` lives in memory, bounded; with ``store=`` (a
``SQLiteStore`` or ``RedisStore``) also in that store, so that every worker serving the
conversation sends the same prefix (its process-independent form is in
:mod:`~agent_adapter.context._state_store`).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._run import owner_scope
from agent_adapter.context._background import PREPARE_AT, PreparedCompaction
from agent_adapter.context._state_store import (
    StateBackend,
    Unshareable,
    backend_for,
    dump_state,
    encode_native,
    load_state,
    native_digest,
    state_version,
)
from agent_adapter.context._stores._base import check_limit, check_seconds
from agent_adapter.context._stores.redis import RedisStore
from agent_adapter.context._stores.sqlite import SQLiteStore
from agent_adapter.context.formats._memo import native_shape

__all__ = [
    "CompactionStates",
    "Found",
    "NativeDigest",
    "StateEntry",
    "conversation_key",
    "default_states",
    "shapes_of",
]


@dataclass(frozen=True, slots=True)
class NativeDigest:
    """A native of a history compressed in another process (a state read from a shared
    store), known by its content digest (see :func:`~._state_store.native_digest`)."""

    digest: str


@dataclass(frozen=True, slots=True)
class StateEntry:
    """One conversation's last compaction.

    Attributes:
        format: the format name the natives are in.
        original: the caller's history the request was built from (its natives, oldest
            first); in a state read from a shared store, a :class:`NativeDigest` each.
        sent: the request that was sent for it: natives, oldest first (in a state read from
            a shared store, ``None`` in the places of the caller's natives).
        sent_from: for each of ``sent``, the index in ``original`` of the caller's native it
            is (sent as the caller's own object), or ``-1`` for a native the library wrote (a
            note, a summary, a shortened result).
        tokens: what ``sent`` counts with the policy's counter.
        shapes: for each of ``original``, its top-level fingerprint when it was remembered
            (its fields' values and the lengths of its list fields; ``None`` for an
            immutable native or a state read from a shared store): a native the caller
            edited in place since (``msg["content"] = ...``, a block appended to its
            content) no longer matches, so the history is compressed fresh.
        hold_until: after a compaction that left the request over the target (it could
            not free enough: the protected part is too big, or the steps' settings keep
            more), the request size up to which later calls send the request as it is, over
            the threshold or not (unless over the window): the next compaction waits until
            the request has grown by the gap (threshold - target), so no compaction is ever
            followed by another on the next call. ``0``: no hold (the threshold decides).
    """

    format: str
    original: tuple[Any, ...]
    sent: tuple[Any, ...]
    sent_from: tuple[int, ...]
    tokens: int = 0
    shapes: tuple[Any, ...] = ()
    hold_until: int = 0
    #: the caller's natives last found to match the digests of ``original``
    _matched: list[tuple[Any, ...]] = field(
        default_factory=list, init=False, repr=False, compare=False
    )

    def extended_by(self, messages: Sequence[Any]) -> bool:
        """True when ``messages`` holds every remembered message first, in order (the same
        object, or an equal one; for a :class:`NativeDigest`, a native of that digest),
        checked in full."""
        n = len(self.original)
        if len(messages) < n:
            return False
        if self._matched and _same_objects(self._matched[0], messages) and not self.shapes:
            return True
        digests = False
        shapes = self.shapes if len(self.shapes) == n else None
        for k, (mine, theirs) in enumerate(zip(self.original, messages, strict=False)):
            if mine is theirs:
                shape = None if shapes is None else shapes[k]
                if shape is not None and native_shape(theirs) != shape:
                    return False  # edited in place since it was remembered
                continue
            if isinstance(mine, NativeDigest):
                digests = True
                if native_digest(theirs) != mine.digest:
                    return False
            elif not _equal(mine, theirs):
                return False
        if digests:
            self._matched[:] = [tuple(messages[:n])]
        return True

    def sent_extended_by(self, messages: Sequence[Any]) -> bool:
        """True when ``messages`` opens with every native of :attr:`sent` (the caller kept
        what was sent as its history), checked in full; never for a state read from a
        shared store (its caller's natives are not known here)."""
        sent = self.sent
        if len(messages) < len(sent) or any(n is None for n in sent):
            return False
        return all(a is b or _equal(a, b) for a, b in zip(sent, messages, strict=False))

    def matched(self) -> tuple[Any, ...]:
        """The caller's natives known to be :attr:`original` (themselves, or the natives last
        found to match its digests), oldest first; ``()`` when none are known."""
        if self._matched:
            return self._matched[0]
        if any(isinstance(n, NativeDigest) for n in self.original):
            return ()
        return self.original

    @property
    def compacted(self) -> bool:
        """True when the request sent was not the caller's history as it was."""
        return len(self.sent_from) != len(self.original) or any(
            j != i for i, j in enumerate(self.sent_from)
        )

    def request(self, messages: Sequence[Any]) -> tuple[list[Any], list[int]]:
        """The request for ``messages`` (which extends :attr:`original`): the remembered
        request with the caller's current objects in the places of theirs, then the new
        messages; and where each came from (an index in ``messages``, or ``-1``)."""
        out = [
            messages[j] if j >= 0 else native
            for native, j in zip(self.sent, self.sent_from, strict=True)
        ]
        n = len(self.original)
        out.extend(messages[n:])
        return out, [*self.sent_from, *range(n, len(messages))]


def shapes_of(natives: Sequence[Any]) -> tuple[Any, ...]:
    """:attr:`StateEntry.shapes` for ``natives``: the memo's top-level fingerprint of each
    (``None`` for an immutable ``Message``)."""
    return tuple(map(native_shape, natives))


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # an object whose == raises is no equal content
        return False


def _same_objects(known: tuple[Any, ...], messages: Sequence[Any]) -> bool:
    return len(messages) >= len(known) and all(
        a is b for a, b in zip(known, messages, strict=False)
    )


@dataclass(slots=True)
class _Record:
    """A state kept in this process, and what its shared copy needs."""

    entry: StateEntry
    written: float  # time.monotonic() of the put (or of the read from the shared store)
    version: str | None = None  # the shared store holds this state as this version
    digests: tuple[str, ...] = ()  # of entry.original's natives (shared stores only)
    fragments: dict[int, tuple[Any, str]] = field(default_factory=dict)  # id -> (native, JSON)
    pending: tuple[str, bytes] | None = None  # (version, bytes) the store missed


@dataclass(frozen=True, slots=True)
class Found:
    """The branch of a conversation a history continues (see :meth:`CompactionStates.find`).

    Attributes:
        slot: the branch's slot under the conversation's key.
        entry: its state.
        how: ``"extends"`` (the history holds the remembered history first) or ``"sent"``
            (the history holds the request sent for it first: the caller kept what was sent).
    """

    slot: int
    entry: StateEntry
    how: str


def _continues(entry: StateEntry, messages: Sequence[Any], fmt: str) -> str | None:
    """How ``messages`` continues ``entry`` (``"extends"``, ``"sent"``), or ``None``."""
    if entry.format != fmt:
        return None
    if entry.extended_by(messages):
        return "extends"
    if entry.compacted and entry.sent_extended_by(messages):
        return "sent"
    return None


class CompactionStates:
    """Where conversations' compaction states live: in memory, bounded, in this process; or
    also in a store that several workers share, so that a conversation served by any worker
    keeps one prefix.

    Nothing in the library keeps one for the process: a :class:`~agent_adapter.context.Compactor`
    makes its own (or takes yours), and so do ``CompressingModel``, each integration and
    ``cliver_core``'s policy compactor; ``compress_for`` uses one only when given one
    (``states=``). Pass your own to bound it differently, to keep states apart (one per
    tenant, say), or to share them between workers.

    **Branches.** Two conversations can share a key (the same id given to both, or no id and
    the same opening: a support bot whose users all start with "hi"). A key holds up to
    ``branches`` states, each found by what it remembers (a history continues the branch
    whose remembered history, or request, it holds first, checked in full), so conversations
    that share a key never take each other's state nor evict each other's: each keeps its own
    branch (and so its prompt cache). One limit: two conversations identical up to and
    through a compaction share that branch; the first to go on replaces it, and the other
    compresses fresh once (a cache miss, never a mixed request). A history that continues
    no branch is compressed fresh and takes a new branch: an empty slot, else the least
    recently used one (an edited or rewound history takes a branch too; the old one ages
    out).

    **Shared** (``store=SQLiteStore(path)`` for the processes of one machine,
    ``store=RedisStore(url)`` for any worker): the states of this process stay in memory in
    front (the caller's objects, checked by identity); a history that continues a branch
    this process knows asks the store for that branch's version (one small read: a
    ``SELECT`` of one column, a ``GETRANGE`` of 32 bytes) and uses the local copy while it is
    current, else reads the state the store holds (one written by another worker); a history
    that continues none asks for each branch of its key. Each put writes through (the whole
    state: one content digest per native of the history, the natives the library wrote, see
    :mod:`~agent_adapter.context._state_store`); ``forget`` deletes in both. States are
    scoped to the run's owner as the tool results are (the owner is part of the key), kept
    apart from the tool results in the store (table ``compaction_states``; Redis keys
    ``<prefix>compaction_state:<sha256>``), and expire ``ttl_seconds`` after their last write.
    The key also names the policy (compress_for's policy key): module-level functions and
    classes by their name, the library's counters (``tiktoken_counter("o200k_base")``) and
    stores by what they are, so workers agree; a policy whose settings hold objects known only
    by their identity in one process (a closure or lambda as counter, a scorer, a model) is
    another policy in each process, and its states are not shared.

    The costs: a put digests the natives new since this process's last put for that
    branch (a canonical serialization and BLAKE2b of each) and packs the natives the
    library wrote that are new (rebuilt once to check them); a worker that reads another's
    state digests the caller's natives of the remembered history once (only that prefix,
    never the new natives), then knows them by identity. The store is called synchronously
    (as compress_for reads and writes its states): on an event loop each call holds the loop
    for one round trip to the store.

    **Never a wrong request.** A history is taken to extend a shared state only when every
    remembered native has its digest (equal content, types included); a state that cannot be
    shared (a native with no exact JSON form: a set, an object that is neither a dict, a
    pydantic model nor a ``Message``, or one that does not rebuild the same) is kept in this
    process only, and the store's copy of that branch is deleted, so other workers
    compress it fresh. A store that fails (Redis down, a locked or missing file) never fails
    a compression: its state is a lost one (a worker with no copy of its own compresses
    fresh, one with a copy uses it, as without a store), no report or text says so, and the
    store is left alone for ``retry_after_seconds``; a state written meanwhile is written
    when the store answers again.

    Args:
        max_conversations: states (branches) kept in this process at most; the least
            recently used goes first (a shared store still holds it).
        store: a :class:`~agent_adapter.context.SQLiteStore` or
            :class:`~agent_adapter.context.RedisStore` to share the states in; ``None``:
            in this process only.
        ttl_seconds: how long a state lives after its last write (``None``: until it is
            forgotten, evicted or replaced; a shared store then keeps one state per
            branch for good).
        retry_after_seconds: how long a failed store is left alone.
        branches: states kept under one key at most (see **Branches**).
        prepare_at: the share of the threshold at which a conversation's compaction starts
            in the background, when a step of the policy writes with a model (see
            :mod:`agent_adapter.context._background`); ``None``: never in the background.

    Raises:
        ConfigError: max_conversations or branches is not an int >= 1, a time is not a
            number > 0, prepare_at not None or a number in (0, 1), or store is neither
            store.
    """

    def __init__(
        self,
        max_conversations: int = 1024,
        *,
        store: SQLiteStore | RedisStore | None = None,
        ttl_seconds: float | None = None,
        retry_after_seconds: float = 5.0,
        branches: int = 4,
        prepare_at: float | None = PREPARE_AT,
    ) -> None:
        check_limit("CompactionStates.max_conversations", max_conversations)
        check_limit("CompactionStates.branches", branches)
        if prepare_at is not None and (
            isinstance(prepare_at, bool)
            or not isinstance(prepare_at, int | float)
            or not 0 < prepare_at < 1
        ):
            raise ConfigError(
                f"CompactionStates.prepare_at must be None or a number in (0, 1), got "
                f"{prepare_at!r}"
            )
        self.prepare_at = prepare_at
        self.max_conversations = max_conversations
        self.branches = branches
        self.ttl_seconds = (
            None
            if ttl_seconds is None
            else check_seconds("CompactionStates.ttl_seconds", ttl_seconds)
        )
        self.retry_after_seconds = check_seconds(
            "CompactionStates.retry_after_seconds", retry_after_seconds
        )
        self.store = store
        self._shared: StateBackend | None = None if store is None else backend_for(store)
        self._records: OrderedDict[str, _Record] = OrderedDict()  # by branch name
        self._lock = threading.Lock()
        self._down_until = 0.0
        #: compactions prepared in the background, by conversation key (this process only)
        self._prepared: OrderedDict[str, PreparedCompaction] = OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    def _name(self, key: str, slot: int) -> str:
        """The name branch ``slot`` of conversation ``key`` is kept under."""
        return key if slot == 0 else f"{key}#branch:{slot}"

    def _local(self, name: str, now: float) -> _Record | None:
        """The live local record of ``name`` (expired ones dropped), marked recently used."""
        with self._lock:
            rec = self._records.get(name)
            if rec is not None and self._expired(rec, now):
                del self._records[name]
                rec = None
            if rec is not None:
                self._records.move_to_end(name)
        return rec

    def _read(self, name: str, now: float) -> StateEntry | None:
        """The state of branch ``name``: the local copy, or the shared store's when newer."""
        rec = self._local(name, now)
        if self._shared is None or now < self._down_until:
            return None if rec is None else rec.entry
        return self._shared_get(self._shared, name, rec)

    def get(self, key: str) -> StateEntry | None:
        """The most recently used state of conversation ``key`` (any branch), or ``None``."""
        now = time.monotonic()
        best: tuple[float, StateEntry] | None = None
        for slot in range(self.branches):
            name = self._name(key, slot)
            entry = self._read(name, now)
            rec = self._records.get(name)
            if entry is not None and rec is not None and (best is None or rec.written > best[0]):
                best = (rec.written, entry)
        return None if best is None else best[1]

    def find(self, key: str, messages: Sequence[Any], format: str) -> Found | None:
        """The branch of conversation ``key`` that ``messages`` continues (its remembered
        history, or the request sent for it, is what ``messages`` opens with: checked in
        full), the longest when several do; ``None`` when none does."""
        now = time.monotonic()
        best: Found | None = None
        tried: set[int] = set()
        # the branches this process knows first: most recently used first
        with self._lock:
            local = [
                (slot, rec)
                for slot in range(self.branches)
                if (rec := self._records.get(self._name(key, slot))) is not None
            ]
        local.sort(key=lambda sr: -sr[1].written)
        for slot, rec in local:
            if _continues(rec.entry, messages, format) is None:
                continue
            tried.add(slot)
            entry = self._read(self._name(key, slot), now)
            how = None if entry is None else _continues(entry, messages, format)
            if entry is not None and how is not None:
                best = _longer(best, Found(slot, entry, how))
        if best is not None or self._shared is None:
            return best
        for slot in range(self.branches):  # the branches other workers wrote
            if slot in tried:
                continue
            entry = self._read(self._name(key, slot), now)
            how = None if entry is None else _continues(entry, messages, format)
            if entry is not None and how is not None:
                best = _longer(best, Found(slot, entry, how))
        return best

    def free_slot(self, key: str) -> int:
        """The slot a new branch of ``key`` takes: one this process holds no state in (and,
        with a shared store, none is stored in), else the least recently used."""
        now = time.monotonic()
        oldest: tuple[float, int] | None = None
        for slot in range(self.branches):
            name = self._name(key, slot)
            rec = self._local(name, now)
            if rec is None:
                if self._shared is None or now < self._down_until:
                    return slot
                try:
                    if self._shared.version(name) is None:
                        return slot
                except Exception:  # a failed store: as if it held nothing
                    self._failed()
                    return slot
                continue
            if oldest is None or rec.written < oldest[0]:
                oldest = (rec.written, slot)
        return 0 if oldest is None else oldest[1]

    def put(self, key: str, entry: StateEntry, *, slot: int | None = None) -> None:
        """Remember ``entry`` as a state of conversation ``key``, in branch ``slot`` (``None``:
        a new branch, see :meth:`free_slot`), and write it through to the shared store."""
        if slot is None:
            slot = self.free_slot(key)
        elif not 0 <= slot < self.branches:
            raise ConfigError(f"CompactionStates.put: slot must be in 0..{self.branches - 1}")
        name = self._name(key, slot)
        now = time.monotonic()
        rec = _Record(entry, now)
        if self._shared is None:
            self._remember(name, rec)
            return
        with self._lock:
            prev = self._records.get(name)
        try:
            payload: bytes | None = self._payload(name, entry, prev, rec)
        except Unshareable:
            payload = None
        self._remember(name, rec)
        version = None if payload is None else state_version(payload)
        if now < self._down_until:
            rec.pending = None if payload is None or version is None else (version, payload)
            return
        try:
            if payload is None or version is None:  # kept here only: no stale shared copy
                self._shared.delete(name)
            else:
                self._shared.save(name, version, payload, self.ttl_seconds)
                rec.version = version
        except Exception:  # a failed store is a lost state, never a failed compression
            self._failed()
            rec.pending = None if payload is None or version is None else (version, payload)

    def prepared(self, key: str) -> PreparedCompaction | None:
        """The compaction of conversation ``key`` prepared in the background, if any (see
        :mod:`agent_adapter.context._background`)."""
        with self._lock:
            return self._prepared.get(key)

    def keep_prepared(self, key: str, job: PreparedCompaction) -> None:
        """Hold ``job`` as conversation ``key``'s prepared compaction (one a conversation:
        an earlier one is cancelled; the least recently started goes past
        ``max_conversations``)."""
        with self._lock:
            old = self._prepared.pop(key, None)
            self._prepared[key] = job
            evicted = []
            while len(self._prepared) > self.max_conversations:
                evicted.append(self._prepared.popitem(last=False)[1])
        for gone in [old, *evicted]:
            if gone is not None and gone is not job:
                gone.cancel()

    def drop_prepared(self, key: str, job: PreparedCompaction | None = None) -> None:
        """Forget conversation ``key``'s prepared compaction (only ``job``, when given),
        cancelling its task when it still runs."""
        with self._lock:
            held = self._prepared.get(key)
            if held is None or (job is not None and held is not job):
                return
            del self._prepared[key]
        held.cancel()

    def forget(self, key: str | None = None) -> None:
        """Forget conversation ``key``, every branch (``None``: every conversation; with a
        shared store, every state it holds, every owner's), and its prepared compaction."""
        if key is None:
            for name in list(self._prepared):
                self.drop_prepared(name)
        else:
            self.drop_prepared(key)
        names = [] if key is None else [self._name(key, slot) for slot in range(self.branches)]
        with self._lock:
            if key is None:
                self._records.clear()
            else:
                for name in names:
                    self._records.pop(name, None)
        if self._shared is None or time.monotonic() < self._down_until:
            return
        try:
            if key is None:
                self._shared.clear()
            else:
                for name in names:
                    self._shared.delete(name)
        except Exception:
            self._failed()

    def _expired(self, rec: _Record, now: float) -> bool:
        return self.ttl_seconds is not None and now - rec.written > self.ttl_seconds

    def _failed(self) -> None:
        self._down_until = time.monotonic() + self.retry_after_seconds

    def _remember(self, key: str, rec: _Record) -> None:
        with self._lock:
            self._records[key] = rec
            self._records.move_to_end(key)
            while len(self._records) > self.max_conversations:
                self._records.popitem(last=False)

    def _drop(self, key: str, rec: _Record | None) -> None:
        with self._lock:
            if rec is not None and self._records.get(key) is rec:
                del self._records[key]

    def _shared_get(self, shared: StateBackend, key: str, rec: _Record | None) -> StateEntry | None:
        """:meth:`get` past the local copy: the store's state when it is another."""
        local = None if rec is None else rec.entry
        alone = rec is not None and rec.version is None  # a state the store does not hold
        try:
            if rec is not None and rec.pending is not None:  # written while the store failed
                version, payload = rec.pending
                shared.save(key, version, payload, self.ttl_seconds)
                rec.pending, rec.version = None, version
                return local
            if rec is not None:
                remote = shared.version(key)
                if remote is not None and remote == rec.version:
                    return local
                if remote is None:
                    if not alone:  # expired, or forgotten by another worker
                        self._drop(key, rec)
                        return None
                    return local
            loaded = shared.load(key)
        except Exception:  # a failed store is a lost state, never a failed compression
            self._failed()
            return local
        if loaded is not None:
            try:
                state = load_state(key, loaded[1])
            except Exception:  # another layout, or not ours: as if there were none
                loaded = None
        if loaded is None:
            if alone:
                return local
            self._drop(key, rec)
            return None
        entry = StateEntry(
            state.format,
            tuple(NativeDigest(d) for d in state.digests),
            state.sent,
            state.sent_from,
            state.tokens,
            hold_until=state.hold_until,
        )
        fragments = {
            id(n): (n, f) for n, f in zip(state.sent, state.fragments, strict=True) if f is not None
        }
        self._remember(key, _Record(entry, time.monotonic(), loaded[0], state.digests, fragments))
        return entry

    def _payload(self, key: str, entry: StateEntry, prev: _Record | None, rec: _Record) -> bytes:
        """The shared form of ``entry``, reusing ``prev``'s digests and packed natives for
        the same objects; fills ``rec``'s.

        Raises:
            Unshareable: a native has no exact form.
        """
        known: tuple[Any, ...] = () if prev is None else prev.entry.matched()
        old = () if prev is None else prev.digests
        digests: list[str] = []
        for i, native in enumerate(entry.original):
            if isinstance(native, NativeDigest):
                digests.append(native.digest)
                continue
            if i < len(known) and i < len(old) and known[i] is native:
                digests.append(old[i])
                continue
            digest = native_digest(native)
            if digest is None:
                raise Unshareable(f"a {type(native).__name__} with no digest")
            digests.append(digest)
        rec.digests = tuple(digests)
        fragments: list[str | None] = []
        cache = {} if prev is None else prev.fragments
        for native, j in zip(entry.sent, entry.sent_from, strict=True):
            if j >= 0:
                fragments.append(None)
                continue
            hit = cache.get(id(native))
            text = hit[1] if hit is not None and hit[0] is native else encode_native(native)
            rec.fragments[id(native)] = (native, text)
            fragments.append(text)
        return dump_state(
            key, entry.format, entry.tokens, digests, entry.sent_from, fragments, entry.hold_until
        )


def _longer(best: Found | None, found: Found) -> Found:
    """Of two branches a history continues, the one that remembers more of it (a branch it
    extends before one whose request it holds)."""
    if best is None:
        return found
    rank = (found.how == "extends", len(found.entry.original))
    return found if rank > (best.how == "extends", len(best.entry.original)) else best


_DEFAULT: CompactionStates | None = None


def default_states() -> CompactionStates:
    """A process-wide :class:`CompactionStates`, made on first use, for callers that ask for
    one by passing it (``compress_for(..., states=default_states())``). No entry point of
    the library uses it on its own: a process-wide memory that changed a call's output
    would make a function of its arguments depend on unrelated earlier calls."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = CompactionStates()
    return _DEFAULT


#: How many of the first messages a conversation without a thread id is known by.
_FINGERPRINT_MESSAGES = 3


def _fingerprint_of(native: Any) -> bytes:
    """Content of one native, the same in every process (never an object's address)."""
    if isinstance(native, Message):
        calls = ",".join(c.id for c in native.tool_calls)
        text = f"{native.role}\x00{native.text}\x00{calls}\x00{native.tool_call_id or ''}"
        return text.encode("utf-8", "replace")
    dump = getattr(native, "model_dump", None)
    if callable(dump):
        try:
            native = dump(mode="json")
        except Exception:
            return type(native).__name__.encode()
    try:
        if isinstance(native, dict | list):
            return json.dumps(native, sort_keys=True, default=str).encode("utf-8", "replace")
        content = getattr(native, "content", None)  # a LangChain message
        return f"{type(native).__name__}\x00{content!s}".encode("utf-8", "replace")
    except (RecursionError, ValueError, TypeError):
        # too deep to serialize (the converter names it as a ConfigError later): a key of
        # its kind, which the full check of the history never takes for another's
        return type(native).__name__.encode()


def conversation_key(
    natives: Sequence[Any], format: str, ctx: Any = None, conversation: str | None = None
) -> str:
    """The key of the conversation of ``natives``: ``conversation``, else a fingerprint of
    its opening (its system messages and the first message after them), within the run's
    owner scope (:func:`~agent_adapter.owner_scope`: the run context's thread id, else its
    run id), so two agents of one thread (a sub-agent) keep states of their own."""
    scope = owner_scope(ctx)
    if conversation is not None:
        return f"{scope}|key:{conversation}|{format}"
    digest = hashlib.blake2b(digest_size=16)
    for native in _opening(natives):
        digest.update(_fingerprint_of(native))
        digest.update(b"\xff")
    # within one thread (the scope holds it), agents with other system prompts or tasks (a
    # sub-agent) keep states of their own
    return f"{scope}|first:{digest.hexdigest()}|{format}"


def _opening(natives: Sequence[Any]) -> Sequence[Any]:
    """What the first call of a conversation already holds, and every later one too: its
    leading system messages and the first message after them (the task), at most
    ``_FINGERPRINT_MESSAGES``."""
    n = 0
    for native in natives[:_FINGERPRINT_MESSAGES]:
        n += 1
        if _role(native) not in ("system", "developer"):
            break
    return natives[:n]


def _role(native: Any) -> Any:
    if isinstance(native, Message):
        return native.role
    if isinstance(native, dict):
        return native.get("role")
    role = getattr(native, "role", None)
    if role is None:  # a LangChain message: its type
        role = getattr(native, "type", None)
    return role
