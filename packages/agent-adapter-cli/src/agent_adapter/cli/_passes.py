"""The passes of a compression: which run of the policy's steps each step report belongs to.

The engine runs the policy's steps once with the newest ``recent_turns`` held, then, still
over the target, once more over everything (the second pass); the report lists each run in
order. The text report (``_report``) and the HTML page (``_html_data``) label the runs the same
way, from here.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_adapter.context import CompressionPolicy

__all__ = ["pass_labels", "pass_numbers", "step_names"]


def step_names(policy: CompressionPolicy) -> list[str]:
    """The names of ``policy``'s steps, in the order the engine runs them in each pass."""
    return [str(getattr(s, "name", type(s).__name__)) for s in policy.resolved_steps()]


def pass_numbers(names: Sequence[str], order: Sequence[str]) -> list[int]:
    """The pass each step run of ``names`` belongs to (1, 2, ...; 0: ``if_still_too_long``).

    The engine runs ``order`` (the policy's steps) once with the newest ``recent_turns``
    protected, then, still over the target, once more without (a second pass). A run whose
    name does not come later in ``order`` than the run before it starts the next pass; a
    name not in ``order`` at all is the ``if_still_too_long`` step.

    >>> pass_numbers(["a", "b", "a", "c", "z"], ["a", "b", "c"])
    [1, 1, 2, 2, 0]
    """
    out: list[int] = []
    number, at = 1, 0
    for name in names:
        if name not in order:
            out.append(0)
            continue
        later = [j for j in range(at, len(order)) if order[j] == name]
        if not later:
            number += 1
            later = [order.index(name)]
        at = later[0] + 1
        out.append(number)
    return out


def pass_labels(names: Sequence[str], order: Sequence[str]) -> list[str]:
    """Each step run's label: its name, plus ``(pass 2)`` once the engine ran the steps
    again (see :func:`pass_numbers`).

    >>> pass_labels(["a", "b", "a", "c", "z"], ["a", "b", "c"])
    ['a', 'b', 'a (pass 2)', 'c (pass 2)', 'z (if_still_too_long)']
    """
    return [
        name if n == 1 else f"{name} (if_still_too_long)" if n == 0 else f"{name} (pass {n})"
        for name, n in zip(names, pass_numbers(names, order), strict=True)
    ]
