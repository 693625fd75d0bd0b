"""cliver_core's tools: ``ToolRegistry``, ``@tool`` (our pydantic schema where it can be built,
0.3.0a5's schema and coercion where not), the builtin tools of ``cliver_core.tools`` on
``tmp_path`` (WebFetch on a local HTTP server); compared with cliver-core 0.3.0a5 run in a
subprocess (``PYTHONPATH=$CLIVER_REF_DIR``, default ``/tmp/cc/x``; skipped when absent).
No ``from __future__ import annotations``: the fallback reads annotations as written."""

import asyncio
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import cliver_core
from agent_adapter import ConfigError, FunctionTool
from cliver_core import CLIverTool, ToolRegistry, tool
from cliver_core._tools import format_result, run_tool, tool_list
from cliver_core.tool import discover_builtin_tools
from cliver_core.tools import _discover, todo_write
from cliver_core.tools.list_directory import list_directory
from cliver_core.tools.read_file import read_file
from cliver_core.tools.web_fetch import web_fetch

REF_DIR = Path(os.environ.get("CLIVER_REF_DIR", "/tmp/cc/x"))
needs_ref = pytest.mark.skipif(
    not (REF_DIR / "cliver_core" / "__init__.py").is_file(),
    reason=f"cliver-core 0.3.0a5 not extracted at {REF_DIR} (set CLIVER_REF_DIR)",
)
OURS_DIR = Path(cliver_core.__file__).resolve().parents[1]
BUILTINS = ["Bash", "Exec", "Grep", "LS", "Read", "TodoRead", "TodoWrite", "WebFetch", "Write"]


