"""AgentCore: the tool-calling loop with a pluggable context compactor, on the shared model
layer (providers, messages, compression engine and ledger of :mod:`agent_adapter`).

The constructor and the ``chat`` / ``stream`` / ``run_skill`` keyword arguments are
cliver-core 0.3.0a5's, in its order, with this version's additions after them
(``context_compactor``, ``run_timeout``, ``parallel_tools``, ``validate_conversation``,
``inference_events``).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agent_adapter import ConfigError, Message
from cliver_core._candidates import CandidateSelector, Offer, ToolSelector, gather, narrowing
from cliver_core._compaction import validate_history
from cliver_core._embedded_api import EmbeddedModelsMixin
from cliver_core._events import EventHandler
from cliver_core._format import from_message, to_messages
from cliver_core._messages import CLIverMessage, CLIverMessageChunk, CLIverResponse
from cliver_core._model_bindings import ModelBindings, misplaced
from cliver_core._run import Compactor, PermissionCallback, Run, RunSpec
from cliver_core._skills import Skill, SkillError, SkillManager, SkillNotFoundError
from cliver_core._structured import OutputSpec
from cliver_core._tools import CLIverTool, ToolRegistry, tool_list
from cliver_core.media import add_media_content_to_message_parts
from cliver_core.policy import ExecutionPolicy, ToolCategory
from cliver_core.skill_tools import format_skill_body

__all__ = ["AgentCore", "CandidateSelector", "ToolSelector"]


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


def _message(item: Any, index: int) -> Any:
    """A conversation item as a CLIverMessage: as it is, from an agent_adapter Message, or
    validated from a dict (0.3.0a5's pydantic list field takes dicts)."""
    if isinstance(item, Message):
        return from_message(item)
    if isinstance(item, dict):
        try:
            return CLIverMessage.model_validate(item)
        except ValueError as e:
            raise ConfigError(f"conversation[{index}]: not a message: {e}") from e
    return item


def _check_run_args(user_input: Any, max_iterations: Any) -> None:
    """A run's ``user_input`` is a str and ``max_iterations`` an int >= 0 (not a bool)."""
    if not isinstance(user_input, str):
        raise ConfigError(f"user_input must be a str, got {type(user_input).__name__}")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, int):
        raise ConfigError(f"max_iterations must be an int >= 0, got {max_iterations!r}")
    if max_iterations < 0:
        raise ConfigError(f"max_iterations must be an int >= 0, got {max_iterations!r}")


def _leading_system_texts(history: list[Any]) -> list[str]:
    """The texts of ``history``'s leading system messages, taken off it.

    They join the one system prompt (0.3.0a5 sends them as given, after its own): string
    content as it is, a list of blocks by its text (block settings such as cache_control do
    not carry over: the system prompt is one text, which the library's own cache breakpoint
    covers).
    """
    texts: list[str] = []
    while history and isinstance(history[0], CLIverMessage) and history[0].role == "system":
        lead = history.pop(0)
        text = lead.content if isinstance(lead.content, str) else to_messages([lead])[0].text
        if text:
            texts.append(text)
    return texts


