"""Skills from a folder, written against cliver-core 0.3.0a5: SkillManager(sources=[...]) over
``skills/`` (SKILL.md files with nested metadata, a folded and a literal description, a bundled
reference, allowed-tools as a string and as a list), the routing metadata and catalogue,
run_skill by name and by Skill object (allowed-tools narrowing the tools), an unknown skill,
and model-driven dispatch in chat(): FindSkills, ActivateSkill (twice: one skill per run),
ReadSkillFile.

The model endpoint is $CLIVER_COMPAT_OPENAI_URL; prints one JSON object.
"""

import asyncio
import json
import os
from pathlib import Path

from cliver_core import (
    AgentCore,
    ModelBinding,
    ModelBindings,
    SkillError,
    SkillManager,
    SkillNotFoundError,
    tool,
)
from cliver_core.events import ToolEvent
from cliver_core.skill_tools import format_skill_catalog

SKILLS = Path(__file__).resolve().parent / "skills"


@tool(description="Look an order up by its id.", safety="safe")
def lookup_order(order_id: str) -> list[dict]:
    return [{"text": f"order {order_id}: delivered 3 days ago, 59.90 EUR"}]


@tool(description="Refund an order.")
def issue_refund(order_id: str, amount: float) -> list[dict]:
    return [{"text": f"refunded {amount:.2f} EUR on order {order_id}"}]


@tool(description="The current time.", safety="safe")
def get_time() -> list[dict]:
    return [{"text": "12:00"}]


def describe_error(error: Exception) -> dict:
    return {
        "type": type(error).__name__,
        "is_skill_error": isinstance(error, SkillError),
        "names_the_skill": "nope" in str(error),
    }


async def main() -> None:
    manager = SkillManager(sources=[SKILLS])
    skills = manager.list_skills()
    catalog = [
        {
            "name": s.name,
            "description": s.description,
            "license": s.license,
            "compatibility": s.compatibility,
            "metadata": s.metadata,
            "allowed_tools": s.allowed_tools,
            "frontmatter": s.frontmatter,
            "files": s.files,
            "dir": s.base_dir.name,
            "source": s.source,
            "body": s.body,
        }
        for s in skills
    ]
    policy = manager.get_skill("policy-lookup")
    try:
        policy.read_file("../refund/SKILL.md")
        escape = "read"
    except SkillError as e:
        escape = type(e).__name__

    events: list[list] = []

    async def watch(event) -> None:
        if isinstance(event, ToolEvent):
            events.append([event.event.value, event.tool_name])

    bindings = ModelBindings(
        llm=ModelBinding.llm(
            model="gpt-4o", api_key="test", base_url=os.environ["CLIVER_COMPAT_OPENAI_URL"]
        )
    )
    agent = AgentCore(
        bindings,
        builtin_tools=[lookup_order, issue_refund, get_time],
        skill_manager=manager,
        skill_summary_limit=2,
        on_event=watch,
    )
    by_name = await agent.run_skill("refund", "Order 12345 arrived broken, I want my money back.")
    by_object = await agent.run_skill(
        manager.get_skill("shipping-times"),
        "When does order 777 arrive?",
        system_prompt="Be brief.",
    )
    try:
        await agent.run_skill("nope", "hello")
        unknown = {"type": None}
    except SkillNotFoundError as e:
        unknown = describe_error(e)
    dispatched = await agent.chat("Can I return an opened item?")
    await agent.aclose()

    print(
        json.dumps(
            {
                "names": manager.get_skill_names(),
                "skills": catalog,
                "catalog_text": format_skill_catalog(skills, total=len(skills)),
                "reference": policy.read_file("references/policy.md"),
                "escape": escape,
                "run_skill_by_name": by_name.message.content,
                "run_skill_by_object": by_object.message.content,
                "unknown_skill": unknown,
                "dispatched": dispatched.message.content,
                "events": events,
            },
            indent=1,
            default=str,
        )
    )


asyncio.run(main())
