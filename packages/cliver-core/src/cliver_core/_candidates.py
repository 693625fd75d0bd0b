"""What one call offers the model: its tools and skills, as 0.3.0a5 gathers them.

The order is 0.3.0a5's (``AgentCore._candidate_pool`` / ``_finalize_tools`` /
``_skill_catalog_text``):

1. the registry's tools, then the call's ``extra_tools`` (a later tool of a name replaces an
   earlier one: an extra tool overrides a builtin, and the model never sees a name twice);
2. ``candidate_selector(tools, skills, query)`` narrows tools and skills together;
3. ``tool_selector(tools, query)`` narrows the tools, then the call's ``tool_filter``;
4. with skill dispatch on, ``FindSkills`` and ``ActivateSkill`` are added after the filter
   (their names are reserved), and the skill catalog joins the system prompt
   (``skill_selector`` ranks it, else it is sorted by name; at most ``skill_summary_limit``).

Selectors may be sync or async.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cliver_core._tools import CLIverTool
from cliver_core.skill_tools import (
    READ_SKILL_FILE_TOOL,
    SKILL_TOOL_NAMES,
    SkillRunState,
    format_skill_catalog,
    make_activate_skill_tool,
    make_find_skills_tool,
    make_read_skill_file_tool,
)

if TYPE_CHECKING:
    from cliver_core._skills import Skill, SkillManager

__all__ = ["CandidateSelector", "Offer", "ToolSelector", "gather", "narrowing"]

#: ``tool_selector(tools, query)``: the tools to advertise for this query (sync or async).
ToolSelector = Callable[[Sequence[CLIverTool], str], Any]
#: ``candidate_selector(tools, skills, query)``: ``(tools, skills)`` for this query (sync or
#: async); the one seam that sees both, e.g. to hide a skill a tool already covers.
CandidateSelector = Callable[[Sequence[CLIverTool], Sequence[Any], str], Any]


async def _resolved(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _unique(tools: Sequence[CLIverTool]) -> list[CLIverTool]:
    by_name: dict[str, CLIverTool] = {}
    for t in tools:
        by_name.pop(t.name, None)
        by_name[t.name] = t
    return list(by_name.values())


@dataclass
class Offer:
    """The tools of a call, the skill catalog for its system prompt, and the run's skill
    state (``None`` when dispatch is off)."""

    tools: list[CLIverTool]
    catalog: str | None
    state: Any


async def gather(
    *,
    registry: Sequence[CLIverTool],
    extra: Sequence[CLIverTool],
    query: str,
    tool_filter: Callable[[CLIverTool], bool] | None,
    tool_selector: ToolSelector | None,
    candidate_selector: CandidateSelector | None,
    skill_manager: SkillManager | None,
    skill_dispatch: bool,
    skill_selector: Any = None,
    skill_search: Any = None,
    skill_summary_limit: int = 10,
) -> Offer:
    """The call's offer, built in 0.3.0a5's order (see the module docstring).

    Raises:
        ValueError: a regular tool takes a name reserved for skill dispatch.
    """
    state = SkillRunState() if skill_dispatch and skill_manager is not None else None
    tools = _unique([*registry, *extra])
    skills: list[Skill] = list(skill_manager.list_skills()) if state and skill_manager else []
    narrowed_skills: list[Skill] | None = None
    if candidate_selector is not None:
        picked = await _resolved(candidate_selector(tools, skills, query))
        tools, narrowed_skills = list(picked[0]), list(picked[1])
    if tool_selector is not None:
        tools = list(await _resolved(tool_selector(tools, query)))
    if tool_filter is not None:
        tools = [t for t in tools if tool_filter(t)]
    catalog: str | None = None
    if state is not None and skill_manager is not None:
        regular = {t.name for t in tools}
        taken = regular & SKILL_TOOL_NAMES
        if taken:
            raise ValueError(
                f"tool name(s) {sorted(taken)} are reserved for skill dispatch — "
                "rename the tool or configure no skill_manager"
            )
        tools = [
            *tools,
            make_find_skills_tool(skill_manager, skill_search),
            make_activate_skill_tool(skill_manager, state, regular),
        ]
        everything = skill_manager.list_skills()
        if everything:
            selected = list(narrowed_skills if narrowed_skills is not None else everything)
            if skill_selector is not None:
                selected = list(await _resolved(skill_selector(selected, query)))
            elif candidate_selector is None:
                selected.sort(key=lambda skill: skill.name)
            catalog = format_skill_catalog(selected[:skill_summary_limit], total=len(everything))
    return Offer(tools=tools, catalog=catalog, state=state)


def narrowing(state: Any) -> Callable[[list[CLIverTool]], list[CLIverTool]] | None:
    """After a tool batch: once the model activated a skill, its ``allowed-tools`` (when it
    lists any) narrow the next iteration's tools, and a skill with bundled files adds
    ``ReadSkillFile`` (0.3.0a5's ``_narrow_tools_for_active_skill``). ``None`` without
    dispatch."""
    if state is None:
        return None

    def retool(tools: list[CLIverTool]) -> list[CLIverTool]:
        if state.active is None or state.narrowed:
            return tools
        state.narrowed = True
        allowed = frozenset(state.active.allowed_tools or ())
        if allowed:
            tools = [t for t in tools if t.name in allowed]
        if state.active.files and not any(t.name == READ_SKILL_FILE_TOOL for t in tools):
            tools = [*tools, make_read_skill_file_tool(state)]
        return tools

    return retool