class AgentCore(EmbeddedModelsMixin):
    """Call the model, run the tools it asks for, repeat; compact the history if told to.

    Example::

        agent = AgentCore(ModelBindings(llm=presets.deepseek()), [read_file],
                          context_compactor=LlmCompactor(summarizer, 60_000, 2))
        response = await agent.chat("Fix the failing test")
        response.message.content, response.usage_total, response.run_id

    The agent is stateless between calls: every call is a run of its own (its own
    ``run_id``, history, usage and deadline), so concurrent runs on one event loop never see
    each other's state. It is loop-safe, not thread-safe: use one agent per event loop.

    Behaviour follows cliver-core 0.3.0a5 unless an argument below says otherwise: the tool
    calls of one reply run one after the other, a handler's exception fails the run, and a
    caller's ``conversation`` is sent as given.

    Args:
        bindings: the models; ``bindings.llm`` (with its failover chain) runs the loop; the
            ``embed`` and ``rerank`` bindings serve :meth:`embed` and :meth:`rerank`.
        builtin_tools: tools every call may use (CLIverTool, FunctionTool or plain
            functions).
        mcp_client: a :class:`cliver_core.mcp.MCPClient` (or an object with its async
            ``start()``, ``get_tools(servers)`` and ``call_tool(name, args)``): started
            before each run, its tools (``mcp__<server>__<tool>``) offered after the
            builtin ones, and the model's calls of ``mcp__`` names sent to it, as 0.3.0a5.
        skill_manager: the skills: :meth:`run_skill` looks names up in it, and ``chat`` /
            ``stream`` advertise its catalog with ``FindSkills`` and ``ActivateSkill``
            (``skill_dispatch=False`` per call turns that off).
        skill_selector: ``(skills, query) -> skills`` ranking the catalog in the prompt.
        skill_search: ``(query, skills) -> skills`` replacing ``FindSkills``'s search.
        skill_summary_limit: skills listed in the prompt's catalog at most.
        tool_selector: ``(tools, query) -> tools`` narrowing the advertised tools.
        candidate_selector: ``(tools, skills, query) -> (tools, skills)``.
        permission_callback: asked before a tool of category ASK runs (every tool not
            ``safety="safe"``, unless ``safety_overrides`` says otherwise): given a
            :class:`~cliver_core.policy.ToolCallContext`, it returns a
            :class:`~cliver_core.policy.Decision` (or True / None to allow, False or a
            reason string to deny); sync or async. A denial's result is ``"Error:
            Permission denied: <reason>"``; a callback that raises denies.
        execution_policy: the :class:`~cliver_core.policy.ExecutionPolicy` ambient while
            tools run (a call's own wins).
        safety_overrides: tool name -> :class:`~cliver_core.policy.ToolCategory`, over each
            tool's ``safety``.
        on_event: called with every event of every run (sync or async); an exception it
            raises fails the run (as in 0.3.0a5).
        max_consecutive_errors: tool errors (or denials) in a row that stop the run (0
            stops it at the first, as 1 does: 0.3.0a5 takes 0 alike).
        builtin_system_prompt: the start of every run's system message.
        logger: the logger to use.
        context_compactor: the default compactor of every entry point (``None``: none).
        run_timeout: seconds a whole run may take, compaction model calls included
            (:class:`~cliver_core.RunTimeout`); ``None`` for no limit.
        parallel_tools: run the tool calls of one reply concurrently (results still in call
            order); default ``False``, one after the other as in 0.3.0a5.
        validate_conversation: check a caller's ``conversation`` before the first call
            (every tool call answered, every result matching a call; ``ConfigError``
            naming the message otherwise); default ``False``: sent as given, as in 0.3.0a5.
        inference_events: deliver the model-call events (``inference.started``,
            ``.first_token``, ``.tool_call``, ``.completed``, ``.error``, ``.failover``) to
            the ``on_event`` handlers too; default ``False``: tool (and compaction) events
            only, as 0.3.0a5's handlers receive.

    Raises:
        ConfigError: no llm binding, or a bad setting (a ``ValueError``).
        ValueError: a binding made for another purpose in ``bindings.llm`` or its
            fallbacks (``ModelBinding.image(...)``), as 0.3.0a5 fails.
    """

    def __init__(
        self,
        bindings: ModelBindings,
        builtin_tools: Sequence[Any] | None = None,
        mcp_client: Any = None,
        skill_manager: SkillManager | None = None,
        *,
        skill_selector: Any = None,
        skill_search: Any = None,
        skill_summary_limit: int = 10,
        tool_selector: ToolSelector | None = None,
        candidate_selector: CandidateSelector | None = None,
        permission_callback: PermissionCallback | None = None,
        execution_policy: ExecutionPolicy | None = None,
        safety_overrides: dict[str, ToolCategory] | None = None,
        on_event: EventHandler | None = None,
        max_consecutive_errors: int = 5,
        builtin_system_prompt: str | None = None,
        logger: logging.Logger | None = None,
        context_compactor: Compactor | None = None,
        run_timeout: float | None = None,
        parallel_tools: bool = False,
        validate_conversation: bool = False,
        inference_events: bool = False,
    ) -> None:
        if not isinstance(bindings, ModelBindings) or bindings.llm is None:
            raise ConfigError(
                "AgentCore requires an llm binding: ModelBindings(llm=ModelBinding.llm("
                "model='...', api_key='...', base_url='...'))"
            )
        bindings.get("llm")  # a binding made for another purpose fails fast, as in 0.3.0a5
        for i, fallback in enumerate(bindings.llm_fallbacks):
            wrong = misplaced(fallback, "llm", f"bindings.llm_fallbacks[{i}]")
            if wrong is not None:
                raise ConfigError(wrong)
        if isinstance(max_consecutive_errors, bool) or not isinstance(max_consecutive_errors, int):
            raise ConfigError("AgentCore: max_consecutive_errors must be an int >= 0")
        if max_consecutive_errors < 0:
            raise ConfigError("AgentCore: max_consecutive_errors must be an int >= 0")
        if isinstance(skill_summary_limit, bool) or not isinstance(skill_summary_limit, int):
            raise ConfigError("skill_summary_limit must be an int >= 0")
        if skill_summary_limit < 0:
            raise ConfigError("skill_summary_limit must be >= 0")
        if context_compactor is not None and not callable(context_compactor):
            raise ConfigError("AgentCore: context_compactor must be callable or None")
        self.bindings = bindings
        self.llm = bindings.llm
        self.tool_registry = ToolRegistry(tool_list(builtin_tools, "builtin_tools"))
        self.mcp_client = mcp_client
        self.skill_manager = skill_manager
        self.skill_selector = skill_selector
        self.skill_search = skill_search
        self.skill_summary_limit = skill_summary_limit
        self.tool_selector = tool_selector
        self.candidate_selector = candidate_selector
        self.permission_callback = permission_callback
        self.execution_policy = execution_policy
        self.safety_overrides = dict(safety_overrides or {})
        self.on_event = on_event
        self.max_consecutive_errors = max_consecutive_errors
        self.context_compactor = context_compactor
        self.run_timeout = _positive(run_timeout, "AgentCore: run_timeout")
        self.parallel_tools = bool(parallel_tools)
        self.validate_conversation = bool(validate_conversation)
        self.inference_events = bool(inference_events)
        self._builtin_system_prompt = builtin_system_prompt
        self.logger = logger or logging.getLogger("cliver_core.agent")

    def __repr__(self) -> str:
        return f"AgentCore({self.llm.name if self.llm else None!r})"

    # -- building a run ------------------------------------------------------------------

    async def _offer(
        self,
        user_input: str,
        extra_tools: Sequence[Any] | None,
        tool_filter: Callable[[CLIverTool], bool] | None,
        skill_dispatch: bool,
        mcp_servers: Sequence[str] | None = None,
    ) -> Offer:
        registry = list(self.tool_registry.all_tools)
        if self.mcp_client is not None:
            # 0.3.0a5: the client is started (once) before each run; its tools follow the
            # builtin ones, those of the servers named by mcp_servers when given
            await self.mcp_client.start()
            registry += await self.mcp_client.get_tools(servers=list(mcp_servers or ()) or None)
        return await gather(
            registry=registry,
            extra=tool_list(extra_tools, "extra_tools"),
            query=user_input,
            tool_filter=tool_filter,
            tool_selector=self.tool_selector,
            candidate_selector=self.candidate_selector,
            skill_manager=self.skill_manager,
            skill_dispatch=skill_dispatch,
            skill_selector=self.skill_selector,
            skill_search=self.skill_search,
            skill_summary_limit=self.skill_summary_limit,
        )

    async def _spec(
        self,
        user_input: str,
        *,
        system_prompt: str | None,
        conversation: Sequence[Any] | None,
        media: Sequence[Any] | None,
        extra_tools: Sequence[Any] | None,
        mcp_servers: Sequence[str] | None,
        tool_filter: Callable[[CLIverTool], bool] | None,
        options: dict[str, Any] | None,
        max_iterations: int,
        execution_policy: ExecutionPolicy | None,
        skill_dispatch: bool,
        on_event: EventHandler | None,
        context_compactor: Any,
        run_timeout: Any,
        output: OutputSpec | None = None,
    ) -> RunSpec:
        _check_run_args(user_input, max_iterations)
        compactor = self.context_compactor if context_compactor is _UNSET else context_compactor
        if compactor is not None and not callable(compactor):
            raise ConfigError("context_compactor must be callable or None")
        timeout = (
            self.run_timeout if run_timeout is _UNSET else _positive(run_timeout, "run_timeout")
        )
        offer = await self._offer(user_input, extra_tools, tool_filter, skill_dispatch, mcp_servers)
        history = [_message(m, i) for i, m in enumerate(conversation or ())]
        parts = [p for p in (self._builtin_system_prompt, system_prompt, offer.catalog) if p]
        parts += _leading_system_texts(history)
        if history and self.validate_conversation:
            validate_history(
                [*history, CLIverMessage(role="user", content="")], "conversation", ConfigError
            )
        history.append(self._user_message(user_input, media))
        policy = execution_policy if execution_policy is not None else self.execution_policy
        return RunSpec(
            chain=self.bindings.llm_chain,
            system="\n\n".join(parts) or None,
            history=history,
            tools=offer.tools,
            options=dict(options or {}),
            max_iterations=max_iterations,
            compactor=compactor,
            handlers=(self.on_event, on_event),
            run_timeout=timeout,
            max_consecutive_errors=self.max_consecutive_errors,
            permission_callback=self.permission_callback,
            output=output,
            parallel_tools=self.parallel_tools,
            safety_overrides=self.safety_overrides,
            execution_policy=policy,
            fallback_tools=self.tool_registry.get,
            mcp_call=self.mcp_client.call_tool if self.mcp_client is not None else None,
            retool=narrowing(offer.state),
            inference_events=self.inference_events,
            logger=self.logger,
        )

    @staticmethod
    def _user_message(user_input: str, media: Sequence[Any] | None) -> CLIverMessage:
        """The user's message; ``media`` joins it as content blocks after the text (images
        as data URLs, as 0.3.0a5 attaches them)."""
        if not media:
            return CLIverMessage(role="user", content=user_input)
        blocks: list[dict[str, Any]] = [{"type": "text", "text": user_input}]
        add_media_content_to_message_parts(blocks, list(media))
        return CLIverMessage(role="user", content=blocks)

    # -- entry points --------------------------------------------------------------------

    async def chat(
        self,
        user_input: str,
        *,
        system_prompt: str | None = None,
        conversation: Sequence[CLIverMessage] | None = None,
        media: Sequence[Any] | None = None,
        extra_tools: Sequence[Any] | None = None,
        mcp_servers: Sequence[str] | None = None,
        tool_filter: Callable[[CLIverTool], bool] | None = None,
        options: dict[str, Any] | None = None,
        max_iterations: int = 50,
        execution_policy: ExecutionPolicy | None = None,
        skill_dispatch: bool = True,
        on_event: EventHandler | None = None,
        context_compactor: Compactor | None = _UNSET,
        run_timeout: float | None = _UNSET,
    ) -> CLIverResponse:
        """Run the loop until the model answers without tool calls.

        Args:
            user_input: the user's message, appended after ``conversation``.
            system_prompt: appended to ``builtin_system_prompt`` in the one system message.
            conversation: prior history (a leading system message joins the system prompt).
            media: :class:`~cliver_core.media.MediaContent` items attached to the user's
                message as content blocks.
            extra_tools: more tools for this call (one named like a builtin replaces it).
            mcp_servers: the servers of the ``mcp_client`` whose tools are offered
                (``None``: every server's).
            tool_filter: keeps the tools it returns True for.
            options: call options over the binding's ``params`` (``temperature``,
                ``max_tokens``, ``tool_choice``...; a key the SDK does not take goes in the
                request body as it is, as 0.3.0a5 sends it).
            max_iterations: model calls at most (0: none; the run answers that it reached
                the limit, as 0.3.0a5).
            execution_policy: this call's execution policy (over the agent's).
            skill_dispatch: advertise the skill catalog, ``FindSkills`` and
                ``ActivateSkill`` (with a ``skill_manager``).
            on_event: this call's event handler (after the agent's).
            context_compactor: this call's compactor; ``None`` disables the agent's default.
            run_timeout: this call's budget in seconds (``None``: no limit).

        Returns:
            The final message (its ``trace`` one entry per iteration), ``usage`` (last call),
            ``usage_total``, ``run_id``, ``request_info`` and the final ``messages``.

        Raises:
            ConfigError: a bad argument or conversation (``ValueError``).
            CompactionError: the compactor's result breaks the contract (before the call).
            ModelError: the model failed on every binding it was tried on.
            RunTimeout: ``run_timeout`` ran out.
        """
        spec = await self._spec(
            user_input,
            system_prompt=system_prompt,
            conversation=conversation,
            media=media,
            extra_tools=extra_tools,
            mcp_servers=mcp_servers,
            tool_filter=tool_filter,
            options=options,
            max_iterations=max_iterations,
            execution_policy=execution_policy,
            skill_dispatch=skill_dispatch,
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
        media: Sequence[Any] | None = None,
        extra_tools: Sequence[Any] | None = None,
        mcp_servers: Sequence[str] | None = None,
        tool_filter: Callable[[CLIverTool], bool] | None = None,
        options: dict[str, Any] | None = None,
        max_iterations: int = 50,
        execution_policy: ExecutionPolicy | None = None,
        skill_dispatch: bool = True,
        on_event: EventHandler | None = None,
        context_compactor: Compactor | None = _UNSET,
        run_timeout: float | None = _UNSET,
    ) -> AsyncIterator[CLIverMessageChunk]:
        """As :meth:`chat`, yielding chunks; the last chunk carries the trace as JSON in
        ``vendor_ext["__llm_trace__"]`` (each entry with its ``usage_total``), and
        ``usage`` (the run's total) and ``run_id``."""
        spec = await self._spec(
            user_input,
            system_prompt=system_prompt,
            conversation=conversation,
            media=media,
            extra_tools=extra_tools,
            mcp_servers=mcp_servers,
            tool_filter=tool_filter,
            options=options,
            max_iterations=max_iterations,
            execution_policy=execution_policy,
            skill_dispatch=skill_dispatch,
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
        media: Sequence[Any] | None = None,
        extra_tools: Sequence[Any] | None = None,
        mcp_servers: Sequence[str] | None = None,
        options: dict[str, Any] | None = None,
        max_iterations: int = 50,
        execution_policy: ExecutionPolicy | None = None,
        on_event: EventHandler | None = None,
        context_compactor: Compactor | None = _UNSET,
        run_timeout: float | None = _UNSET,
    ) -> CLIverResponse:
        """Run one skill: its instructions join the system message after ``system_prompt``
        and its ``allowed-tools`` (when it lists any) narrow the tools; otherwise as
        :meth:`chat` (without skill dispatch: the skill is pinned).

        The execution policy is the call's when given; else the agent's with ``cwd`` pinned
        to the skill's folder (bundled scripts and relative paths resolve there); else none
        (0.3.0a5's rule).

        Args:
            skill: a :class:`Skill`, or a name looked up in ``skill_manager``.

        Raises:
            SkillNotFoundError: no skill has that name.
            SkillError: no skill manager, or none of the allowed tools is available.
        """
        skill = self._skill(skill)
        tool_filter = await self._skill_tool_filter(skill, user_input, extra_tools, mcp_servers)
        if execution_policy is None and self.execution_policy is not None:
            execution_policy = dataclasses.replace(self.execution_policy, cwd=skill.base_dir)
        combined = "\n\n".join(p for p in (system_prompt, format_skill_body(skill)) if p)
        spec = await self._spec(
            user_input,
            system_prompt=combined or None,
            conversation=conversation,
            media=media,
            extra_tools=extra_tools,
            mcp_servers=mcp_servers,
            tool_filter=tool_filter,
            options=options,
            max_iterations=max_iterations,
            execution_policy=execution_policy,
            skill_dispatch=False,
            on_event=on_event,
            context_compactor=context_compactor,
            run_timeout=run_timeout,
        )
        return await Run(spec).chat()

    def _skill(self, skill: Skill | str) -> Skill:
        """``run_skill``'s skill: a :class:`Skill`, or ``skill_manager``'s of that name."""
        if isinstance(skill, str):
            if self.skill_manager is None:
                raise SkillError(
                    "no SkillManager configured — pass skill_manager=... to AgentCore to "
                    "enable run_skill()"
                )
            found = self.skill_manager.get_skill(skill)
            if found is None:
                names = ", ".join(self.skill_manager.get_skill_names()) or "(none)"
                raise SkillNotFoundError(f"skill '{skill}' not found. Available skills: {names}")
            skill = found
        if not isinstance(skill, Skill):
            raise SkillError(f"run_skill: skill must be a Skill or a name, got {type(skill)}")
        return skill

    async def _skill_tool_filter(
        self,
        skill: Skill,
        user_input: str,
        extra_tools: Sequence[Any] | None,
        mcp_servers: Sequence[str] | None = None,
    ) -> Callable[[CLIverTool], bool] | None:
        """The skill's ``allowed-tools`` as a tool filter (None when it lists none); an error
        when none of them is available, a warning for those that are not."""
        allowed = frozenset(skill.allowed_tools or ())
        if not allowed:
            return None
        offer = await self._offer(user_input, extra_tools, None, False, mcp_servers)
        names_now = {t.name for t in offer.tools}
        if not allowed & names_now:
            raise SkillError(
                f"skill '{skill.name}' allows only tools {sorted(allowed)}, none of which "
                f"are available (available: {sorted(names_now)}). Register the tools or "
                "connect the MCP servers the skill needs."
            )
        dropped = sorted(allowed - names_now)
        if dropped:
            self.logger.warning(
                "skill '%s' allows tools that are not currently available (dropped for "
                "this run): %s",
                skill.name,
                ", ".join(dropped),
            )

        def tool_filter(t: CLIverTool) -> bool:
            return t.name in allowed

        return tool_filter

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
        iteration, so the compactor runs before it as before any model call). Skill dispatch
        is off.

        Args:
            response_format: a pydantic model class or a JSON schema dict.

        Raises:
            ModelOutputInvalid: the reply is still invalid after the repair retry; otherwise
                what :meth:`chat` raises.
        """
        spec = await self._spec(
            user_input,
            system_prompt=system_prompt,
            conversation=conversation,
            media=None,
            extra_tools=extra_tools,
            mcp_servers=None,
            tool_filter=None,
            options=options,
            max_iterations=max_iterations,
            execution_policy=None,
            skill_dispatch=False,
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
