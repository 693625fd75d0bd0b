"""Skills: SKILL.md loading (frontmatter, discovery, skipping), bundled files, reload, and the
dispatch pieces (catalog text, FindSkills / ActivateSkill / ReadSkillFile), against texts
written out here and, when the extracted cliver-core 0.3.0a5 wheel is at hand
(``$CLIVER_REF_DIR``, default ``/tmp/cc/x``), against 0.3.0a5 itself in a subprocess."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_adapter import ConfigError
from cliver_core import skill as skill_module
from cliver_core import skill_tools
from cliver_core._skills import skill_prompt
from cliver_core._tools import CLIverTool, format_result, run_tool
from cliver_core.skill import (
    Skill,
    SkillError,
    SkillManager,
    SkillNotFoundError,
    validate_skill,
    validate_skill_name,
)
from cliver_core.skill_tools import (
    READ_SKILL_FILE_TOOL,
    SKILL_TOOL_NAMES,
    SkillRunState,
    format_skill_body,
    format_skill_catalog,
    lexical_skill_search,
    make_activate_skill_tool,
    make_find_skills_tool,
    make_read_skill_file_tool,
)

REF_DIR = Path(os.environ.get("CLIVER_REF_DIR", "/tmp/cc/x"))

PDF_SKILL = """\
---
name: pdf-processing
description: >
  Extract text and tables from PDF files, fill forms, merge documents.
  Use when working with PDF files or when the user mentions PDFs, forms,
  or document extraction.
license: Apache-2.0
compatibility: Requires python3 and pypdf
metadata:
  author: example-org
  version: "1.2"
  x-workbuddy:
    category: documents
    tags: [pdf, forms]
allowed-tools: Bash(python:*) Read
---
# PDF processing

Run `scripts/fill.py` to fill a form; see references/forms.md.
"""

NOTES_SKILL = """\
---
name: release-notes
description: |
  Write release notes.
  One line per change.
