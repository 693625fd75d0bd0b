"""LoCoMo conversations as chats with their questions (see ``../shared/data/README.md``).

speaker_a is ``user``, speaker_b ``assistant``; each session opens with a short user marker
carrying its date; a photo turn is ``[shares a photo: <caption>]`` after its text. The
question is appended as the last user message by :func:`with_question`. Used by
``bench/locomo.py`` and ``tests/test_relevance_locomo.py``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from agent_adapter import Message

#: LoCoMo's categories 1-4 (5, adversarial, has no answer evidence to keep).
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
#: The split of issue 23: settings are chosen on ``tuning`` only; ``held-out`` is reported and
#: never looked at while choosing (indexes into ``locomo10.json``, by conversation).
PARTS = {"tuning": range(0, 5), "held-out": range(5, 10)}
_DIA = re.compile(r"\AD(\d+):(\d+)\Z")
_SESSION = re.compile(r"\Asession_(\d+)\Z")


@dataclass
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Chat:
    name: str
    messages: list[Message]
    turns: dict[str, Message]  # dia_id -> its message
    questions: list[Question]


def load_locomo(data: Path) -> list[Chat]:
    """Every conversation of ``locomo/locomo10.json`` with its category 1-4 questions whose
    evidence ids all resolve (malformed ids are skipped, as the data README says)."""
    raw = json.loads((data / "locomo" / "locomo10.json").read_text(encoding="utf-8"))
    chats: list[Chat] = []
    for n, item in enumerate(raw):
        conv = item["conversation"]
        speaker_a = conv["speaker_a"]
        sessions = sorted(
            (int(m.group(1)), k) for k in conv if (m := _SESSION.match(k)) and conv[k]
        )
        messages: list[Message] = []
        turns: dict[str, Message] = {}
        for number, key in sessions:
            date = conv.get(f"{key}_date_time", "")
            messages.append(Message("user", f"[session {number}: {date}]"))
            for turn in conv[key]:
                text = turn.get("text", "")
                if turn.get("blip_caption"):
                    text = f"{text} [shares a photo: {turn['blip_caption']}]".strip()
                role = "user" if turn["speaker"] == speaker_a else "assistant"
                message = Message(role, text or "(no text)")
                messages.append(message)
                turns[turn["dia_id"]] = message
        questions = []
        for qa in item["qa"]:
            category = qa.get("category")
            evidence = tuple(e.strip() for e in qa.get("evidence", []))
            if category not in CATEGORIES or not evidence:
                continue
            if not all(_DIA.match(e) and e in turns for e in evidence):
                continue
            questions.append(Question(qa["question"], category, evidence))
        chats.append(Chat(item.get("sample_id", f"conv-{n}"), messages, turns, questions))
    return chats


def with_question(chat: Chat, question: Question) -> list[Message]:
    """The chat with the question as the final user message."""
    return [*chat.messages, Message("user", question.text)]


def all_evidence_kept(chat: Chat, question: Question, kept: list[Message]) -> bool:
    """True when every evidence turn of ``question`` is still in ``kept`` (by identity: kept
    messages are the same objects)."""
    ids = {id(m) for m in kept}
    return all(id(chat.turns[e]) in ids for e in question.evidence)
