"""Skills: named instruction sets (``SKILL.md`` files) run as part of the system prompt.

A ``SKILL.md`` (the Agent Skills layout Anthropic publishes for Claude) is a Markdown file
with a YAML frontmatter holding ``name``, ``description`` and optionally ``allowed-tools``;
the body is the instructions. :meth:`AgentCore.run_skill` appends the body to the core-owned
system message and narrows the tools to ``allowed-tools`` when the skill lists any.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_adapter import ConfigError

__all__ = ["Skill", "SkillError", "SkillManager", "SkillNotFoundError", "skill_prompt"]

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)


class SkillError(ConfigError):
    """A skill cannot be loaded or run."""


class SkillNotFoundError(SkillError):
    """No skill has the requested name."""


def _frontmatter(text: str, where: str) -> tuple[dict[str, object], str]:
    """The frontmatter keys (``key: value``, ``key: [a, b]`` or a ``- item`` list) and the
    body. Only the flat keys a SKILL.md uses are read."""
    match = _FRONT.match(text)
    if match is None:
        return {}, text
    keys: dict[str, object] = {}
    current: str | None = None
    for raw in match.group(1).splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = re.match(r"^\s+-\s+(.*)$", line) or re.match(r"^-\s+(.*)$", line)
        if item and current is not None:
            value = keys.setdefault(current, [])
            if isinstance(value, list):
                value.append(item.group(1).strip().strip("'\""))
            continue
        pair = re.match(r"^([A-Za-z0-9_-]+)\s*:\s*(.*)$", line)
        if pair is None:
            raise SkillError(f"{where}: cannot read the frontmatter line {raw!r}")
        current, value_text = pair.group(1), pair.group(2).strip()
        if value_text.startswith("[") and value_text.endswith("]"):
            keys[current] = [
                v.strip().strip("'\"") for v in value_text[1:-1].split(",") if v.strip()
            ]
        elif value_text:
            keys[current] = value_text.strip("'\"")
        else:
            keys[current] = []
    return keys, text[match.end() :]


@dataclass(frozen=True)
class Skill:
    """One skill.

    Attributes:
        name: its name.
        description: when to use it.
        body: the instructions.
        allowed_tools: the tools it may use (empty: all the agent has).
        base_dir: the folder it was loaded from.
    """

    name: str
    description: str = ""
    body: str = ""
    allowed_tools: tuple[str, ...] = ()
    base_dir: Path | None = field(default=None, compare=False)

    @classmethod
    def from_file(cls, path: str | Path) -> Skill:
        """A skill from a ``SKILL.md`` (its folder's name when the frontmatter has none).

        Raises:
            SkillError: the file cannot be read or its frontmatter parsed.
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as e:
            raise SkillError(f"cannot read skill {p}: {e}") from e
        keys, body = _frontmatter(text, str(p))
        tools = keys.get("allowed-tools", keys.get("allowed_tools", []))
        if isinstance(tools, str):
            tools = [t for t in re.split(r"[,\s]+", tools) if t]
        name = keys.get("name") or p.parent.name
        return cls(
            name=str(name),
            description=str(keys.get("description", "")),
            body=body.strip(),
            allowed_tools=tuple(str(t) for t in tools) if isinstance(tools, list) else (),
            base_dir=p.parent,
        )


def skill_prompt(skill: Skill) -> str:
    """The skill as the system prompt's part."""
    head = f"# Skill: {skill.name}"
    if skill.description:
        head += f"\n{skill.description}"
    return f"{head}\n\n{skill.body}".strip()


class SkillManager:
    """The skills found under some folders (each ``<folder>/<skill>/SKILL.md``).

    Args:
        paths: folders to look in, or ``SKILL.md`` files; later ones win on a name clash.
    """

    def __init__(self, paths: Sequence[str | Path] = ()) -> None:
        self._skills: dict[str, Skill] = {}
        for path in paths:
            p = Path(path)
            files = [p] if p.is_file() else sorted(p.glob("*/SKILL.md"))
            for file in files:
                skill = Skill.from_file(file)
                self._skills[skill.name] = skill

    def add(self, skill: Skill) -> None:
        """Add or replace ``skill``."""
        self._skills[skill.name] = skill

    def get_skill(self, name: str) -> Skill | None:
        """The skill called ``name``."""
        return self._skills.get(name)

    def get_skill_names(self) -> list[str]:
        """The names, sorted."""
        return sorted(self._skills)

    def list_skills(self) -> list[Skill]:
        """The skills, sorted by name."""
        return [self._skills[n] for n in self.get_skill_names()]
