"""What every step is: the protocol, the base class, and the context a step reads."""

from __future__ import annotations

import dataclasses
import math
import types
from abc import ABC, abstractmethod
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context._provenance import same_objects
from agent_adapter.context._steps._continuation import Continuation
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context._units import Protection, Unit, UnitSpans, unit_spans

__all__ = [
    "BaseCompressionStep",
    "CompressionStep",
    "StepContext",
    "first_non_system",
    "last_non_system",
    "spans_of",
]


@dataclass(eq=False)
class StepContext:
    """What a step may read during one compress call; the same object for every step.

    Attributes:
        target_tokens: steps stop as soon as the list is at or under this.
        threshold_tokens: the trigger that started this compression.
        protection: fixed on the compression's input.
        meter: the policy's counter with a per-message cache.
        ctx: the caller's run context (ids, owner scope), or ``None``.
        summary_cost_usd: what model calls made by steps cost so far, in USD.
        summary_probes / summary_probes_found: fidelity probes of the model summaries made
            so far, and how many the model named (the report's).
        summary_invalid_replies: summarizer replies that were no usable summary.
        continuation: the conversation's own request, over the compression's input, that a
            summary request may continue so the provider reads it from its prompt cache
            (see :mod:`agent_adapter.context._steps._continuation`); ``None`` when the
            compression has no such request (``compress``, ``compress_for``).
        names_target_tokens: the target the room for names in what a step adds (a
            ``RemoveOldMessages`` note) is scaled from, when it is not ``target_tokens``
            (``None``): a cost-aware depth (``CompressionPolicy(depth="cost")``) compacts
            deeper than the fixed depth but gives its notes the fixed depth's room, so a
            deeper compaction names as much of what it removed (issue 35: depth must not cost
            names).
    """

    target_tokens: int
    threshold_tokens: int
    protection: Protection
    meter: TokenMeter
    ctx: Any = None
    continuation: Continuation | None = None
    names_target_tokens: int | None = None
    summary_cost_usd: float = field(default=0.0)
    summary_probes: int = field(default=0)
    summary_probes_found: int = field(default=0)
    summary_invalid_replies: int = field(default=0)
    #: the last list split into units (its spans hold it, by its messages' identities) and,
    #: once asked for, its units: the steps of a pass mostly split the list the step before
    #: left unchanged
    _split: tuple[UnitSpans, list[Unit] | None] | None = field(default=None, init=False, repr=False)
    #: the compression's input by origin (``None``: an origin it gives to different texts)
    _originals: dict[int, Message | None] = field(default_factory=dict, init=False, repr=False)
    #: origins whose text a step of the library that keeps no copy shortened
    _shortened: set[int] = field(default_factory=set, init=False, repr=False)

    def set_originals(self, messages: Sequence[Message]) -> None:
        """Make ``messages`` (the compression's input, as the caller gave it) what
        :meth:`original_of` answers from; the engine calls it once a compression starts."""
        originals: dict[int, Message | None] = {}
        for m in messages:
            if m.origin in originals:
                first = originals[m.origin]
                if first is not None and first.text != m.text:
                    originals[m.origin] = None  # two texts under one origin: neither is known
            else:
                originals[m.origin] = m
        self._originals = originals

    def _input_origins(self) -> Container[int]:
        """The origins of the compression's input (what :meth:`set_originals` was given):
        the keys of what :meth:`original_of` answers from, not a set of their own (100,000
        origins are 4 MB a set)."""
        return self._root()._originals.keys()

    def _root(self) -> StepContext:
        context: StepContext = self
        while (parent := getattr(context, "_parent", None)) is not None:
            context = parent
        return context

    def mark_shortened(self, message: Message) -> None:
        """Record that a step of the library that keeps no copy (``CutLongMessages``,
        ``ShrinkToolResults`` without a store, ``SummarizeLongMessage`` without a store,
        ``if_still_too_long="cut"``) shortened ``message``'s text: :meth:`original_of`
        answers with the caller's text for it."""
        self._root()._shortened.add(message.origin)

    def original_of(self, message: Message) -> Message | None:
        """The caller's message that ``message`` stands for in this compression: the input
        message with its origin (``message`` itself when no step changed it; the text as the
        caller gave it when a library step that keeps no copy shortened it, see
        :meth:`mark_shortened`), or ``None`` when that is unknown (a message a step added, an
        origin the input gives to two different texts, a context no compression set up, as in
        a step's direct ``apply``) or not to be told: a text your own step changed (a
        redaction, say) is saved as your step left it, never the text it replaced. A saving
        step saves this text, never a copy an earlier step shortened. A pass's context
        answers from the compression's own context, which it wraps."""
        root = self._root()
        original = root._originals.get(message.origin)
        if original is None or original is message or message.origin in root._shortened:
            return original
        return None

    def add_summary_cost(self, usd: float) -> None:
        """Record what a model call made by a step cost, in USD.

        Raises:
            ConfigError: usd is negative or not a finite number.
        """
        if (
            isinstance(usd, bool)
            or not isinstance(usd, int | float)
            or not math.isfinite(usd)
            or usd < 0
        ):
            raise ConfigError(f"add_summary_cost: usd must be a finite number >= 0, got {usd!r}")
        self.summary_cost_usd += float(usd)

    def add_summary_probes(self, probes: int, found: int) -> None:
        """Record a model summary's fidelity check: ``probes`` looked up, ``found`` named.

        Raises:
            ConfigError: a count is not an int, negative, or ``found > probes``.
        """
        for name, value in (("probes", probes), ("found", found)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"add_summary_probes: {name} must be an int >= 0, got {value!r}")
        if found > probes:
            raise ConfigError(f"add_summary_probes: found={found} is over probes={probes}")
        self.summary_probes += probes
        self.summary_probes_found += found

    def add_invalid_summary(self) -> None:
        """Record a summarizer reply that was no usable summary (not JSON of the schema, cut
        off at its token limit, empty): the step skipped it."""
        self.summary_invalid_replies += 1

    def is_protected(self, message: Message) -> bool:
        """True when the step must not change or remove ``message``."""
        return self.protection.is_protected(message)

    def message_tokens(self, message: Message) -> int:
        """Tokens of one message (cached); steps keep a running total with these."""
        return self.meter.of(message)

    def tokens(self, messages: Sequence[Message]) -> int:
        """Tokens of the whole list, with the policy's counter."""
        return self.meter.total(list(messages))

    def under_target(self, tokens: int) -> bool:
        """True once ``tokens`` is at or under the target: the step must stop."""
        return tokens <= self.target_tokens

    def units(self, messages: Sequence[Message]) -> list[Unit]:
        """``messages`` as atomic units, each flagged protected or not."""
        spans = spans_of(self, messages)
        last = self._split
        if last is not None and last[0] is spans and last[1] is not None:
            return list(last[1])
        units = spans.units()
        self._split = (spans, units)
        return list(units)