def run_python(script: str, *args: str, ref: bool, cwd: Path, path: tuple[Path, ...] = ()) -> Any:
    """Run ``script`` on 0.3.0a5 (``ref``) or on ours; its last stdout line, as JSON. The
    script prints ``cliver_core.__file__`` first, which must be the package asked for."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in ((REF_DIR if ref else OURS_DIR), *path))
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    origin, *_, last = done.stdout.splitlines()
    assert Path(origin).resolve().is_relative_to((REF_DIR if ref else OURS_DIR).resolve())
    return json.loads(last)


# -- the registry -------------------------------------------------------------------------


def _named(name: str, text: str = "") -> CLIverTool:
    return CLIverTool(name=name, description=text, parameters={}, execute=lambda: text)


def test_registry_registers_replaces_and_lists_by_name() -> None:
    first, second = _named("b", "first"), _named("b", "second")
    registry = ToolRegistry([first, _named("c")])
    registry.register_all([_named("a"), second])
    assert registry.tool_names == ["a", "b", "c"]
    assert [t.name for t in registry.all_tools] == ["a", "b", "c"]
    assert registry.get("b") is second and registry.get("zzz") is None
    registry.register(first)
    assert registry.get("b") is first and ToolRegistry().tool_names == []


# -- @tool: our schema --------------------------------------------------------------------


class Point(BaseModel):
    x: int
    y: int = 0


def test_our_schema_has_descriptions_and_arguments_are_coerced(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    @tool(typed=True)
    def place(where: Path, at: Point, times: int = 1, tags: list[str] | None = None) -> str:
        """Place something.

        More words, for people.

        Args:
            where: the folder.
            at: the point.
            times: how often.
            tags: labels.
        """
        seen.update(where=where, at=at, times=times, tags=tags)
        return "ok"

    props = place.parameters["properties"]
    assert place.parameters["required"] == ["where", "at"]
    assert props["where"] == {"description": "the folder.", "format": "path", "type": "string"}
    assert props["times"]["description"] == "how often." and props["times"]["default"] == 1
    assert place.description == "Place something."  # the first line, as 0.3.0a5
    assert place.long_description is not None and "More words" in place.long_description
    assert place.execute(where=str(tmp_path), at={"x": "3"}, times="2") == "ok"
    assert seen == {"where": tmp_path, "at": Point(x=3), "times": 2, "tags": None}


def test_arguments_our_model_rejects_go_through_as_on_0_3_0a5() -> None:
    @tool(description="Count.")
    def count(n: int, flag: bool = False, words: list[str] | None = None) -> str:
        return repr((n, flag, words))

    assert count.execute(n="5", flag="yes") == "(5, True, None)"
    # pydantic refuses each of these; 0.3.0a5's coercion passes them on
    assert count.execute(n="five") == "('five', False, None)"
    assert count.execute(n=2.7, flag="maybe") == "(2, False, None)"
    assert count.execute(n=1, words=[1, 2]) == "(1, False, [1, 2])"
    with pytest.raises(TypeError, match="unexpected keyword"):
        count.execute(n=1, other=2)  # as 0.3.0a5: the function itself refuses it
    with pytest.raises(TypeError, match="missing"):
        count.execute()


async def test_async_tools_have_aexecute_and_a_sync_execute() -> None:
    @tool(description="Double.", safety="safe")
    async def double(n: int) -> str:
        await asyncio.sleep(0)
        return str(2 * n)

    assert double.aexecute is not None and double.safety == "safe"
    assert await double.aexecute(n="4") == "8"
    assert await run_tool(double, {"n": 5}) == "10"
    assert await asyncio.to_thread(double.execute, n="6") == "12"


async def test_a_sync_execute_of_an_async_tool_works_inside_a_running_loop() -> None:
    # asyncio.run raised "cannot be called from a running event loop" here (a sync caller in
    # a notebook or an async framework): both async faces run on a worker thread's own loop
    @tool(description="Double.", safety="safe")
    async def double(n: int) -> str:
        await asyncio.sleep(0)
        return str(2 * n)

    async def triple(args: dict[str, Any], ctx: Any = None) -> str:
        await asyncio.sleep(0)
        return str(3 * int(args["n"]))

    (wrapped,) = tool_list([FunctionTool("triple", "Triple.", {"type": "object"}, triple)], "tools")
    assert double.execute(n="6") == "12"
    assert wrapped.execute(n=2) == "6"


# -- @tool: 0.3.0a5's fallback ------------------------------------------------------------


class Custom:
    def __init__(self, tag: str = "") -> None:
        self.tag = tag


def test_a_custom_class_parameter_gets_0_3_0a5s_schema_and_coercion() -> None:
    @tool(name="use_custom", description="Use a custom object.")
    def use(c: Custom, n: int = 1, ratio: float = 0.5, on: bool = False) -> str:
        return repr((c, n, ratio, on))

    assert use.parameters == {
        "type": "object",
        "properties": {
            "c": {"type": "string"},
            "n": {"type": "integer"},
            "ratio": {"type": "number"},
            "on": {"type": "boolean"},
        },
        "required": ["c"],
    }
    assert use.execute(c="x", n="3", ratio="2", on="TRUE") == "('x', 3, 2.0, True)"
    assert use.execute(c="x", n="many") == "('x', 'many', 0.5, False)"


def test_kwargs_args_positional_only_and_ctx_are_walked_as_0_3_0a5() -> None:
    @tool(description="Anything.")
    def anything(a: int, *args: str, **kwargs: Any) -> str:
        return repr((a, args, kwargs))

    assert anything.parameters == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "args": {"type": "string"},
            "kwargs": {"type": "string"},
        },
        "required": ["a", "args", "kwargs"],
    }
    assert anything.execute(a="1", kwargs="x") == "(1, (), {'kwargs': 'x'})"

    @tool()
    def with_ctx(ctx: str, n: int) -> str:
        """Uses ctx."""
        return repr((ctx, n))

    assert with_ctx.parameters["properties"] == {
        "ctx": {"type": "string"},
        "n": {"type": "integer"},
    }
    assert with_ctx.execute(ctx="c", n="2") == "('c', 2)"


def test_postponed_annotations_are_resolved_in_0_3_0a5s_schema() -> None:
    # 0.3.0a5 reads `from __future__ import annotations` hints as strings ("int" -> a string
    # schema, no coercion); ours resolves them first, so `n: int` is an integer and coerced
    namespace: dict[str, Any] = {"Custom": Custom}
    exec(
        "from __future__ import annotations\ndef f(c: Custom, n: int = 1):\n    return n\n",
        namespace,
    )
    made = tool(description="x")(namespace["f"])
    assert made.parameters["properties"] == {"c": {"type": "string"}, "n": {"type": "integer"}}
    assert made.execute(c="a", n="2") == 2


def test_an_invalid_name_is_built_but_tool_list_refuses_a_bad_function() -> None:
    spaced = tool(name="my tool", description="d")(lambda: "x")
    assert spaced.name == "my tool" and spaced.execute() == "x"
    with pytest.raises(ConfigError, match=r"tools\[0\]"):
        tool_list([lambda: "x"], "tools")
    with pytest.raises(ConfigError, match=r"tools\[1\] is int"):
        tool_list([spaced, 3], "tools")
    assert [t.name for t in tool_list([spaced, read_file], "tools")] == ["my tool", "Read"]


LATE_IMPORT = r"""
import json, cliver_core
print(cliver_core.__file__)
import cliver_core.tool, cliver_core.tools.read_file
from cliver_core import tool
@tool(description="Late.")
def late(n: int) -> str:
    return str(n + 1)