allowed-tools: [Read, 'Write']
---
Group the changes by area.
"""


def write_skill(folder: Path, text: str, files: dict[str, str | bytes] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    for name, content in (files or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


def pdf_folder(root: Path) -> Path:
    return write_skill(
        root / "pdf-processing",
        PDF_SKILL,
        {"scripts/fill.py": "print('filled')\n", "references/forms.md": "# Forms\nField list.\n"},
    )


def text_of(result: Any) -> str:
    assert isinstance(result, list) and len(result) == 1 and set(result[0]) == {"text"}, result
    return str(result[0]["text"])


def error_of(result: Any) -> str:
    assert isinstance(result, list) and len(result) == 1 and set(result[0]) == {"error"}, result
    return str(result[0]["error"])


# ── Loading ──────────────────────────────────────────────────────────────────────────


def test_frontmatter_nested_metadata_folded_description_and_lists(tmp_path: Path) -> None:
    pdf_folder(tmp_path)
    write_skill(tmp_path / "release-notes", NOTES_SKILL)
    manager = SkillManager(sources=[tmp_path])
    assert manager.get_skill_names() == ["pdf-processing", "release-notes"]
    pdf = manager.get_skill("pdf-processing")
    assert pdf is not None
    assert pdf.description == (
        "Extract text and tables from PDF files, fill forms, merge documents. Use when "
        "working with PDF files or when the user mentions PDFs, forms, or document extraction."
    )
    assert pdf.license == "Apache-2.0"
    assert pdf.compatibility == "Requires python3 and pypdf"
    assert pdf.metadata == {
        "author": "example-org",
        "version": "1.2",
        "x-workbuddy": {"category": "documents", "tags": ["pdf", "forms"]},
    }
    assert pdf.allowed_tools == ["Bash(python:*)", "Read"]
    assert pdf.body.startswith("# PDF processing\n\nRun `scripts/fill.py`")
    assert pdf.base_dir == tmp_path / "pdf-processing"
    assert pdf.source == str(tmp_path)
    assert pdf.frontmatter["metadata"]["x-workbuddy"]["tags"] == ["pdf", "forms"]
    assert pdf.frontmatter["allowed-tools"] == "Bash(python:*) Read"
    notes = manager.get_skill("release-notes")
    assert notes is not None
    assert notes.description == "Write release notes.\nOne line per change."
    assert notes.allowed_tools == ["Read", "Write"]
    assert (notes.license, notes.compatibility, notes.metadata) == (None, None, None)


def test_skill_fields_positional_order_and_defaults(tmp_path: Path) -> None:
    names = [f.name for f in dataclasses.fields(Skill)]
    assert names == [
        "name",
        "description",
        "body",
        "base_dir",
        "frontmatter",
        "license",
        "compatibility",
        "metadata",
        "allowed_tools",
        "source",
    ]
    made = Skill("s", "does s", "do it", tmp_path)
    assert (made.frontmatter, made.license, made.metadata, made.allowed_tools) == (
        {},
        None,
        None,
        None,
    )
    assert made.source == "" and made.files == []
    with pytest.raises(TypeError):
        Skill("s", "does s", "do it")  # type: ignore[call-arg]  # base_dir is required


def test_a_source_that_is_one_skill_folder(tmp_path: Path) -> None:
    folder = pdf_folder(tmp_path / "skills")
    manager = SkillManager([folder])
    assert manager.get_skill_names() == ["pdf-processing"]
    found = manager.get_skill("pdf-processing")
    assert found is not None and found.base_dir == folder and found.source == str(folder)


def test_discovery_is_one_level_deep_and_later_sources_win(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_skill(first / "b-skill", "---\nname: shared\ndescription: from first\n---\nfirst\n")
    write_skill(first / "a-skill", "---\nname: alpha\ndescription: A\n---\na\n")
    write_skill(first / "group" / "deep", "---\nname: deep\ndescription: too deep\n---\n")
    (first / "README.md").write_text("not a skill")
    write_skill(second / "shared", "---\nname: shared\ndescription: from second\n---\nsecond\n")
    manager = SkillManager([first, second, tmp_path / "missing"])
    assert manager.get_skill_names() == ["alpha", "shared"]
    shared = manager.get_skill("shared")
    assert shared is not None and shared.body == "second" and shared.source == str(second)
    assert [s.name for s in manager.list_skills()] == ["alpha", "shared"]
    assert manager.get_skill("deep") is None


def test_skills_without_frontmatter_or_name_are_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_skill(tmp_path / "plain", "# Just markdown\nno frontmatter\n")
    write_skill(tmp_path / "unclosed", "---\nname: unclosed\ndescription: x\n")
    write_skill(tmp_path / "nameless", "---\ndescription: no name here\n---\nbody\n")
    write_skill(tmp_path / "blank-name", "---\nname: '  '\ndescription: d\n---\nbody\n")
    write_skill(tmp_path / "Bad_Folder", "---\nname: Bad_Name\n---\nstill loads\n")
    (tmp_path / "latin1").mkdir()
    (tmp_path / "latin1" / "SKILL.md").write_bytes(b"---\nname: caf\xe9\n---\n")
    pdf_folder(tmp_path)
    with caplog.at_level(logging.INFO, logger="cliver_core.skill"):
        names = SkillManager([tmp_path]).get_skill_names()
    assert names == ["Bad_Name", "pdf-processing"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert f"Skill file {tmp_path / 'plain' / 'SKILL.md'} has missing or unclosed YAML " \
        "frontmatter" in warnings  # fmt: skip
    assert f"Skill file {tmp_path / 'unclosed' / 'SKILL.md'} has missing or unclosed YAML " \
        "frontmatter" in warnings  # fmt: skip
    assert f"Skill file {tmp_path / 'nameless' / 'SKILL.md'} is missing the required " \
        "'name' field" in warnings  # fmt: skip
    assert any("blank-name" in w and "'name' field" in w for w in warnings)
    assert any(w.startswith(f"Could not read {tmp_path / 'latin1' / 'SKILL.md'}") for w in warnings)
    assert "Skill 'Bad_Name' has no description — the model won't know when to use it" in warnings
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert (
        "Skill 'Bad_Name' validation issue: invalid name 'Bad_Name': must be lowercase, only "
        "lowercase letters, digits, and hyphens allowed (loaded anyway for compatibility)"
    ) in infos
    assert "Skill 'Bad_Name' validation warning: name 'Bad_Name' does not match directory " \
        "name 'Bad_Folder'" in infos  # fmt: skip


def test_validation_texts() -> None:
    assert validate_skill_name("pdf-processing") == []
    assert validate_skill_name("") == ["name is empty"]
    assert validate_skill_name("-a--b") == [
        "invalid name '-a--b': must not start or end with hyphen, must not contain "
        "consecutive hyphens"
    ]
    long = "a" * 65
    assert validate_skill_name(long) == [
        "name exceeds 64 characters (65)",
        f"invalid name '{long}': does not match spec pattern",
    ]
    result = validate_skill(Skill("ok", "", "x\n" * 501, Path("/skills/ok")))
    assert result.errors == ["description is required"] and not result.is_valid
    assert result.warnings == ["body exceeds recommended 500 lines"]


def test_lazy_loading_and_reload_picks_up_a_new_skill(tmp_path: Path) -> None:
    manager = SkillManager(sources=[tmp_path])
    write_skill(tmp_path / "first", "---\nname: first\ndescription: one\n---\n1\n")
    assert manager.get_skill_names() == ["first"]  # read on first use, not at construction
    write_skill(tmp_path / "second", "---\nname: second\ndescription: two\n---\n2\n")
    assert manager.get_skill("second") is None  # cached
    manager.reload()
    assert manager.get_skill_names() == ["first", "second"]
    second = manager.get_skill("second")
    assert second is not None and second.body == "2"


def test_single_path_source_and_skill_md_file_source(tmp_path: Path) -> None:
    folder = pdf_folder(tmp_path)
    assert SkillManager(str(tmp_path)).get_skill_names() == ["pdf-processing"]
    assert SkillManager([folder / "SKILL.md"]).get_skill_names() == ["pdf-processing"]
    assert SkillManager().list_skills() == []


def test_from_file_raises_what_the_manager_skips(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "x", "---\ndescription: d\n---\n")
    with pytest.raises(SkillError, match="missing the required 'name' field"):
        Skill.from_file(folder / "SKILL.md")
    loaded = Skill.from_file(pdf_folder(tmp_path) / "SKILL.md", source="mine")
    assert loaded.name == "pdf-processing" and loaded.source == "mine"


def test_skill_errors_are_plain_exceptions_as_in_0_3_0a5() -> None:
    """0.3.0a5: ``class SkillError(Exception)``; an ``except ValueError`` must not catch it."""
    assert SkillError.__bases__ == (Exception,)
    assert not issubclass(SkillError, ValueError) and not issubclass(SkillError, ConfigError)
    assert issubclass(SkillNotFoundError, SkillError)
    with pytest.raises(SkillError, match="gone"):
        try:
            raise SkillNotFoundError("gone")
        except ValueError:  # pragma: no cover - the regression
            pytest.fail("a ValueError handler caught a SkillError")


# ── Bundled files ─────────────────────────────────────────────────────────────────────


def test_files_and_read_file_stay_inside_the_skill(tmp_path: Path) -> None:
    folder = pdf_folder(tmp_path / "skills")
    (tmp_path / "secret.txt").write_text("secret")
    (folder / "link.txt").symlink_to(tmp_path / "secret.txt")
    skill = SkillManager([folder]).get_skill("pdf-processing")
    assert skill is not None
    assert skill.files == ["link.txt", "references/forms.md", "scripts/fill.py"]
    assert skill.read_file("references/forms.md") == "# Forms\nField list.\n"
    assert skill.read_file("./scripts/../scripts/fill.py") == "print('filled')\n"
    for escape in ("../secret.txt", str(tmp_path / "secret.txt"), "link.txt"):
        with pytest.raises(SkillError, match=r"escapes the skill directory") as caught:
            skill.read_file(escape)
        assert str(caught.value) == f"{escape!r} escapes the skill directory"
    with pytest.raises(SkillError) as missing:
        skill.read_file("references")
    assert str(missing.value) == "'references' is not a file in skill 'pdf-processing'"
    with pytest.raises(SkillError) as big:
        skill.read_file("scripts/fill.py", max_bytes=5)
    assert str(big.value) == "'scripts/fill.py' exceeds 5 bytes in skill 'pdf-processing'"


# ── Dispatch ──────────────────────────────────────────────────────────────────────────


def test_catalog_text(tmp_path: Path) -> None:
    pdf_folder(tmp_path)
    write_skill(tmp_path / "release-notes", NOTES_SKILL)
    skills = SkillManager([tmp_path]).list_skills()
    intro = (
        "Skills are reusable instruction packs for specific tasks, separate from tools. Tools "
        "are the primary way to act: if an available tool can do the task, use the tool "
        "instead of a skill. Activate a skill only when no tool can do the task, or when the "
        "task needs the skill's specific procedure. {} Call FindSkills(query=...) to search "
        "the full catalogue (an empty query lists every name), and ActivateSkill(name=...) to "
        "load a skill's full instructions when it is the right choice."
    )
    assert format_skill_catalog(skills[:1], total=2) == "\n".join(
        [
            "## Skills",
            "",
            intro.format("This summary lists 1 of 2 available skill(s)."),
            "",
            "- pdf-processing: Extract text and tables from PDF files, fill forms, merge "
            "documents.",
        ]
    )
    assert format_skill_catalog([], total=2) == "## Skills\n\n" + intro.format(
        "The summary currently lists no skills (2 available)."
    )
    long = Skill("long", "x" * 130, "", tmp_path)
    assert format_skill_catalog([long], 1).endswith("- long: " + "x" * 117 + "...")


def test_find_skills_tool(tmp_path: Path) -> None:
    pdf_folder(tmp_path)
    write_skill(tmp_path / "release-notes", NOTES_SKILL)
    manager = SkillManager([tmp_path])
    find = make_find_skills_tool(manager)
    assert isinstance(find, CLIverTool) and find.name == "FindSkills" and find.safety == "safe"
    assert find.parameters == {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "string"}},
        "required": ["query"],
    }
    assert text_of(find.execute(query="pdf forms")) == (
        "Matched 1 of 1 skill(s) (call ActivateSkill(name=...) to load one):\n"
        "- pdf-processing: Extract text and tables from PDF files, fill forms, merge documents."
    )
    assert text_of(find.execute(query="", limit=1)).startswith("Matched 1 of 2 skill(s)")
    assert text_of(find.execute(query="", limit="2")).count("\n- ") == 2
    assert text_of(find.execute(query="kubernetes")) == (
        "No skills matched 'kubernetes'. Available skills: pdf-processing, release-notes."
    )
    assert text_of(make_find_skills_tool(SkillManager()).execute(query="x")) == (
        "No skills are available."
    )


def test_find_skills_with_an_async_app_search(tmp_path: Path) -> None:
    pdf_folder(tmp_path)
    write_skill(tmp_path / "release-notes", NOTES_SKILL)
    seen: list[str] = []

    async def search(query: str, skills: Sequence[Skill]) -> list[Skill]:
        await asyncio.sleep(0)
        seen.append(query)
        return [s for s in skills if s.name == "release-notes"]

    find = make_find_skills_tool(SkillManager([tmp_path]), search)
    # A literal (|) description keeps its line breaks in the listing, as in 0.3.0a5.
    assert text_of(find.execute(query="notes")) == (
        "Matched 1 of 1 skill(s) (call ActivateSkill(name=...) to load one):\n"
        "- release-notes: Write release notes.\nOne line per change."
    )
    assert seen == ["notes"]


def test_lexical_search_order(tmp_path: Path) -> None:
    skills = [
        Skill("b-tool", "pdf and forms", "", tmp_path),
        Skill("a-tool", "pdf only", "", tmp_path),
        Skill("c-tool", "nothing", "", tmp_path),
    ]
    assert [s.name for s in lexical_skill_search("PDF forms", skills)] == ["b-tool", "a-tool"]
    assert [s.name for s in lexical_skill_search("  ", skills)] == ["a-tool", "b-tool", "c-tool"]


def test_activate_then_read_skill_file(tmp_path: Path) -> None:
    folder = pdf_folder(tmp_path)
    (folder / "data.bin").write_bytes(b"\xff\xfe\x00")
    (folder / "big.txt").write_text("x" * (256 * 1024 + 1))
    write_skill(tmp_path / "release-notes", NOTES_SKILL)
    manager = SkillManager([tmp_path])
    state = SkillRunState()
    activate = make_activate_skill_tool(manager, state, {"Read", "Bash(python:*)"})
    read = make_read_skill_file_tool(state)
    assert {activate.name, read.name} | {"FindSkills"} == SKILL_TOOL_NAMES
    assert error_of(read.execute(path="references/forms.md")) == (
        "No skill is active in this run — call ActivateSkill first."
    )
    assert error_of(activate.execute(name="nope")) == (
        "skill 'nope' not found. Available skills: pdf-processing, release-notes"
    )
    text = text_of(activate.execute(name="pdf-processing"))
    assert text == (
        f"# Active skill: pdf-processing\n\nSkill location: {folder}\n\n"
        "# PDF processing\n\nRun `scripts/fill.py` to fill a form; see references/forms.md.\n\n"
        "Bundled files (read with ReadSkillFile, not Read):\n"
        "- big.txt\n- data.bin\n- references/forms.md\n- scripts/fill.py"
    )
    assert state.active is not None and state.active.name == "pdf-processing"
    assert error_of(activate.execute(name="release-notes")) == (
        "skill 'pdf-processing' is already active in this run; only one skill can be "
        "activated per run"
    )
    assert text_of(read.execute(path="references/forms.md")) == "# Forms\nField list.\n"
    assert error_of(read.execute(path="../release-notes/SKILL.md")) == (
        "'../release-notes/SKILL.md' escapes the skill directory"
    )
    assert error_of(read.execute(path="data.bin")) == "'data.bin' is not a UTF-8 text file"
    assert error_of(read.execute(path="big.txt")) == (
        "'big.txt' exceeds 262144 bytes in skill 'pdf-processing'"
    )
    assert format_result(read.execute(path="nothing.md")) == (
        "Error: 'nothing.md' is not a file in skill 'pdf-processing'",
        True,
    )


def test_activate_refuses_a_skill_whose_tools_are_all_missing(tmp_path: Path) -> None:
    write_skill(tmp_path / "release-notes", NOTES_SKILL)
    folder = pdf_folder(tmp_path)
    manager = SkillManager([tmp_path])
    state = SkillRunState()
    activate = make_activate_skill_tool(manager, state, {"Grep"})
    assert error_of(activate.execute(name="release-notes")) == (
        "skill 'release-notes' allows only tools ['Read', 'Write'], none of which are "
        "available (available: ['Grep']). Register the tools or connect the MCP servers the "
        "skill needs."
    )
    assert state.active is None
    (folder / "SKILL.md").write_text(
        PDF_SKILL.replace("Bash(python:*) Read", "ReadSkillFile"), encoding="utf-8"
    )
    manager.reload()
    # A skill with bundled files counts ReadSkillFile as available.
    assert text_of(activate.execute(name="pdf-processing")).startswith("# Active skill")


async def test_tools_run_through_the_loop_runner(tmp_path: Path) -> None:
    pdf_folder(tmp_path)
    manager = SkillManager([tmp_path])
    state = SkillRunState()
    activated = await run_tool(
        make_activate_skill_tool(manager, state, {"Read"}), {"name": "pdf-processing"}
    )
    assert format_result(activated)[0].startswith("# Active skill: pdf-processing")
    read = await run_tool(make_read_skill_file_tool(state), {"path": "scripts/fill.py"})
    assert format_result(read) == ("print('filled')\n", False)
    assert READ_SKILL_FILE_TOOL == "ReadSkillFile"


def test_skill_body_and_skill_prompt(tmp_path: Path) -> None:
    skill = Skill("s", "does s", "Do it.", tmp_path)
    assert format_skill_body(skill) == f"# Active skill: s\n\nSkill location: {tmp_path}\n\nDo it."
    assert skill_prompt(skill) == "# Skill: s\ndoes s\n\nDo it."


def test_public_modules_match_the_reference_names() -> None:
    assert set(skill_module.__all__) == {
        "Skill",
        "SkillError",
        "SkillManager",
        "SkillNotFoundError",
        "SkillValidationResult",
        "validate_skill",
        "validate_skill_name",
    }
    assert skill_module.SKILL_FILENAME == "SKILL.md"
    assert skill_module.logger.name == "cliver_core.skill"
    assert len(skill_tools.__all__) == 17
    assert all(hasattr(skill_tools, name) for name in skill_tools.__all__)


# ── Against 0.3.0a5 ───────────────────────────────────────────────────────────────────

# Run by both libraries on the same folder; prints everything a program or the model sees.
PROBE = r"""
import json, logging, sys
import cliver_core
from cliver_core.skill import SkillManager, validate_skill
from cliver_core import skill_tools as st