def spans_of(context: StepContext, messages: Sequence[Message]) -> UnitSpans:
    """``context.units(messages)`` as a :class:`~agent_adapter.context._units.UnitSpans`
    (no :class:`Unit` object a unit: what the library's own steps walk), shared with
    ``units`` by the same cache."""
    last = context._split
    if last is not None and same_objects(last[0].messages, messages):
        return last[0]
    spans = unit_spans(messages, context.protection)
    context._split = (spans, None)
    return spans


def first_non_system(messages: Sequence[Message], n: int) -> list[int]:
    """Indexes of the first ``n`` non-system messages (the task statement, for
    ``keep_first``)."""
    out: list[int] = []
    for i, m in enumerate(messages):
        if len(out) >= n:
            break
        if m.role != "system":
            out.append(i)
    return out


def last_non_system(messages: Sequence[Message], n: int) -> set[int]:
    """Indexes of the last ``n`` non-system messages (``keep_last``): with ``k`` non-system
    messages, those from index ``k - n`` of their list on, as a slice takes it (when
    ``n > k``, a negative start: the last ``n - k`` of them, or all of them when that is
    more than ``k``), ``set()`` for ``n == 0``. Found walking from the end: only the
    messages it returns (and the system messages among them) are read, unless ``n`` is
    more than half of them."""
    if not n:
        return set()
    found: list[int] = []
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role != "system":
            found.append(i)
            if len(found) == n:
                return set(found)
    k = len(found)  # every non-system message, newest first; fewer than n
    start = k - n  # negative: a slice takes the last -start of them (or all)
    return set(found[:-start] if -start <= k else found)


@runtime_checkable
class CompressionStep(Protocol):
    """One stage of a compression pipeline.

    ``apply`` returns the new message list. It must stop as soon as the conversation is under
    ``context.target_tokens``, and should leave protected messages and tool rounds alone; the
    invariant guard reverts any change that breaks a rule anyway.
    """

    @property
    def name(self) -> str:
        """The step's name in reports and logs."""
        ...

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """The compressed list."""
        ...


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # JSON has no NaN or infinity: "nan", "inf", "-inf"
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    identity = getattr(value, "config_identity", None)
    if callable(identity) and not isinstance(value, type):
        return f"<{identity()}>"  # what names it in every process (a store's file or server)
    name = getattr(value, "__qualname__", None) or type(value).__qualname__
    module = getattr(value, "__module__", None) or type(value).__module__
    if isinstance(value, types.FunctionType | type) and "<" not in name:
        return f"<{module}.{name}>"  # a module-level function or class: the same in any process
    return f"<{module}.{name} at {id(value):#x}>"


class BaseCompressionStep(ABC):
    """Base class for steps: a fixed name, apply, and config() for cache keys and logs."""

    name: ClassVar[str] = "step"

    @abstractmethod
    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """The compressed list; see CompressionStep."""

    def config(self) -> dict[str, Any]:
        """The step's settings as JSON-safe values; objects by their identity (their
        ``config_identity()`` where they have one), module-level functions and classes by
        their name."""
        if dataclasses.is_dataclass(self):
            items = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        else:
            items = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        return {"step": self.name, **{k: _json_safe(v) for k, v in items.items()}}