print(json.dumps([late.name, late.execute(n="1")]))
"""


def test_the_package_tool_decorator_survives_a_late_submodule_import(tmp_path: Path) -> None:
    # ``cliver_core.tool`` is the decorator and a module of that name: importing the
    # submodule after the package must leave ``from cliver_core import tool`` usable
    assert run_python(LATE_IMPORT, ref=False, cwd=tmp_path) == ["late", "2"]


def test_format_result_texts() -> None:
    assert format_result([{"text": "a"}]) == ("a", False)
    assert format_result([{"error": "bad", "denied": True}]) == ("Error: bad", True)
    assert format_result([{"tool_result": 3}]) == ("3", False)
    assert format_result([]) == ("(no output)", False) == format_result("")
    assert format_result([{"text": "a"}, {"error": "b"}]) == (
        '[{"text": "a"}, {"error": "b"}]',
        True,
    )
    assert format_result({"k": "é", "n": None}) == ('{"k": "é", "n": null}', False)


class _Point(BaseModel):
    x: int


def test_format_result_is_0_3_0a5s_for_every_type() -> None:
    # 0.3.0a5's _format_tool_result: falsy is "(no output)", a plain str JSON-quoted,
    # anything else with a length JSON; a one-key dict or a value without a length raises
    # (the loop sends the exception as the tool's error, as 0.3.0a5)
    for falsy in (None, "", [], {}, 0, 0.0, False, b""):
        assert format_result(falsy) == ("(no output)", False)
    assert format_result('line 1\nsé "q"') == ('"line 1\\nsé \\"q\\""', False)
    assert format_result("a") == ('"a"', False)
    assert format_result(["a", 1, None]) == ('["a", 1, null]', False)
    assert format_result(b"ab") == ("\"b'ab'\"", False)
    assert format_result(({"text": "t"},)) == ("t", False)
    with pytest.raises(KeyError):
        format_result({"only": 1})
    for value, kind in ((7, "int"), (2.5, "float"), (True, "bool"), (_Point(x=1), "_Point")):
        with pytest.raises(TypeError, match=f"object of type '{kind}' has no len"):
            format_result(value)


async def test_the_text_of_tools_that_are_no_0_3_0a5_form_is_sent_as_is() -> None:
    # a FunctionTool's str is the result text itself (not a 0.3.0a5 tool): never quoted
    async def greet(args: dict[str, Any], ctx: Any = None) -> str:
        return f"hi {args['name']}"

    async def silent(args: dict[str, Any], ctx: Any = None) -> str:
        return ""

    wrapped, quiet = tool_list(
        [
            FunctionTool("greet", "Greet.", {"type": "object"}, greet),
            FunctionTool("silent", "Nothing.", {"type": "object"}, silent),
        ],
        "tools",
    )
    assert format_result(await run_tool(wrapped, {"name": "Ann"})) == ("hi Ann", False)
    assert format_result(await run_tool(quiet, {})) == ("(no output)", False)
    assert wrapped.execute(name="Bo") == "hi Bo"

    # likewise a typed tool and a plain function (not 0.3.0a5 forms); a 0.3.0a5 @tool quotes
    @tool(description="Echo.", typed=True)
    def echo_typed(text: str) -> str:
        return text

    @tool(description="Echo.")
    def echo_legacy(text: str) -> str:
        return text

    def echo_plain(text: str) -> str:
        return text

    (plain,) = tool_list([echo_plain], "tools")
    for item, sent in ((echo_typed, "hé"), (plain, "hé"), (echo_legacy, '"hé"')):
        assert format_result(await run_tool(item, {"text": "hé"})) == (sent, False)


SIGNATURES = '''
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional

class Custom:
    pass

def f_str(a: str, b: str = "x"):
    """Strings.

    Args:
        a: the a.
    """
def f_num(n: int, x: float, on: bool = False): ...
def f_path(p: Path): ...
def f_lists(a: list[str], b: list[dict], c: List[int], d: list, e: list[Custom]): ...
def f_dicts(a: dict, b: dict[str, int], c: Dict[str, Any]): ...
def f_opt(a: Optional[int] = None, b: Optional[int] = 1, c: Optional[str] = None): ...
def f_pipe(a: int | None, b: str | None = None, c: int | str = 1, d: Path | None = None): ...
def f_other(a: Literal["x"], b: Any, c: tuple[int, int], d: type[int]): ...
def f_noann(a, b=1): ...
def f_custom(c: Custom, n: int = 1): ...
def f_kwargs(a: int, **kwargs): ...
def f_args(*args, b: int = 0): ...
def f_ctx(ctx: str, n: int): ...
def f_posonly(a: int, /, b: str): ...
'''
FALLBACKS = ["f_custom", "f_kwargs", "f_args", "f_ctx", "f_posonly"]
SCHEMAS = r"""
import json, sys
import cliver_core, sigs
from cliver_core import tool
print(cliver_core.__file__)
try:
    from cliver_core._tools import _legacy_parameters as legacy