logs = []
class Keep(logging.Handler):
    def emit(self, record):
        logs.append([record.levelname, record.getMessage()])
log = logging.getLogger("cliver_core.skill")
log.addHandler(Keep())
log.setLevel(logging.DEBUG)

root = sys.argv[1]
manager = SkillManager(sources=[root, root + "/pdf-processing", root + "/missing"])
skills = manager.list_skills()
out = {"where": cliver_core.__file__, "logs": logs}
out["skills"] = [
    {**{k: str(v) if k == "base_dir" else v for k, v in vars(s).items()},
     "files": s.files, "errors": validate_skill(s).errors,
     "warnings": validate_skill(s).warnings}
    for s in skills
]
out["catalog"] = [st.format_skill_catalog(skills[:k], total=len(skills))
                  for k in range(len(skills) + 1)]
out["bodies"] = [st.format_skill_body(s) for s in skills]
find = st.make_find_skills_tool(manager)
out["find"] = [find.execute(query=q, limit=n)
               for q in ("", "pdf", "PDF forms notes", "zzz") for n in (1, 5, 50)]
state = st.SkillRunState()
tools = [find, st.make_activate_skill_tool(manager, state, {"Read"}),
         st.make_read_skill_file_tool(state)]
out["tools"] = [[t.name, t.description, t.parameters, t.long_description, t.safety]
                for t in tools]
