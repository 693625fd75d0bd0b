"""AgentCore: the tool-calling loop with a pluggable context compactor, on the shared model
layer (providers, messages, compression engine and ledger of :mod:`agent_adapter`)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agent_adapter import ConfigError, Message
from cliver_core._bindings import ModelBindings
from cliver_core._compaction import validate_history
from cliver_core._events import EventHandler
from cliver_core._format import from_message
from cliver_core._messages import CLIverMessage, CLIverMessageChunk, CLIverResponse
from cliver_core._run import Compactor, PermissionCallback, Run, RunSpec
from cliver_core._skills import Skill, SkillError, SkillManager, SkillNotFoundError, skill_prompt
from cliver_core._structured import OutputSpec
from cliver_core._tools import CLIverTool, ToolRegistry, tool_list

__all__ = ["AgentCore"]


class _Unset:
    def __repr__(self) -> str:
        return "<the agent's default>"


_UNSET: Any = _Unset()


def _positive(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{name} must be a number > 0 or None, got {value!r}")
    return float(value)


class AgentCore:
    """Call the model, run the tools it asks for, repeat; compact the history if told to.

    Example::

        agent = AgentCore(ModelBindings(llm=presets.deepseek()), [read_file],
                          context_compactor=LlmCompactor(summarizer, 60_000, 2))
        response = await agent.chat("Fix the failing test")
        response.message.content, response.usage_total, response.run_id

    The agent is stateless between calls: every call is a run of its own (its own
    ``run_id``, history, usage and deadline), so concurrent runs on one event loop never see
    each other's state. It is loop-safe, not thread-safe: use one agent per event loop.

    Args:
        bindings: the models; ``bindings.llm`` (with its failover chain) runs the loop.
        builtin_tools: tools every call may use (CLIverTool, FunctionTool or plain
            functions).
        mcp_client: not supported by this version (must be ``None``).
        skill_manager: where :meth:`run_skill` looks skill names up.
        permission_callback: asked before a non-``"safe"`` tool runs: ``callback(call)``
            (an :class:`agent_adapter.ToolCall`), sync or async; ``True`` / ``None`` allow,
            ``False`` or a reason string deny (the result is ``"Error: Permission denied:
            <reason>"``, approval state that compaction keeps).
        on_event: called with every event of every run (sync or async).
        max_consecutive_errors: tool errors (or denials) in a row that stop the run.
        builtin_system_prompt: the start of every run's system message.
        context_compactor: the default compactor of every entry point (``None``: none).
        run_timeout: seconds a whole run may take, compaction model calls included
            (:class:`~cliver_core.RunTimeout`); ``None`` for no limit.
        logger: the logger to use.

    Raises:
        ConfigError: no llm binding, or a bad setting.
    """

    def __init__(
        self,
        bindings: ModelBindings,
        builtin_tools: Sequence[Any] | None = None,
        mcp_client: Any = None,
        skill_manager: SkillManager | None = None,
        *,
        permission_callback: PermissionCallback | None = None,
        on_event: EventHandler | None = None,
        max_consecutive_errors: int = 5,
        builtin_system_prompt: str | None = None,
        context_compactor: Compactor | None = None,
        run_timeout: float | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        if not isinstance(bindings, ModelBindings) or bindings.llm is None:
            raise ConfigError(
                "AgentCore requires an llm binding: ModelBindings(llm=ModelBinding.llm("
                "model='...', api_key='...', base_url='...'))"
            )
        if mcp_client is not None:
            raise ConfigError("AgentCore: MCP clients are not supported by this version")
        if isinstance(max_consecutive_errors, bool) or not isinstance(max_consecutive_errors, int):
            raise ConfigError("AgentCore: max_consecutive_errors must be an int >= 1")
        if max_consecutive_errors < 1:
            raise ConfigError("AgentCore: max_consecutive_errors must be an int >= 1")
        if context_compactor is not None and not callable(context_compactor):
            raise ConfigError("AgentCore: context_compactor must be callable or None")
        self.bindings = bindings
        self.llm = bindings.llm
        self.tool_registry = ToolRegistry(tool_list(builtin_tools, "builtin_tools"))
        self.skill_manager = skill_manager
        self.permission_callback = permission_callback
        self.on_event = on_event
        self.max_consecutive_errors = max_consecutive_errors
        self.context_compactor = context_compactor
        self.run_timeout = _positive(run_timeout, "AgentCore: run_timeout")
        self._builtin_system_prompt = builtin_system_prompt
        self.logger = logger or logging.getLogger(__name__)

    def __repr__(self) -> str:
        return f"AgentCore({self.llm.name if self.llm else None!r})"

    # -- building a run ------------------------------------------------------------------

    def _spec(
        self,
        user_input: str,
        *,
        system_prompt: str | None,
        conversation: Sequence[Any] | None,
        extra_tools: Sequence[Any] | None,
        tool_filter: Callable[[CLIverTool], bool] | None,
        options: dict[str, Any] | None,
        max_iterations: int,
        on_event: EventHandler | None,
        context_compactor: Any,
        run_timeout: Any,
        output: OutputSpec | None = None,
    ) -> RunSpec:
        if not isinstance(user_input, str):
            raise ConfigError(f"user_input must be a str, got {type(user_input).__name__}")
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, int):
            raise ConfigError(f"max_iterations must be an int >= 1, got {max_iterations!r}")
        if max_iterations < 1:
            raise ConfigError(f"max_iterations must be an int >= 1, got {max_iterations!r}")
        compactor = self.context_compactor if context_compactor is _UNSET else context_compactor
        if compactor is not None and not callable(compactor):
            raise ConfigError("context_compactor must be callable or None")
        timeout = (
            self.run_timeout if run_timeout is _UNSET else _positive(run_timeout, "run_timeout")
        )
        history = [
            m if isinstance(m, CLIverMessage) else from_message(m) if isinstance(m, Message) else m
            for m in (conversation or ())
        ]
        parts = [p for p in (self._builtin_system_prompt, system_prompt) if p]
        while history and isinstance(history[0], CLIverMessage) and history[0].role == "system":
            lead = history.pop(0)
            if isinstance(lead.content, str) and lead.content:
                parts.append(lead.content)
        if history:
            validate_history(
                [*history, CLIverMessage(role="user", content="")], "conversation", ConfigError
            )
        history.append(CLIverMessage(role="user", content=user_input))
        tools = [*self.tool_registry.all_tools, *tool_list(extra_tools, "extra_tools")]
        if tool_filter is not None:
            tools = [t for t in tools if tool_filter(t)]
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise ConfigError(
                f"duplicate tool names: {sorted({n for n in names if names.count(n) > 1})}"
            )
        return RunSpec(
            chain=self.bindings.llm_chain,
            system="\n\n".join(parts) or None,
            history=history,
            tools=tools,
            options=dict(options or {}),
            max_iterations=max_iterations,
            compactor=compactor,
            handlers=(self.on_event, on_event),
            run_timeout=timeout,
            max_consecutive_errors=self.max_consecutive_errors,
            permission_callback=self.permission_callback,
            output=output,
        )

    # -- entry points --------------------------------------------------------------------

    async def chat(
        self,
        user_input: str,
        *,
        system_prompt: str | None = None,
        conversation: Sequence[CLIverMessage] | None = None,
        extra_tools: Sequence[Any] | None = None,
        tool_filter: Callable[[CLIverTool], bool] | None = None,
        options: dict[str, Any] | None = None,
        max_iterations: int = 50,
        on_event: EventHandler | None = None,
        context_compactor: Compactor | None = _UNSET,
        run_timeout: float | None = _UNSET,
    ) -> CLIverResponse:
        """Run the loop until the model answers without tool calls.

        Args:
            user_input: the user's message, appended after ``conversation``.
            system_prompt: appended to ``builtin_system_prompt`` in the one system message.
            conversation: prior history (a leading system message joins the system prompt).
            extra_tools: more tools for this call.
            tool_filter: keeps the tools it returns True for.
            options: call options over the binding's ``params`` (``temperature``,
                ``max_tokens``, ``tool_choice``...; unknown keys go to the SDK call as they
                are).
            max_iterations: model calls at most.
            on_event: this call's event handler (after the agent's).
            context_compactor: this call's compactor; ``None`` disables the agent's default.
            run_timeout: this call's budget in seconds (``None``: no limit).

        Returns:
            The final message, ``usage`` (last call), ``usage_total``, ``run_id`` and the
            final ``messages``.

        Raises:
            ConfigError: a bad argument or conversation (``ValueError``).
            CompactionError: the compactor's result breaks the contract (before the call).
            ModelError: the model failed on every binding it was tried on.
            RunTimeout: ``run_timeout`` ran out.
        """
        spec = self._spec(
            user_input,
            system_prompt=system_prompt,
            conversation=conversation,
            extra_tools=extra_tools,
            tool_filter=tool_filter,
            options=options,
            max_iterations=max_iterations,
            on_event=on_event,
            context_compactor=context_compactor,
            run_timeout=run_timeout,
        )
        return await Run(spec).chat()

    async def stream(
        self,
        user_input: str,
        *,
        system_prompt: str | None = None,
        conversation: Sequence[CLIverMessage] | None = None,
        extra_tools: Sequence[Any] | None = None,
        tool_filter: Callable[[CLIverTool], bool] | None = None,
        options: dict[str, Any] | None = None,
        max_iterations: int = 50,
        on_event: EventHandler | None = None,
        context_compactor: Compactor | None = _UNSET,
        run_timeout: float | None = _UNSET,
    ) -> AsyncIterator[CLIverMessageChunk]:
        """As :meth:`chat`, yielding chunks; the last chunk carries the trace as JSON in
        ``vendor_ext["__llm_trace__"]`` (each entry with its ``usage_total``), and
        ``usage`` (the run's total) and ``run_id``."""
        spec = self._spec(
            user_input,
            system_prompt=system_prompt,
            conversation=conversation,
            extra_tools=extra_tools,
            tool_filter=tool_filter,
            options=options,
            max_iterations=max_iterations,
            on_event=on_event,
            context_compactor=context_compactor,
            run_timeout=run_timeout,
        )
        async for chunk in Run(spec).stream():
            yield chunk

    async def run_skill(
        self,
        skill: Skill | str,
        user_input: str,
        *,
        system_prompt: str | None = None,
        conversation: Sequence[CLIverMessage] | None = None,
        extra_tools: Sequence[Any] | None = None,
        options: dict[str, Any] | None = None,
        max_iterations: int = 50,
        on_event: EventHandler | None = None,
        context_compactor: Compactor | None = _UNSET,
        run_timeout: float | None = _UNSET,
    ) -> CLIverResponse:
        """Run one skill: its instructions join the system message after ``system_prompt``
        and its ``allowed-tools`` (when it lists any) narrow the tools; otherwise as
        :meth:`chat`.

        Args:
            skill: a :class:`Skill`, or a name looked up in ``skill_manager``.

        Raises:
            SkillNotFoundError: no skill has that name.
            SkillError: no skill manager, or none of the allowed tools is available.
        """
        if isinstance(skill, str):
            if self.skill_manager is None:
                raise SkillError("run_skill: no skill_manager was given to AgentCore")
            found = self.skill_manager.get_skill(skill)
            if found is None:
                names = ", ".join(self.skill_manager.get_skill_names()) or "(none)"
                raise SkillNotFoundError(f"skill {skill!r} not found; available: {names}")
            skill = found
        if not isinstance(skill, Skill):
            raise SkillError(f"run_skill: skill must be a Skill or a name, got {type(skill)}")
        allowed = frozenset(skill.allowed_tools)
        tool_filter = None
        if allowed:
            available = {
                t.name
                for t in [*self.tool_registry.all_tools, *tool_list(extra_tools, "extra_tools")]
            }
            if not allowed & available:
                raise SkillError(
                    f"skill {skill.name!r} allows only {sorted(allowed)}, none of which is "
                    f"available (available: {sorted(available)})"
                )

            def tool_filter(t: CLIverTool) -> bool:
                return t.name in allowed

        combined = "\n\n".join(p for p in (system_prompt, skill_prompt(skill)) if p)
        spec = self._spec(
            user_input,
            system_prompt=combined,
            conversation=conversation,
            extra_tools=extra_tools,
            tool_filter=tool_filter,
            options=options,
            max_iterations=max_iterations,
            on_event=on_event,
            context_compactor=context_compactor,
            run_timeout=run_timeout,
        )
        return await Run(spec).chat()

    async def chat_structured(
        self,
        user_input: str,
        response_format: Any,
        *,
        system_prompt: str | None = None,
        conversation: Sequence[CLIverMessage] | None = None,
        extra_tools: Sequence[Any] | None = None,
        options: dict[str, Any] | None = None,
        max_iterations: int = 50,
        on_event: EventHandler | None = None,
        context_compactor: Compactor | None = _UNSET,
        run_timeout: float | None = _UNSET,
    ) -> CLIverResponse:
        """As :meth:`chat`, with the reply's shape given: ``response.parsed`` is the
        validated reply (an instance of the pydantic model, or the dict for a JSON schema).

        The schema goes to the provider as its structured-output format (OpenAI
        ``json_schema``, Gemini ``responseSchema``...). A reply that does not validate gets
        one repair retry: the model sees what was wrong and answers again (one more loop
        iteration, so the compactor runs before it as before any model call).

        Args:
            response_format: a pydantic model class or a JSON schema dict.

        Raises:
            ModelOutputInvalid: the reply is still invalid after the repair retry.
            As :meth:`chat` otherwise.
        """
        spec = self._spec(
            user_input,
            system_prompt=system_prompt,
            conversation=conversation,
            extra_tools=extra_tools,
            tool_filter=None,
            options=options,
            max_iterations=max_iterations,
            on_event=on_event,
            context_compactor=context_compactor,
            run_timeout=run_timeout,
            output=OutputSpec(response_format),
        )
        return await Run(spec).chat()

    async def aclose(self) -> None:
        """Close the providers the bindings built (given ``provider=`` ports stay open)."""
        await self.bindings.aclose()

    async def __aenter__(self) -> AgentCore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