except ImportError:  # 0.3.0a5: its decorator's schema is the legacy one
    legacy = lambda f: tool()(f).parameters
names = [n for n in vars(sigs) if n.startswith("f_")]
made = {n: tool()(getattr(sigs, n)) for n in names}
print(json.dumps({
    "legacy": {n: legacy(getattr(sigs, n)) for n in names},
    "tools": {n: [t.name, t.description, t.long_description, t.parameters, t.safety]
              for n, t in made.items() if n in sys.argv[1:]},
}))
"""


@needs_ref
def test_0_3_0a5s_schemas_are_ported_exactly_and_the_fallback_tools_equal(tmp_path: Path) -> None:
    (tmp_path / "sigs.py").write_text(SIGNATURES, encoding="utf-8")
    ref, ours = (
        run_python(SCHEMAS, *FALLBACKS, ref=flag, cwd=tmp_path, path=(tmp_path,))
        for flag in (True, False)
    )
    assert ours["legacy"] == ref["legacy"] and len(ref["legacy"]) == 14
    assert ours["tools"] == ref["tools"] and sorted(ref["tools"]) == sorted(FALLBACKS)


COERCE = r"""
import json, cliver_core
from cliver_core.tool import _coerce_args
print(cliver_core.__file__)
cases = [["integer", "5"], ["integer", "x"], ["integer", 2.7], ["integer", None],
         ["integer", True], ["number", "1.5"], ["number", "abc"], ["number", 3],
         ["boolean", "YES"], ["boolean", "no"], ["boolean", 1], ["boolean", None],
         ["string", 5], ["array", "x"], ["object", [1]]]
