"""How deep to compact, and whether to compact now, from the prompt cache's prices.

``CompressionPolicy(depth="cost")`` derives the target of each compaction instead of taking
the fixed 3/4 of the threshold, and defers a compaction that cannot pay for itself. Both
decisions are pure functions of a handful of numbers (this module), so the engine, the
report and the tests share one formula.

**The prices.** With a prompt cache, a request's prefix equal to the previous request's is
read at the cached price and the rest is written at the cache-write price. Per fresh input
token (the uncached input price ``p``): reads cost ``rho = cached_input / p`` and writes
``omega = cache_write / p``. Anthropic's pricing page: cache reads 0.1x the base input price,
5-minute cache writes 1.25x (https://platform.claude.com/docs/en/about-claude/pricing, "Cache
write ... 1.25x", "Cache hits and refreshes ... 0.1x"); OpenAI: cached input 0.1x for GPT-5
and no write surcharge (omega = 1). Without prices given, Anthropic's ratios are used (the
dearest write surcharge: a depth safe for both).

**The model.** A conversation grows by ``g`` tokens a call (its own rate: its tokens over
its calls). A compaction at the threshold ``T`` (the window ``W`` when that is smaller) to a
depth ``D`` rewrites the ``D`` kept tokens (``omega * D``); the request then grows back from
``D`` to ``T`` over ``(T - D) / g`` calls, each reading its prefix from the cache. Per call,
in steady state::

    c(D) = rho * (T + D) / 2  +  omega * g * D / (T - D)        (+ omega * g, the new tokens)

The first term is the cache reads (about 70% of an agent session's bill), the second the
compaction's rewrite spread over the calls it serves. ``c`` falls all the way down as ``D``
falls, but what is removed is lost (names, results); the second term's slope
``omega * g * T / (T - D)**2`` falls with ``D`` too. The target is the depth where the two
slopes meet: deeper than it, a token more of depth saves no more on rewrites than half its
read (``rho / 2``); shallower, rewrites dominate and depth pays more than it reads::

    T - D*  =  sqrt(2 * omega * g * T / rho)         (the square-root rule of reorder cost)

clamped to ``[T / 10, 3 T / 4]`` (never shallower than the fixed default; how deep it may
really go is the names floor's to say, below). With Anthropic's ratios (``omega / rho =
12.5``) a conversation of ``g = T / 100`` a call goes to ``T / 2``; one of ``g = T / 45``
goes to a quarter, one of ``g = T / 30`` or more to the tenth; one of ``g = T / 400`` or less
stays at 3/4. (The clamp was a quarter until the names floor below existed; with the floor
deciding, a tenth cost 0.70x -> 0.62x of the fixed depth on Claude Code sessions at 60k, and
the one held-out run at 20k whose single compaction fell on its last call went from 1.03x to
0.99x of sending everything, its rewrite smaller: ``python bench/cache.py --depth``, names
unchanged on every held-out run.)

**Depth must not cost names** (issue 35: the share of the history's file paths and error
names still named in each request after the first compaction must not fall below the fixed
depth's). Two things the engine does with a derived target (``_engine._names_floor``): the
notes ``RemoveOldMessages`` leaves keep the room of names the fixed depth's target gives them
(``StepContext.names_target_tokens``; that room is 5% of the target, so a quarter-deep
target gave a third of it; in proportion to the depth since, ``names_room_tokens``); and
the target is never set below what the compaction reaches
keeping the opening (system prompt, task), the protected messages and the recency window plus
one such note: below that floor a deeper target frees nothing more of the old history, it
only squeezed the notes to fit (a note then lists ``+N more`` or the count alone) and sent the
recency window's turns after the rest. Measured (``python bench/cache.py --depth``, held-out
mini-swe-agent runs at a 10k budget): the worst run's paths still named went from -32.4 to
-6.6 points against the fixed depth and its error lines from -37.5 to -16.7, at a median
cost of 0.72x -> 0.74x of it (never above the fixed depth nor sending everything).

**Deferring is decided at the formula's target**, before the names floor (below) may raise
it. Deciding at the raised target was measured and rejected: the floor counts the newest
turns at their full size, which the other steps still shrink, so the payback it gives is too
long and long conversations deferred compactions they then paid for (a tuning run cost 1.12x
the fixed depth, the tuning median 0.71x -> 0.83x; ``python bench/cache.py --depth``). The
report's target is the one the compaction kept; ``explain()`` says so when the floor raised it.

**Deferring.** The compaction call writes the ``D`` tokens it keeps (``omega * D``) where the
request as it is would read its cached prefix and write its new call (``rho * (S - g) + omega
* g``; ``S``: the request's tokens); every later call saves ``rho * (S - D)``. Of the kept
tokens, the opening a compaction keeps unchanged at the request's start (``H``: the messages
before the first assistant turn, system prompt and task, which ``RemoveOldMessages`` keeps)
is the previous request's prefix and is read, not written: ``omega * (D - H) + rho * H``. It
pays for itself after ``k = (omega * (D - H) + rho * H - rho * (S - g) - omega * g) / (rho *
(S - D))`` calls. That the opening is read is what the providers' caches do for an agent:
OpenAI caches every prefix of 1,024 tokens or more on its own
(https://platform.openai.com/docs/guides/prompt-caching), and Anthropic reads a prefix up to a
cache breakpoint (https://platform.claude.com/docs/en/build-with-claude/prompt-caching), which
agents put on their system prompt and tools; an agent that sets none pays the write on the
opening too, and the compaction then repays itself a little later than ``k`` says. (Until
0.4 every kept token was priced as written: an upper bound that deferred compactions the
replays then paid for anyway, ten calls late on a held-out run, ``bench/cache.py --depth``.)
How many more calls a conversation makes is unknown; all that is known is that it made ``N``
so far. Gott's rule (the share of a run already behind us is uniform on (0, 1)) gives ``P(at
least k more | N so far) = N / (N + k)``: the conversation goes on for the ``k`` calls with
95% confidence when ``k <= N / 19`` (the report's ``expected_calls``). A compaction whose
``k`` exceeds that is deferred (``report.skipped == "deferred"``): the request is sent as it
is (what sending everything costs, never more) and the next call asks again (``S`` and ``N``
have grown, so ``k`` has fallen and the bound risen). Risk-neutral, the rule would be ``k <=
N`` (the median); 95% trades a few calls over the budget on short runs for never paying a
rewrite a run ends before repaying, nineteen times in twenty. Only when the threshold is a
budget under a known window, and never when the next call could reach the window: at the
window a compaction always runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agent_adapter._prices import Price

__all__ = ["ANTHROPIC_RATIOS", "CONFIDENCE", "Depth", "cost_depth", "payback_calls", "ratios"]

#: (read, write) per fresh input token without prices given: Anthropic's 0.1x and 1.25x.
ANTHROPIC_RATIOS = (0.1, 1.25)
#: The confidence that a compaction's conversation goes on until it has repaid it.
CONFIDENCE = 0.95
#: The derived target stays within these shares of the threshold.
_SHALLOWEST, _DEEPEST = 0.75, 0.1


def ratios(price: Price | None) -> tuple[float, float]:
    """``(rho, omega)``: cache read and cache write per fresh input token."""
    if price is None or price.input <= 0:
        return ANTHROPIC_RATIOS
    read = price.input if price.cached_input is None else price.cached_input
    write = price.input if price.cache_write is None else price.cache_write
    return read / price.input, write / price.input


@dataclass(frozen=True, slots=True)
class Depth:
    """One cost-aware decision.

    Attributes:
        target: the derived target in tokens.
        growth: the conversation's growth a call, in tokens, it was derived from.
        calls: the calls the conversation made so far.
        expected: the calls it goes on for with 95% confidence (``calls / 19``).
        payback: the calls a compaction to ``target`` needs to pay for itself.
        defer: the compaction is deferred (it cannot pay for itself in time).
    """

    target: int
    growth: int
    calls: int
    expected: float
    payback: float
    defer: bool


def payback_calls(
    tokens: int, target: int, growth: float, rho: float, omega: float, cached: int = 0
) -> float:
    """Calls after which a compaction of a ``tokens`` request (``growth`` of it new since the
    previous call, written either way) to ``target`` has paid for its rewrite, the kept tokens
    priced as written but for the ``cached`` opening it keeps unchanged, read (``0`` when the
    compaction call itself is cheaper; ``inf`` when it frees nothing)."""
    new = min(max(growth, 0.0), float(tokens))
    head = min(max(cached, 0), target)
    extra = omega * (target - head) + rho * head - rho * (tokens - new) - omega * new
    if extra <= 0:
        return 0.0
    saved = rho * (tokens - target)
    return extra / saved if saved > 0 else math.inf


def cost_depth(
    *,
    threshold: int,
    tokens: int,
    growth: float,
    calls: int,
    window: int | None,
    price: Price | None = None,
    cached: int = 0,
) -> Depth:
    """The target and the deferral of one compaction (see the module for the formula).

    Args:
        threshold: the policy's threshold in tokens.
        tokens: the request's tokens now (over the threshold).
        growth: the conversation's tokens a call (``<= 0``: unknown, the shallowest depth).
        calls: the calls it made so far.
        window: the model's context window, when known (deferral needs it).
        price: the model's price (``None``: Anthropic's ratios).
        cached: the opening's tokens (the messages before the first assistant turn) that a
            compaction keeps unchanged at the request's start: read from the cache, not
            written (see the module).
    """
    rho, omega = ratios(price)
    top = threshold if window is None else min(threshold, window)
    if growth <= 0 or rho <= 0:
        depth = _SHALLOWEST * top
    else:
        depth = top - math.sqrt(2 * omega * growth * top / rho)
    depth = min(_SHALLOWEST * top, max(_DEEPEST * top, depth))
    target = max(1, int(depth))
    payback = payback_calls(tokens, target, growth, rho, omega, cached)
    expected = calls * (1 - CONFIDENCE) / CONFIDENCE
    defer = (
        window is not None
        and threshold < window
        and tokens + max(growth, 0) < window
        and payback > expected
    )
    return Depth(target, max(0, round(growth)), calls, expected, payback, defer)
