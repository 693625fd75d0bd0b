"""Replay a real Claude Code session as ``conversation=`` into ``AgentCore.chat`` with
``LlmCompactor``, against the local wire-protocol server, and print the tokens each iteration
sent before and after compaction, and ``usage_total``.

    python bench/cliver_replay.py [SESSION.jsonl] [--threshold 60000] [--keep-turns 2]

The session's history up to its real auto-compaction is the conversation; the summary Claude
Code wrote at that point is the summarizer's reply (the summarizer is a second AgentCore on a
second local server). Each reply's reported ``input_tokens`` is the o200k count of the request
the server received, so the compactor's threshold sees what a provider would report. Tokens
are counted with ``tiktoken_counter("o200k_base")`` on the requests as recorded on the wire;
the reference column is the same conversation sent with ``context_compactor=None``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
from typing import Any

from agent_adapter import ToolCall as WireCall
from agent_adapter.cli._claude_code import load_claude_code
from agent_adapter.context import tiktoken_counter
from agent_adapter.context.formats import convert
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import (
    SUMMARY_PREFIX,
    AgentCore,
    CliverConverter,
    CLIverMessage,
    CompactionContext,
    LlmCompactor,
    ModelBinding,
    ModelBindings,
    tool,
)

DATA = Path(
    os.environ.get("AGENT_ADAPTER_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
SESSION = DATA / "claude-code-spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
SYSTEM = "You are Claude Code, working in the spotter repository."
PROMPT = "Continue where you left off: finish the flash message display."
COUNT = tiktoken_counter("o200k_base")


def _session(path: Path) -> tuple[list[CLIverMessage], str]:
    """The history before the session's auto-compaction, and the summary written there."""
    natives = load_claude_code(path)
    cut = next(
        i
        for i, m in enumerate(natives)
        if m["role"] == "user"
        and "continued from a previous conversation" in json.dumps(m["content"])
    )
    blocks = natives[cut]["content"]
    summary = "\n".join(
        b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )
    prefix = natives[:cut]
    while prefix and prefix[-1]["role"] == "assistant":  # its calls' results are past the cut
        prefix.pop()
    converter = CliverConverter()
    messages = [converter.dump(m) for m in convert(prefix, "anthropic").messages]
    return messages, summary


def _wire_tokens(server: ProviderServer, n: int) -> tuple[int, int]:
    body = server.requests[n].body
    messages = body["messages"]
    return len(messages), COUNT(convert(messages, "openai").messages)


def _tokens(messages: list[CLIverMessage]) -> int:
    return COUNT(
        convert([CLIverMessage(role="system", content=SYSTEM), *messages], "cliver").messages
    )


@tool(name="Read", description="Read a file.", safety="safe")
def read(file_path: str) -> str:
    """Read a file.

    Args:
        file_path: the file.
    """
    return f"     1→<%# {file_path}: replayed, no file system here %>"


async def replay(path: Path, threshold: int, keep_turns: int) -> None:
    conversation, summary = _session(path)
    call = Reply(
        tool_calls=[WireCall("r1", "Read", json.dumps({"file_path": "lib/app_web/layouts.ex"}))],
        output_tokens=40,
    )
    async with ProviderServer() as main, ProviderServer() as cheap:
        url = main.openai_url
        first = _tokens([*conversation, CLIverMessage(role="user", content=PROMPT)])
        main.add(Reply(**{**_fields(call), "input_tokens": first}))

        class Counted:
            """The summarizer, with the cheap server told what the prompt costs."""

            def __init__(self, agent: AgentCore) -> None:
                self.agent = agent

            async def chat(self, prompt: str) -> Any:
                cost = COUNT(
                    convert([CLIverMessage(role="user", content=prompt)], "cliver").messages
                )
                out = COUNT(
                    convert([CLIverMessage(role="assistant", content=summary)], "cliver").messages
                )
                cheap.add(Reply(text=summary, input_tokens=cost, output_tokens=out))
                return await self.agent.chat(prompt)

        async with AgentCore(
            ModelBindings(
                llm=ModelBinding.llm(model="cheap", api_key="t", base_url=cheap.openai_url)
            )
        ) as summarizer:
            inner = LlmCompactor(Counted(summarizer), threshold, keep_turns)

            async def compactor(context: CompactionContext) -> Any:
                plan = await inner(context)
                if plan is None:
                    after = context.messages
                else:
                    head = [CLIverMessage(role="user", content=f"{SUMMARY_PREFIX}\n{plan.summary}")]
                    after = [*head, *context.messages[plan.keep_from :]]
                if context.iteration > 0:  # the next reply reports what it will receive
                    main.add(
                        Reply(
                            text="Done: flash messages render.",
                            input_tokens=_tokens(after),
                            output_tokens=12,
                        )
                    )
                return plan

            binding = ModelBinding.llm(
                model="claude-replay", api_key="t", base_url=url, max_retries=0
            )
            async with AgentCore(
                ModelBindings(llm=binding),
                [read],
                builtin_system_prompt=SYSTEM,
                context_compactor=compactor,
            ) as agent:
                response = await agent.chat(PROMPT, conversation=conversation)
            rows = [_wire_tokens(main, n) for n in range(len(main.requests))]
            reference_tokens = rows[0][1] + _tool_round_tokens(response)
    print(f"session: {path.name}, {len(conversation)} messages replayed as conversation=")
    print(
        f"LlmCompactor(threshold_tokens={threshold}, keep_turns={keep_turns}); "
        "tokens: tiktoken o200k on the wire"
    )
    print()
    print("| iteration | compactor | messages sent | tokens sent | without compaction |")
    print("|---|---|---|---|---|")
    for i, (count, tokens) in enumerate(rows):
        done = "compacted" if i > 0 and tokens < rows[0][1] else "silent"
        ref = rows[0][1] if i == 0 else reference_tokens
        print(f"| {i} | {done} | {count} | {tokens:,} | {ref:,} |")
    total = response.usage_total
    print()
    print(
        f"usage_total: input_tokens={total.input_tokens:,} output_tokens={total.output_tokens:,} "
        f"(main calls + the summarizer's {len(cheap.requests)} call, recorded through the plan)"
    )
    print(f"run_id: {response.run_id}; final: {response.message.content!r}")


def _tool_round_tokens(response: Any) -> int:
    """Tokens the tool round of iteration 0 adds to the uncompacted request."""
    calls = [m for m in response.messages if m.role in ("assistant", "tool")][-3:-1]
    return COUNT(convert(calls, "cliver").messages)


def _fields(reply: Reply) -> dict[str, Any]:
    return {"tool_calls": reply.tool_calls, "output_tokens": reply.output_tokens}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session", nargs="?", type=Path, default=SESSION)
    parser.add_argument("--threshold", type=int, default=60_000)
    parser.add_argument("--keep-turns", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(replay(args.session, args.threshold, args.keep_turns))


if __name__ == "__main__":
    main()