out = []
for kind, value in cases:
    got = _coerce_args({"properties": {"v": {"type": kind}}}, {"v": value, "w": "1"})
    out.append([type(got["v"]).__name__, repr(got["v"]), got["w"]])
print(json.dumps(out))
"""


@needs_ref
def test_0_3_0a5s_coercion_is_ported_exactly(tmp_path: Path) -> None:
    ref = run_python(COERCE, ref=True, cwd=tmp_path)
    assert run_python(COERCE, ref=False, cwd=tmp_path) == ref
    assert ref[0] == ["int", "5", "1"] and ref[8][1] == "True"


# -- the builtin tools --------------------------------------------------------------------


def test_discovery_finds_the_builtins_and_refuses_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = discover_builtin_tools()
    assert [t.name for t in found] == BUILTINS
    safe = {t.name for t in found if t.safety == "safe"}
    assert safe == {"Grep", "LS", "Read", "TodoRead", "TodoWrite"}
    package = tmp_path / "dup_tools"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module in ("one", "two", "_skipped"):
        (package / f"{module}.py").write_text(
            "from cliver_core.tool import tool\n@tool(name='Same')\ndef same(): ...\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RuntimeError, match="duplicate builtin tool name 'Same'"):
        _discover("dup_tools", [str(package)])


def test_read_numbers_slices_and_refuses(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / ".env").write_text("KEY=1\n")
    path = str(tmp_path / "a.txt")
    assert read_file.execute(file_path=path) == [
        {"text": "     1\tone\n     2\ttwo\n     3\tthree"}
    ]
    assert read_file.execute(file_path=path, offset="1", limit="1") == [
        {
            "text": "     2\ttwo\n\n--- File truncated ---\n"
            "Showing lines 2-2 of 3 total lines.\nUse offset=2 to read more."
        }
    ]
    assert read_file.execute(file_path=str(tmp_path / ".env")) == [
        {"error": "Access denied: '.env' appears to be a sensitive file."}
    ]
    assert read_file.execute(file_path=str(tmp_path)) == [
        {"error": f"Path is not a file: {tmp_path}"}
    ]


def test_ls_takes_an_ignore_string_as_one_pattern(tmp_path: Path) -> None:
    (tmp_path / "keep.py").write_text("x" * 2048)
    (tmp_path / "drop.pyc").write_text("")
    (tmp_path / "sub").mkdir()
    want = f"Directory: {tmp_path} (2 entries)\n  keep.py (2.0KB)\n  sub/"
    assert list_directory.execute(path=str(tmp_path), ignore="*.pyc") == [{"text": want}]
    assert list_directory.execute(path=str(tmp_path), ignore=["*.pyc"]) == [{"text": want}]


def test_todo_write_then_read() -> None:
    tools = {t.name: t for t in discover_builtin_tools()}
    items = [
        {"id": "1", "content": "plan", "status": "completed"},
        {"id": "2", "content": "build", "status": "in_progress"},
        {"id": "3", "content": "ship"},
    ]
    summary = (
        "Todo List:\n  [x] (1) plan\n  [~] (2) build\n  [ ] (3) ship\n\n"
        "Progress: 1/3 completed, 1 in progress, 1 pending"
    )
    try:
        assert tools["TodoWrite"].execute(todos=items) == [{"text": summary}]
        assert tools["TodoRead"].execute() == [{"text": summary}]
        assert todo_write.get_current_todos() == items
    finally:
        tools["TodoWrite"].execute(todos=[])
    assert tools["TodoRead"].execute() == [{"text": "No active plan."}]


CALLS = r"""
import json, sys, cliver_core
from cliver_core.tool import discover_builtin_tools
print(cliver_core.__file__)
tools = {t.name: t for t in discover_builtin_tools()}
meta = {t.name: [t.description, t.long_description, t.parameters, t.safety] for t in tools.values()}
results = []
for name, args in json.loads(sys.argv[1]):
    try:
        results.append(tools[name].execute(**args))
    except Exception as e:
        results.append(["raised", type(e).__name__, str(e)])
