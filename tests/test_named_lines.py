"""A shortened code read keeps the lines the conversation's errors and diffs name (issue 34,
item 1): the line a traceback, a failed test, a linter or a diff hunk points at in the file
a tool result read stays verbatim, before the bodies."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from agent_adapter import Message, ToolCall
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    ShrinkToolResults,
    compress,
)
from agent_adapter.context._shapes import line_refs, shorten_text
from agent_adapter.context._shapes._refs import lines_of
from agent_adapter.context.formats import convert

REQUESTS_1142 = "mini-swe-agent-gemini3pro/trajs/psf__requests-1142.traj.json"


def _numbered(text: str, n: int) -> list[str]:
    return re.findall(rf"^ *{n}\t.*$", text, re.M)


def test_a_real_read_keeps_the_lines_a_later_traceback_names(data_dir: Path) -> None:
    trace = load_trace(data_dir / REQUESTS_1142)
    msgs = convert(trace.messages, trace.format).messages
    # message 13 reads requests/models.py 200-300 (nl -ba | sed -n); message 63's traceback
    # names /testbed/requests/models.py lines 227 and 229
    read = msgs[13]
    assert read.role == "tool" and "nl -ba requests/models.py" in msgs[12].tool_calls[0].arguments
    assert 'File "/testbed/requests/models.py", line 229, in prepare' in msgs[63].text
    named = {n: _numbered(read.text, n)[0] for n in (227, 229)}
    step = ShrinkToolResults(bigger_than_tokens=200, older_than_turns=2)
    target = sum(len(m.text) for m in msgs) // 4 // 4
    out, _ = asyncio.run(compress(msgs, CompressionPolicy(target_tokens=target, steps=[step])))
    short = next(m for m in out if m.tool_call_id == read.tool_call_id)
    assert short is not read and len(short.text) < len(read.text) // 2  # shortened
    for line in named.values():
        assert line in short.text.split("\n")  # verbatim, with its number
    # without the line numbers (before this change) the same cut drops them
    assert named[229] not in shorten_text(read.text, 400).split("\n")


def test_line_refs_reads_tracebacks_runners_linters_and_diff_hunks() -> None:
    texts = [
        'Traceback (most recent call last):\n  File "/testbed/src/a.py", line 57, in f\n',
        "src/b.py:42: AssertionError\na.py:10:5: E501 line too long\nc.c:3:1: error: x\n",
        "src/g.py:11:    x = 1\n",  # a grep hit: its source text names no line
        "--- a/src/d.py\n+++ b/src/d.py\n@@ -40,4 +40,5 @@ def g():\n"
        "     a\n-    b\n+    B\n+    C\n     c\n     d\n",
        "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+x\n+y\n",  # a new file: no old lines
    ]
    refs = line_refs(texts)
    assert refs == {
        "/testbed/src/a.py": frozenset({57}),
        "src/b.py": frozenset({42}),
        "a.py": frozenset({10}),
        "c.c": frozenset({3}),
        "src/d.py": frozenset({41}),
    }
    # one file spelled two ways; a bare name is that file too (the digest's rule)
    assert lines_of(refs, "src/a.py") == {57, 10}
    assert lines_of(refs, "/testbed/src/d.py") == {41}
    assert lines_of(refs, "src/zz.py") == frozenset()


def test_the_exact_shortening_of_a_read_with_a_named_line() -> None:
    code = "\n".join(
        f"{i:6}\t" + (f"def f{i}(x):" if i % 10 == 1 else f"    y = x + {i}") for i in range(1, 41)
    )
    plain = shorten_text(code, 300)
    assert "    25\t" not in plain
    kept = shorten_text(code, 300, keep_lines=frozenset({25}))
    assert kept == (
        "[... 648 characters cut ...]\n"
        "     1\tdef f1(x):\n"
        "[9 lines cut]\n"
        "    11\tdef f11(x):\n"
        "[9 lines cut]\n"
        "    21\tdef f21(x):\n"
        "[2 lines cut]\n"
        "    24\t    y = x + 24\n"
        "    25\t    y = x + 25\n"
        "    26\t    y = x + 26\n"
        "[4 lines cut]\n"
        "    31\tdef f31(x):\n"
        "[9 lines cut]"
    )
    assert shorten_text(code, 300, keep_lines=frozenset({25})) is kept  # remembered


def _read_and_failure() -> list[Message]:
    code = "\n".join(f"{i:6}\t    y = x + {i}  # a body line" for i in range(1, 200))
    read = ToolCall("c1", "bash", '{"command": "nl -ba src/pkg/a.py"}')
    run = ToolCall("c2", "bash", '{"command": "pytest"}')
    return [
        Message("user", "fix it"),
        Message("assistant", "", tool_calls=(read,)),
        Message("tool", code, tool_call_id="c1"),
        Message("assistant", "", tool_calls=(run,)),
        Message("tool", "src/pkg/a.py:123: AssertionError\n1 failed", tool_call_id="c2"),
        Message("assistant", "I see"),
        Message("user", "go on"),
        Message("assistant", "ok"),
    ]


def test_cut_long_messages_keeps_the_line_a_failure_names_too() -> None:
    msgs = _read_and_failure()
    step = CutLongMessages(max_tokens_per_message=200)
    out, _ = asyncio.run(compress(msgs, CompressionPolicy(target_tokens=300, steps=[step])))
    lines = out[2].text.split("\n")
    assert out[2] is not msgs[2] and len(out[2].text) < 1000
    assert "   123\t    y = x + 123  # a body line" in lines


def test_a_read_in_shrink_tool_results_keeps_the_line_a_failure_names() -> None:
    code = "\n".join(f"{i:6}\t    y = x + {i}  # a body line" for i in range(1, 200))
    read = ToolCall("c1", "bash", '{"command": "nl -ba src/pkg/a.py"}')
    run = ToolCall("c2", "bash", '{"command": "pytest"}')
    msgs = [
        Message("user", "fix it"),
        Message("assistant", "", tool_calls=(read,)),
        Message("tool", code, tool_call_id="c1"),
        Message("assistant", "", tool_calls=(run,)),
        Message("tool", "src/pkg/a.py:123: AssertionError\n1 failed", tool_call_id="c2"),
        Message("assistant", "I see"),
        Message("user", "go on"),
        Message("assistant", "ok"),
    ]
    step = ShrinkToolResults(bigger_than_tokens=100, older_than_turns=2)
    out, _ = asyncio.run(compress(msgs, CompressionPolicy(target_tokens=300, steps=[step])))
    lines = out[2].text.split("\n")
    assert out[2] is not msgs[2] and len(out[2].text) < 1000
    assert "   123\t    y = x + 123  # a body line" in lines
    assert "   122\t    y = x + 122  # a body line" in lines  # its context, room allowing
    assert out[4] is msgs[4]
