"""Compact once, then append, through each framework's real loop (issue 20): a conversation
that grows past the threshold over two user turns, and what consecutive requests share.

Every integration test drives its framework's own agent loop on :func:`turn_replies` against
the local server, once with the integration's compaction state and once with ``states=False``
(every call compresses the full history, as before the state). :func:`assert_appends` checks
the stateful run: between compactions the request the server received starts with the
previous request, item for item in the bytes the SDK sent. :func:`measure` gives the figures:
for each request, the o200k tokens of its JSON body that equal the previous request's body
from its first byte (what a provider's prompt cache can serve).
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from _integration_cases import COUNTER, history, request_tokens
from agent_adapter import ToolCall
from agent_adapter.context import CompressionPolicy, CompressionReport
from agent_adapter.context._tokens import _encoding
from agent_adapter.testing import RecordedRequest, Reply

#: Tool rounds per user turn.
ROUNDS = 9
#: Lines of each tool result (about 240 tokens): a few rounds fit between two compactions.
LINES = 12
TURNS = (
    "Read src/mod_0.py to src/mod_8.py one at a time and tell me the retries setting.",
    "Now read src/mod_9.py to src/mod_17.py the same way.",
)
FINAL = "Every file sets retries=3."
INSTRUCTIONS = "You are a careful code reader."


def policy() -> CompressionPolicy:
    """Compress above 3,000 tokens down to 2,000: crossed after about ten rounds, then again
    every three or four (a round is about 290 tokens)."""
    return CompressionPolicy(threshold_tokens=3_000, target_tokens=2_000, token_counter=COUNTER)


def read_file(path: str) -> str:
    """Read one file of the project.

    Args:
        path: the file's path.
    """
    return "\n".join(f"{path}:{i}: value_{i} = compute({i}, retries=3)" for i in range(LINES))


def turn_replies(turn: int, *, with_ids: bool = True, signed: bool = False) -> list[Reply]:
    """ROUNDS replies calling read_file once each (the files of user turn ``turn``), then the
    final answer; ``signed``: each call after a signed thought (as Gemini sends them)."""
    out = []
    for i in range(turn * ROUNDS, (turn + 1) * ROUNDS):
        call = ToolCall(
            id=f"call_{i}" if with_ids else "",
            name="read_file",
            arguments=json.dumps({"path": f"src/mod_{i}.py"}),
        )
        if signed:
            signature = base64.b64encode(f"sig_{i}".encode()).decode()
            out.append(Reply(thinking=f"step {i}", signature=signature, tool_calls=[call]))
        else:
            out.append(Reply(tool_calls=[call], input_tokens=100 + i))
    return [*out, Reply(text=FINAL)]


def _items(request: RecordedRequest) -> list[str]:
    """The request's history items as the SDK serialized them (key order kept)."""
    return [json.dumps(item, ensure_ascii=False) for item in history(request)]


def _rest(request: RecordedRequest) -> dict[str, object]:
    """The request's body but its history (instructions, tools, model...)."""
    body = request.body
    assert isinstance(body, dict)
    key = next(k for k in ("messages", "input", "contents") if k in body)
    return {k: v for k, v in body.items() if k != key}


def compacted(report: CompressionReport) -> bool:
    """True when the call's request was compressed (a step ran), not appended."""
    return bool(report.steps)


def one_long_turn(**kw: Any) -> list[Reply]:
    """Both turns' tool rounds in one user turn (2 * ROUNDS rounds, then the answer)."""
    return [*turn_replies(0, **kw)[:-1], *turn_replies(1, **kw)]


def assert_appends(
    requests: Sequence[RecordedRequest],
    reports: Sequence[CompressionReport],
    *,
    keyed: bool = True,
    keeps_sent: bool = False,
) -> int:
    """Between compactions, every request starts with the previous one, byte for byte, and
    its report counts that prefix; returns how many requests were appended so.

    ``keyed=False`` (the framework gave no conversation id: the key is a fingerprint of the
    first three messages, which the first call, holding fewer, does not share): the second
    call's report has no earlier state to count from. ``keeps_sent`` (the framework keeps the
    request sent as its history, as pydantic-ai and cliver_core do): the call after a
    compaction extends the request sent, not the history the state remembers, so the state
    starts over from it and its report counts no prefix.
    """
    assert len(requests) == len(reports)
    appended = 0
    for i in range(1, len(requests)):
        if compacted(reports[i]):
            continue
        prev, cur = _items(requests[i - 1]), _items(requests[i])
        assert len(cur) > len(prev), f"request {i} does not grow request {i - 1}"
        assert cur[: len(prev)] == prev, f"request {i} moved request {i - 1}'s prefix"
        assert _rest(requests[i]) == _rest(requests[i - 1])
        uncounted = (i == 1 and not keyed) or (keeps_sent and compacted(reports[i - 1]))
        assert reports[i].prefix_tokens > 0 or uncounted, i
        appended += 1
    return appended


def shared_prefix_tokens(prev: RecordedRequest, cur: RecordedRequest) -> int:
    """o200k tokens of ``cur``'s JSON body that equal ``prev``'s from the first byte."""
    n = 0
    for a, b in zip(prev.raw, cur.raw, strict=False):
        if a != b:
            break
        n += 1
    text = cur.raw[:n].decode("utf-8", "ignore")
    return len(_encoding("o200k_base").encode(text, disallowed_special=()))


@dataclass(frozen=True)
class Figures:
    """One run's figures.

    Attributes:
        shared: for each request after the first, its tokens equal to the previous request's
            prefix (of the JSON body, o200k).
        sizes: for each request after the first, its tokens (of the JSON body, o200k).
        compactions: model calls whose request was compressed.
        reported: the reports' ``prefix_tokens`` summed (the policy's counter).
    """

    shared: tuple[int, ...]
    sizes: tuple[int, ...]
    compactions: int
    reported: int

    @property
    def share(self) -> float:
        """The part of all requests' tokens (but the first's) a prompt cache can serve."""
        return sum(self.shared) / max(1, sum(self.sizes))

    def line(self, label: str) -> str:
        """One line for the report."""
        return (
            f"{label}: {len(self.shared) + 1} calls, {self.compactions} compactions, shared "
            f"prefix {sum(self.shared)}/{sum(self.sizes)} tokens ({self.share:.0%}), "
            f"report.prefix_tokens {self.reported}"
        )


def measure(requests: Sequence[RecordedRequest], reports: Sequence[CompressionReport]) -> Figures:
    """The figures of one run (see :class:`Figures`)."""
    return Figures(
        shared=tuple(shared_prefix_tokens(a, b) for a, b in itertools.pairwise(requests)),
        sizes=tuple(request_tokens(r) for r in requests[1:]),
        compactions=sum(compacted(r) for r in reports),
        reported=sum(r.prefix_tokens for r in reports),
    )


def assert_better(label: str, after: Figures, before: Figures) -> None:
    """The stateful run shares more with the previous request and compresses less often;
    prints both figures (``pytest -s`` shows them)."""
    print(f"\n{before.line(label + ' before (states=False)')}")
    print(after.line(label + " after"))
    assert after.compactions < before.compactions
    assert after.share > before.share
