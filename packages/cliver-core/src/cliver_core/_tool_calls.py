"""One tool call of a run, as 0.3.0a5 runs it: its permission category and check, the
tool, and the events around it."""

from __future__ import annotations

import inspect
import json
import time
from typing import Any

from agent_adapter import RunContext
from agent_adapter import ToolCall as AAToolCall
from cliver_core._events import ToolEvent, ToolEventType, emit
from cliver_core._format import DENIED_PREFIX
from cliver_core._messages import CLIverMessage
from cliver_core._run_spec import RunSpec
from cliver_core._tools import TOOL_CTX, CLIverTool, format_result, run_tool
from cliver_core.policy import Decision, DecisionAction, ToolCallContext, ToolCategory

__all__ = ["category", "denial", "run_call", "tool_context"]


def category(spec: RunSpec, name: str, tool: CLIverTool | None) -> ToolCategory:
    """``safety_overrides`` first, then the tool's ``safety``; unknown tools ASK (as
    0.3.0a5: fail closed)."""
    override = spec.safety_overrides.get(name)
    if override is not None:
        return ToolCategory(override)
    return ToolCategory.SAFE if tool is not None and tool.safety == "safe" else ToolCategory.ASK


async def denial(
    spec: RunSpec, name: str, args: dict[str, Any], tool: CLIverTool | None
) -> str | None:
    """``None`` when the call may run, else the denial reason."""
    check = spec.permission_callback
    if check is None or category(spec, name, tool) is not ToolCategory.ASK:
        return None
    context = ToolCallContext(
        tool_name=name,
        args=args,
        server=name.split("__")[1] if name.startswith("mcp__") and "__" in name[5:] else None,
        category=ToolCategory.ASK,
    )
    try:
        verdict = check(context)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as e:  # a broken permission prompt never widens permissions
        verdict = Decision.deny(f"permission callback failed: {e}")
    if isinstance(verdict, Decision):
        if verdict.action is DecisionAction.ALLOW:
            return None
        return verdict.reason or "denied by permission callback"
    if verdict is None or verdict is True:
        return None
    return verdict if isinstance(verdict, str) and verdict else "denied by permission callback"


def tool_context(spec: RunSpec, run_id: str) -> RunContext:
    """The context a FunctionTool of the run is called with: the run's id, and the
    conversation of its compactor when it has one (``PolicyCompactor(conversation=...)``),
    so the tool's owner scope is the one the compactor saved under."""
    conversation = getattr(spec.compactor, "conversation", None)
    thread = conversation if isinstance(conversation, str) and conversation else None
    return RunContext(run_id=run_id, thread_id=thread)


async def run_call(
    spec: RunSpec,
    run_id: str,
    call: AAToolCall,
    tool: CLIverTool | None,
    advertised: CLIverTool | None = None,
) -> tuple[CLIverMessage, str]:
    """One call, as 0.3.0a5 runs it: ``tool.start``; the permission check; the tool;
    ``tool.end`` with the result text (an error result, an unknown tool and a denial
    included, a denial after ``tool.permission_denied``), or ``tool.error`` when the tool
    raised.

    As in 0.3.0a5, a handler that raises on ``tool.start`` or ``tool.error`` fails the
    run, while one that raises on ``tool.permission_denied`` or ``tool.end`` turns the
    call into a ``tool.error`` with that exception as its result.

    The permission check reads ``advertised``, the tool as the model was offered it: a
    tool the run did not advertise (hidden by ``tool_filter`` or a skill's
    ``allowed-tools``) that the model calls anyway runs from the registry (``tool``) only
    after asking, whatever its own safety (0.3.0a5 fails closed there too).
    """
    start = time.perf_counter()

    async def event(kind: ToolEventType, **fields: Any) -> None:
        await emit(
            spec.handlers,
            ToolEvent(
                event=kind, tool_name=call.name, tool_call_id=call.id, run_id=run_id, **fields
            ),
        )

    def elapsed_ms() -> float:
        return (time.perf_counter() - start) * 1000

    try:
        args = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        args = None
    given = args if isinstance(args, dict) else {}
    await event(ToolEventType.START, args=given)
    status = "error"
    try:
        reason = await denial(spec, call.name, given, advertised)
        if reason is not None:
            text, status = f"{DENIED_PREFIX} {reason}", "denied"
            await event(
                ToolEventType.PERMISSION_DENIED, args=given, error=text.removeprefix("Error: ")
            )
        elif call.name.startswith("mcp__") and spec.mcp_call is not None:
            text, failed = format_result(await spec.mcp_call(call.name, given))
            status = "error" if failed else "ok"
        elif call.name.startswith("mcp__") and tool is None:
            text = "Error: No MCP client configured"
        elif tool is None:
            text = f"Error: Tool '{call.name}' not found"
        elif not isinstance(args, dict):
            text = "Error: the arguments are not a JSON object"
        else:
            token = TOOL_CTX.set(tool_context(spec, run_id))
            try:
                text, failed = format_result(await run_tool(tool, args))
            finally:
                TOOL_CTX.reset(token)
            status = "error" if failed else "ok"
        shown = text if len(text) <= 500 else text[:497] + "..."
        await event(ToolEventType.END, result=shown, duration_ms=elapsed_ms())
    except Exception as e:  # returned to the model, which may recover
        spec.logger.warning("Tool '%s' failed: %s", call.name, e)
        await event(ToolEventType.ERROR, error=str(e), duration_ms=elapsed_ms())
        return CLIverMessage(role="tool", content=f"Error: {e}", tool_call_id=call.id), "error"
    return CLIverMessage(role="tool", content=text, tool_call_id=call.id), status
