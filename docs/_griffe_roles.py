"""A griffe extension for the documentation build: the docstrings' Sphinx roles as code.

The docstrings are Google style with reStructuredText roles (``:class:`~x.Y```,
``:func:`f```) that Markdown would show verbatim; this turns each into a code span of the
name (``~`` keeps only the last component, as Sphinx shows it). Loaded by mkdocs.yml's
mkdocstrings options only; the library never imports it.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj|const|py:\w+):`(~?)([^`]+)`")


def _name(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    target = target.strip()
    if "<" in target and target.endswith(">"):  # :class:`title <target>`
        return f"`{target.split('<', 1)[0].strip()}`"
    if tilde or target.startswith("."):
        target = target.lstrip(".").rsplit(".", 1)[-1]
    return f"`{target}`"


class SphinxRoles(Extension):
    """Rewrites the roles in every docstring griffe loads."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        docstring = getattr(obj, "docstring", None)
        if docstring is not None and ":" in docstring.value:
            docstring.value = _ROLE.sub(_name, docstring.value)