runs = []
for available in (set(), {"Read"}, {"Write", "Grep"}):
    for name in [s.name for s in skills] + ["nope"]:
        state = st.SkillRunState()
        activate = st.make_activate_skill_tool(manager, state, available)
        read = st.make_read_skill_file_tool(state)
        runs.append([read.execute(path="references/forms.md"),
                     activate.execute(name=name), activate.execute(name=name)])
        for path in ("references/forms.md", "../x", "/etc/hostname", "missing.md",
                     "SKILL.md", "big.txt", "data.bin", "references"):
            runs.append(read.execute(path=path))
out["runs"] = runs
print(json.dumps(out, indent=1, sort_keys=True))
"""


def reference_tree(root: Path) -> Path:
    folder = pdf_folder(root)
    (folder / "data.bin").write_bytes(b"\xff\xfe\x00")
    (folder / "big.txt").write_text("x" * (256 * 1024 + 1))
    write_skill(root / "release-notes", NOTES_SKILL)
    write_skill(
        root / "many-files",
        "---\nname: many-files\ndescription: " + "Lots of words here " * 10 + "\n"
        "allowed-tools: Grep\nmetadata:\n  owner:\n    team: docs\n  empty:\n---\nm\n",
        {f"assets/f{i:02}.txt": "x" for i in range(55)},
    )
    write_skill(root / "Mismatch", "---\nname: Bad--Name\n---\nno description\n")
    write_skill(root / "plain", "no frontmatter\n")
    write_skill(root / "nameless", "---\ndescription: d\n---\n")
    write_skill(root / "group" / "deep", "---\nname: deep\ndescription: d\n---\n")
    return root


def run_probe(root: Path, reference: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if reference:
        env["PYTHONPATH"] = str(REF_DIR)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(root)],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.skipif(
    not (REF_DIR / "cliver_core" / "skill_tools.py").is_file(),
    reason=f"cliver-core 0.3.0a5 not extracted at {REF_DIR} (set CLIVER_REF_DIR)",
)
def test_everything_the_probe_sees_equals_0_3_0a5(tmp_path: Path) -> None:
    root = reference_tree(tmp_path / "skills")
    ours, theirs = run_probe(root, reference=False), run_probe(root, reference=True)
    assert Path(theirs.pop("where")).is_relative_to(REF_DIR)
    assert not Path(ours.pop("where")).is_relative_to(REF_DIR)
    assert [s["name"] for s in ours["skills"]] == [
        "Bad--Name",
        "many-files",
        "pdf-processing",
        "release-notes",
    ]
    for key in theirs:
        assert ours[key] == theirs[key], key
    assert ours.keys() == theirs.keys()
