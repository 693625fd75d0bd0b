"""Agent Skills (``SKILL.md`` folders): loading, validation and the manager.

A skill is a folder holding a ``SKILL.md`` (Markdown with a YAML-like frontmatter: ``name``,
``description``, optionally ``license``, ``compatibility``, ``metadata`` and
``allowed-tools``) and any bundled files (``scripts/``, ``references/``, ``assets/``...).
Everything here follows cliver-core 0.3.0a5's ``cliver_core.skill`` (field order, defaults,
discovery, skip-and-log rules, error texts and log messages), so a program written against
0.3.0a5 runs unchanged; the public module is :mod:`cliver_core.skill`.

The frontmatter reader is 0.3.0a5's dependency-free YAML subset, reimplemented: top-level
``key: value`` lines, quoted strings (quotes dropped, no escapes), ``[a, b]`` flow lists,
``>`` (folded) and ``|`` (literal) blocks, and nested maps of any depth. ``- item``
sequences, anchors and the rest of YAML are not read (as in 0.3.0a5), so a block list under
``allowed-tools:`` gives no allowlist.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "SKILL_FILENAME",
    "Skill",
    "SkillError",
    "SkillManager",
    "SkillNotFoundError",
    "SkillValidationResult",
    "skill_prompt",
    "validate_skill",
    "validate_skill_name",
]

# 0.3.0a5 logs under its module's name; programs configure that logger.
logger = logging.getLogger("cliver_core.skill")

SKILL_FILENAME = "SKILL.md"

# The spec's name: 1-64 of [a-z0-9], single hyphens inside only.
_NAME_PATTERN = re.compile(r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,63}")
# ``key: >`` / ``key: |`` (with an optional chomping sign) opens a block scalar.
_BLOCK_SCALAR = re.compile(r"[>|][+-]?")


class SkillError(Exception):
    """A skill cannot be loaded, read or run.

    A plain ``Exception``, as 0.3.0a5's: not a ``ValueError``, so an ``except ValueError``
    (or ``except ConfigError``) written around other code does not swallow it.
    """


class SkillNotFoundError(SkillError):
    """No skill has the requested name (raised by ``AgentCore.run_skill``)."""


# ── Validation ───────────────────────────────────────────────────────────────────────


@dataclass
class SkillValidationResult:
    """What :func:`validate_skill` found (as 0.3.0a5's).

    Attributes:
        errors: spec violations (the skill still loads).
        warnings: softer findings (length overruns, a name/folder mismatch).
    """

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def is_valid(self) -> bool:
        """Whether there are no errors."""
        return not self.errors


def validate_skill_name(name: str) -> list[str]:
    """Check ``name`` against the Agent Skills spec (texts as 0.3.0a5's).

    Args:
        name: the skill name.

    Returns:
        The problems found; empty when the name is valid.
    """
    if not name:
        return ["name is empty"]
    problems: list[str] = []
    if len(name) > 64:
        problems.append(f"name exceeds 64 characters ({len(name)})")
    if _NAME_PATTERN.fullmatch(name) is None:
        why: list[str] = []
        if name.lower() != name:
            why.append("must be lowercase")
        if name[0] == "-" or name[-1] == "-":
            why.append("must not start or end with hyphen")
        if "--" in name:
            why.append("must not contain consecutive hyphens")
        if re.search(r"[^a-z0-9\-]", name):
            why.append("only lowercase letters, digits, and hyphens allowed")
        reason = ", ".join(why) or "does not match spec pattern"
        problems.append(f"invalid name '{name}': {reason}")
    return problems


def validate_skill(skill: Skill) -> SkillValidationResult:
    """Check a skill against the Agent Skills spec (rules and texts as 0.3.0a5's).

    A bad name or a missing description is an error; a description over 1024 characters,
    a compatibility over 500, a body over 500 lines or a name unlike the folder's is a
    warning. Neither stops the skill from loading.

    Args:
        skill: the skill.

    Returns:
        The errors and warnings.
    """
    result = SkillValidationResult(errors=validate_skill_name(skill.name))
    if skill.base_dir and skill.base_dir.name != skill.name:
        result.warnings.append(
            f"name '{skill.name}' does not match directory name '{skill.base_dir.name}'"
        )
    if not skill.description:
        result.errors.append("description is required")
    elif len(skill.description) > 1024:
        result.warnings.append(f"description exceeds 1024 characters ({len(skill.description)})")
    if skill.compatibility and len(skill.compatibility) > 500:
        result.warnings.append(f"compatibility exceeds 500 characters ({len(skill.compatibility)})")
    if skill.body and len(skill.body.splitlines()) > 500:
        result.warnings.append("body exceeds recommended 500 lines")
    return result


# ── The skill ────────────────────────────────────────────────────────────────────────


@dataclass
class Skill:
    """One skill read from a ``SKILL.md`` (fields, order and defaults as 0.3.0a5's).

    Attributes:
        name: its name (the frontmatter's ``name``).
        description: when to use it.
        body: the Markdown below the frontmatter (the instructions).
        base_dir: the folder holding ``SKILL.md`` (and the bundled files).
        frontmatter: every frontmatter key as parsed, unknown ones included.
        license: the ``license`` key.
        compatibility: the ``compatibility`` key.
        metadata: the ``metadata`` map (scalars as strings; nested maps and lists kept).
        allowed_tools: the ``allowed-tools`` (space-separated, or a ``[a, b]`` list);
            ``None`` when absent, in which case the skill may use every tool.
        source: the source (as given to :class:`SkillManager`) it was found under.
    """

    name: str
    description: str
    body: str
    base_dir: Path
    frontmatter: dict[str, Any] = field(default_factory=dict)
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, Any] | None = None
    allowed_tools: list[str] | None = None
    source: str = ""

    @property
    def files(self) -> list[str]:
        """The bundled files: every file under :attr:`base_dir` but ``SKILL.md``s, as
        sorted POSIX paths relative to it (as 0.3.0a5)."""
        base = Path(self.base_dir)
        return sorted(
            p.relative_to(base).as_posix()
            for p in base.rglob("*")
            if p.name != SKILL_FILENAME and p.is_file()
        )

    def read_file(self, relative_path: str, *, max_bytes: int | None = None) -> str:
        """One bundled file's text (UTF-8).

        As 0.3.0a5: the path is resolved (symlinks followed) and must stay inside
        :attr:`base_dir`, so ``../x``, an absolute path or a link out is refused.

        Args:
            relative_path: the path relative to :attr:`base_dir` (``references/api.md``).
            max_bytes: refuse a file larger than this (``None``: no limit).

        Raises:
            SkillError: the path escapes the folder, is not a file, or is too large.
            UnicodeDecodeError: the file is not UTF-8 text.
        """
        root = Path(self.base_dir).resolve()
        target = (Path(self.base_dir) / relative_path).resolve()
        if not target.is_relative_to(root):
            raise SkillError(f"{relative_path!r} escapes the skill directory")
        if not target.is_file():
            raise SkillError(f"{relative_path!r} is not a file in skill '{self.name}'")
        if max_bytes is not None and target.stat().st_size > max_bytes:
            raise SkillError(f"{relative_path!r} exceeds {max_bytes} bytes in skill '{self.name}'")
        return target.read_text(encoding="utf-8")

    @classmethod
    def from_file(cls, path: str | Path, source: str = "") -> Skill:
        """The skill of one ``SKILL.md`` (not in 0.3.0a5; the loading rules are its).

        Args:
            path: the ``SKILL.md``.
            source: the :attr:`source` label.

        Raises:
            SkillError: the file cannot be read, or has no frontmatter or no ``name``.
        """
        loaded = _load_skill_file(Path(path), source, strict=True)
        assert loaded is not None  # strict: raised instead
        return loaded


def skill_prompt(skill: Skill) -> str:
    """The skill as a part of the system prompt: ``# Skill: <name>``, the description,
    then the body.

    Not in 0.3.0a5 and not its text: 0.3.0a5's ``run_skill`` and ``ActivateSkill`` use
    :func:`cliver_core.skill_tools.format_skill_body` (``# Active skill: <name>`` and the
    skill's location, no description).
    """
    head = f"# Skill: {skill.name}"
    if skill.description:
        head += f"\n{skill.description}"
    return f"{head}\n\n{skill.body}".strip()


# ── Frontmatter (0.3.0a5's YAML subset) ──────────────────────────────────────────────


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def _unquote(text: str) -> str:
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _scalar(text: str) -> str | list[str]:
    """A one-line value: ``[a, 'b']`` is a list of strings, anything else a string with
    its surrounding quotes dropped."""
    if not (text.startswith("[") and text.endswith("]")):
        return _unquote(text)
    inner = text[1:-1].strip()
    if not inner:
        return []
    return [_unquote(item.strip()) for item in inner.split(",")]


def _indented_block(lines: list[str], start: int, parent: int) -> tuple[list[str], int]:
    """The lines from ``start`` indented deeper than ``parent`` (blank lines included),
    cut to the first one's indentation, blank lines at either end dropped; and the index
    past them."""
    end = start
    while end < len(lines) and (not lines[end].strip() or _indent_of(lines[end]) > parent):
        end += 1
    block = [line if line.strip() else "" for line in lines[start:end]]
    filled = [k for k, line in enumerate(block) if line]
    if not filled:
        return [], end
    block = block[filled[0] : filled[-1] + 1]
    cut = _indent_of(block[0])
    return [line[cut:] for line in block], end


def _fold(block: list[str]) -> str:
    """A ``>`` block: lines of a paragraph joined by a space; each blank line ends the
    paragraph with two newlines (0.3.0a5's folding, which differs from YAML's on several
    blank lines in a row)."""
    text = ""
    for line in block:
        if not line:
            text = f"{text.rstrip(' ')}\n\n"
        elif text and not text.endswith("\n"):
            text = f"{text} {line}"
        else:
            text += line
    return text.strip()


def _mapping(lines: list[str], *, top: bool) -> dict[str, Any]:
    """``key: value`` lines as a dict, a key with an indented block under it a nested map.

    At the top level indented lines outside any block are ignored and keys are stripped;
    inside a nested map every line is a candidate key and a key keeps any spaces before
    its colon (both as 0.3.0a5).
    """
    out: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        indent = _indent_of(line)
        if top and indent:
            continue
        key, colon, rest = text.partition(":")
        if not colon or not key.strip():
            continue
        if top:
            key = key.strip()
        rest = rest.strip()
        if _BLOCK_SCALAR.fullmatch(rest):
            block, i = _indented_block(lines, i, indent)
            out[key] = _fold(block) if rest.startswith(">") else "\n".join(block).strip()
        elif rest:
            out[key] = _scalar(rest)
        else:
            block, i = _indented_block(lines, i, indent)
            out[key] = _mapping(block, top=False) if block else None
    return out


def _split_frontmatter(content: str) -> tuple[str, str] | None:
    """``(frontmatter, body)`` of a ``SKILL.md``: it starts with ``---`` and the
    frontmatter ends at the next ``---`` line; ``None`` otherwise. A BOM and CRLFs are
    dropped, the body stripped."""
    content = content.removeprefix("\ufeff").replace("\r\n", "\n")
    if not content.startswith("---"):
        return None
    lines = content.split("\n")
    for k, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:k]), "\n".join(lines[k + 1 :]).strip()
    return None


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter text (between the ``---`` lines) as 0.3.0a5 reads it.

    Values are strings, lists of strings (``[a, b]``), nested dicts or ``None`` (a key with
    nothing after it and nothing indented under it).
    """
    return _mapping(text.split("\n"), top=True)


def _allowed_tools(frontmatter: dict[str, Any]) -> list[str] | None:
    raw = frontmatter.get("allowed-tools")
    if isinstance(raw, str):
        return raw.split() or None
    if isinstance(raw, list):
        return [str(t) for t in raw]
    return None


def _metadata(raw: object) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    return {
        str(k): v if isinstance(v, dict | list) or v is None else str(v) for k, v in raw.items()
    }


def _optional_text(raw: object) -> str | None:
    return None if raw is None else str(raw).strip()


def _reject(strict: bool, message: str, *args: object) -> None:
    if strict:
        raise SkillError(message % args)
    logger.warning(message, *args)


def _load_skill_file(path: Path, source: str, *, strict: bool = False) -> Skill | None:
    """The skill of ``path``, or ``None`` with a warning (``strict``: a :class:`SkillError`)
    when it cannot be read, has no closed frontmatter, or has no ``name`` (as 0.3.0a5; a
    file that is not UTF-8 is skipped too, where 0.3.0a5 raises ``UnicodeDecodeError``)."""
    try:
        content = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _reject(strict, "Could not read %s: %s", path, exc)
        return None
    parts = _split_frontmatter(content)
    if parts is None:
        _reject(strict, "Skill file %s has missing or unclosed YAML frontmatter", path)
        return None
    front = parse_frontmatter(parts[0])
    raw_name = front.get("name")
    if not raw_name or not str(raw_name).strip():
        _reject(strict, "Skill file %s is missing the required 'name' field", path)
        return None
    name = str(raw_name).strip()
    skill = Skill(
        name,
        str(front.get("description") or "").strip(),
        parts[1],
        path.parent,
        frontmatter=front,
        license=_optional_text(front.get("license")),
        compatibility=_optional_text(front.get("compatibility")),
        metadata=_metadata(front.get("metadata")),
        allowed_tools=_allowed_tools(front),
        source=source,
    )
    checked = validate_skill(skill)
    for warning in checked.warnings:
        logger.info("Skill '%s' validation warning: %s", name, warning)
    for error in checked.errors:
        logger.info(
            "Skill '%s' validation issue: %s (loaded anyway for compatibility)", name, error
        )
    if not skill.description:
        logger.warning("Skill '%s' has no description — the model won't know when to use it", name)
    return skill


def _skills_in(path: Path, label: str) -> dict[str, Skill]:
    """The skills of one source: a folder holding ``SKILL.md`` is one skill; any other
    folder holds skill folders one level down (sorted; a later one of a name wins). As
    0.3.0a5, plus: a source that is a ``SKILL.md`` file is that one skill."""
    if path.is_file() and path.name == SKILL_FILENAME:
        candidates = [path]
    elif not path.is_dir():
        return {}  # silently, as 0.3.0a5
    elif (path / SKILL_FILENAME).is_file():
        candidates = [path / SKILL_FILENAME]
    else:
        candidates = [
            child / SKILL_FILENAME
            for child in sorted(path.iterdir())
            if child.is_dir() and (child / SKILL_FILENAME).is_file()
        ]
    found: dict[str, Skill] = {}
    for candidate in candidates:
        skill = _load_skill_file(candidate, label)
        if skill is not None:
            found[skill.name] = skill
    return found


class SkillManager:
    """The skills of the sources an application names (as 0.3.0a5's ``SkillManager``).

    Each source is a folder of skill folders (``<source>/<skill>/SKILL.md``) or one skill's
    folder (``<source>/SKILL.md``); nothing outside the sources is read. A later source's
    skill replaces an earlier one of the same name (keeping its place in the order).
    Sources are read on first use (once, thread-safe) and again after :meth:`reload`. A
    ``SKILL.md`` that cannot be loaded (no frontmatter, no ``name``, unreadable) is
    skipped with a warning on the ``cliver_core.skill`` logger.

    Args:
        sources: the folders (``~`` expanded). Beyond 0.3.0a5: a single ``str`` / ``Path``
            is taken as one source (0.3.0a5 iterates its characters), and a path to a
            ``SKILL.md`` file is that one skill.
    """

    def __init__(self, sources: Sequence[str | Path] | str | Path | None = None) -> None:
        if isinstance(sources, str | Path):
            sources = [sources]
        self._sources = [(Path(s).expanduser(), str(s)) for s in sources or ()]
        self._skills: dict[str, Skill] | None = None
        self._lock = threading.Lock()

    def _loaded(self) -> dict[str, Skill]:
        skills = self._skills
        if skills is not None:
            return skills
        with self._lock:
            if self._skills is None:
                merged: dict[str, Skill] = {}
                for path, label in self._sources:
                    merged.update(_skills_in(path, label))
                if merged:
                    logger.info("Loaded %d skill(s): %s", len(merged), sorted(merged))
                else:
                    logger.debug("No skills found in %d source(s)", len(self._sources))
                self._skills = merged
            return self._skills

    def list_skills(self) -> list[Skill]:
        """Every skill, in discovery order (sources in order, folders sorted by name)."""
        return list(self._loaded().values())

    def get_skill(self, name: str) -> Skill | None:
        """The skill called ``name``, or ``None``."""
        return self._loaded().get(name)

    def get_skill_names(self) -> list[str]:
        """Every skill's name, in discovery order."""
        return list(self._loaded())

    def reload(self) -> None:
        """Forget the loaded skills; the sources are read again on next use."""
        with self._lock:
            self._skills = None