print(json.dumps({"meta": meta, "results": results}))
"""


def _workspace(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """Files under ``root`` and the builtin calls the comparison makes on them."""
    (root / "a.txt").write_text("alpha\nBeta error here\ngamma\n")
    (root / "long.txt").write_text("".join(f"line {i}\n" for i in range(2005)) + "z" * 2100)
    (root / "secrets.json").write_text("{}")
    (root / "sub").mkdir()
    (root / "sub" / "b.py").write_text("def error():\n    pass\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "c.txt").write_text("error hidden\n")
    (root / ".gitignore").write_text("# comment\n*.log\n")
    (root / "x.log").write_text("error in log\n")
    (root / "empty").mkdir()
    a, sub = str(root / "a.txt"), str(root / "sub")
    return [
        ("TodoRead", {}),
        ("Read", {"file_path": a}),
        ("Read", {"file_path": "a.txt", "offset": "1", "limit": 1}),
        ("Read", {"file_path": str(root / "long.txt")}),
        ("Read", {"file_path": str(root / "long.txt"), "offset": 2005}),
        ("Read", {"file_path": str(root / "secrets.json")}),
        ("Read", {"file_path": str(root / "nope.txt")}),
        ("Write", {"file_path": str(root / "new" / "deep" / "n.txt"), "content": "1\n2"}),
        ("Write", {"file_path": str(root / "new" / "deep" / "n.txt"), "content": ""}),
        ("Write", {"file_path": "w.json", "content": {"k": [1, "é"]}}),
        ("LS", {"path": str(root)}),
        ("LS", {"path": str(root), "ignore": ["*.txt", "sub"]}),
        ("LS", {"path": str(root / "empty")}),
        ("LS", {"path": a}),
        ("LS", {"path": str(root / "nope")}),
        ("Grep", {"pattern": "error", "path": str(root)}),
        ("Grep", {"pattern": "ERROR", "path": str(root), "glob": "*.py"}),
        ("Grep", {"pattern": "a", "path": a, "limit": 2}),
        ("Grep", {"pattern": "(", "path": str(root)}),
        ("Grep", {"pattern": "zzz", "path": str(root)}),
        ("Grep", {"pattern": "x", "path": str(root / "nope")}),
        ("Bash", {"command": "echo hi; echo oops >&2"}),
        ("Bash", {"command": "pwd; exit 3", "directory": sub}),
        ("Bash", {"command": "sleep 2", "timeout": "1"}),
        ("Exec", {"code": "import os; print(os.getcwd()); print(2 ** 10)"}),
        ("Exec", {"code": "import sys; sys.stderr.write('bad'); sys.exit(4)"}),
        ("Exec", {"code": ""}),
        ("TodoWrite", {"todos": [{"id": "1", "content": "c", "status": "in_progress"}]}),
        ("TodoWrite", {"todos": ["not a dict"]}),
        ("TodoRead", {}),
    ]


@needs_ref
def test_builtins_equal_0_3_0a5s(tmp_path: Path) -> None:
    runs, calls = [], []
    for flag in (True, False):
        root = tmp_path / ("ref" if flag else "ours")
        root.mkdir()
        calls = _workspace(root)
        out = run_python(CALLS, json.dumps(calls), ref=flag, cwd=root)
        runs.append(json.loads(json.dumps(out).replace(str(root), "<root>")))
    ref, ours = runs
    assert list(ref["meta"]) == BUILTINS and ours["meta"] == ref["meta"]
    assert len(ref["results"]) == len(ours["results"]) == len(calls)
    for call, want, got in zip(calls, ref["results"], ours["results"], strict=True):
        assert got == want, call
    assert ref["results"][1] == [{"text": "     1\talpha\n     2\tBeta error here\n     3\tgamma"}]
    assert ref["results"][-2][0] == "raised"


# -- WebFetch against a local server ------------------------------------------------------

PAGES: dict[str, tuple[int, str, bytes]] = {
    "/page": (
        200,
        "text/html; charset=utf-8",
        b"<html><head><style>p{}</style><script>x()</script></head><body><nav>menu</nav>"
        b"<h1>Title</h1><p>Hello &amp; <a href='/x'>no</a> <a href=\"/y\">link</a></p>"
        b"<ul><li>one</li><li>two</li></ul>caf\xc3\xa9<br/>end</body></html>",
    ),
    "/data": (200, "application/json", b'{"a": [1, 2], "b": "\xc3\xa9"}'),
    "/badjson": (200, "application/json", b"{not json"),
    "/latin": (200, "text/plain; charset=latin-1", b"caf\xe9"),
    "/image": (200, "image/png", b"\x89PNG" + b"\x00" * 60),
    "/big": (200, "text/plain", b"0123456789" * 2500),
    "/gone": (404, "text/plain", b"missing"),
    "/boom": (500, "text/plain", b"broken"),
}


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/latin")
            self.end_headers()
            return
        if self.path == "/agent":
            page = (200, "text/plain", str(self.headers.get("User-Agent")).encode())
        else:
            page = PAGES.get(self.path, (404, "text/plain", b""))
        status, kind, body = page
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_web_fetch_texts(site: str, tmp_path: Path) -> None:
    page = web_fetch.execute(url=f"{site}/page")[0]["text"]
    assert page == (
        f"URL: {site}/page\n\nContent:\n# Title\n\nHello & no link (/y)\n\n- one\n- twocafé\nend"
    )
    assert web_fetch.execute(url=f"{site}/agent") == [
        {"text": f"URL: {site}/agent\n\nContent:\nCLIver"}
    ]
    assert web_fetch.execute(url=f"{site}/moved")[0]["text"].endswith("Content:\ncafé")
    assert web_fetch.execute(url=f"{site}/gone") == [
        {"error": f"HTTP 404 - Not Found for URL: {site}/gone"}
    ]
    assert web_fetch.execute(url="ftp://x") == [
        {"error": "URL must start with http:// or https://"}
    ]
    refused = web_fetch.execute(url=f"http://127.0.0.1:{_closed_port()}/")[0]["error"]
    assert refused.startswith("Could not reach URL: http://127.0.0.1:") and "refused" in refused
    big = web_fetch.execute(url=f"{site}/big")[0]["text"]
    assert big.endswith("(truncated — showing 20,000 of 25,000 chars. Use save_to_file to get "
                        "the full content for local search.)")  # fmt: skip
    saved = tmp_path / "out" / "big.txt"
    summary = web_fetch.execute(url=f"{site}/big", save_to_file=str(saved))[0]["text"]
    assert saved.read_text() == "0123456789" * 2500
    assert summary.startswith(f"Saved to: {saved} (25,000 chars, 1 lines)\nSource: {site}/big")


FETCH = r"""
import json, sys, cliver_core
from cliver_core.tools.web_fetch import web_fetch
print(cliver_core.__file__)
site, out = sys.argv[1], sys.argv[2]
paths = ["/page", "/data", "/badjson", "/latin", "/image", "/big", "/gone", "/boom",
         "/moved", "/agent"]
results = [web_fetch.execute(url=site + p) for p in paths]
results.append(web_fetch.execute(url=site + "/page", save_to_file=out + "/saved.md"))
results.append(web_fetch.execute(url="file:///etc/passwd"))
results.append(web_fetch.execute(url="http://127.0.0.1:" + sys.argv[3] + "/"))
print(json.dumps(results))
"""


@needs_ref
def test_web_fetch_equals_0_3_0a5s(site: str, tmp_path: Path) -> None:
    port = str(_closed_port())
    ref, ours = (
        run_python(FETCH, site, str(tmp_path), port, ref=flag, cwd=tmp_path)
        for flag in (True, False)
    )
    assert ours == ref
    assert ref[4] == [
        {
            "text": "This URL points to a binary file (image/png, 64 bytes), not readable text. "
            "If you already have this image/media embedded in the conversation, analyze it "
            "directly instead of fetching it."
        }
    ]
