"""``cliver_core.pipeline``: 0.3.0a5's skill pipelines, out of this version's scope.

The names import as in 0.3.0a5 and the result types are its dataclasses, but building a
:class:`PipelineStep` or a :class:`SkillPipeline` (and running one) raises
:class:`~cliver_core.CapabilityNotSupported` naming "skill pipelines". Run the steps yourself:
one ``AgentCore.run_skill()`` / ``chat()`` per step, each step's input built from the
previous results.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from cliver_core._errors import CapabilityNotSupported
from cliver_core._messages import CLIverResponse, UsageInfo

__all__ = [
    "FailurePolicy",
    "InputBuilder",
    "PipelineContext",
    "PipelineResult",
    "PipelineStep",
    "SkillPipeline",
    "StepOutput",
    "StepResult",
    "StepRunResult",
    "StepRunner",
]


def _unsupported(what: str) -> CapabilityNotSupported:
    return CapabilityNotSupported(
        f"{what}: skill pipelines are not supported by this version of cliver_core; run "
        "each step with AgentCore.run_skill() or AgentCore.chat() yourself"
    )


class FailurePolicy(str, Enum):  # noqa: UP042 (0.3.0a5's str() of a member)
    """What a pipeline does when a step fails (0.3.0a5's values)."""

    STOP = "stop"
    CONTINUE = "continue"


@dataclass(frozen=True)
class StepOutput:
    """A runner's output for one step (0.3.0a5's fields)."""

    content: str
    metadata: dict[str, Any] | None = None
    usage: UsageInfo | None = None


#: What a step runner returns (0.3.0a5's alias).
StepRunResult = StepOutput | CLIverResponse | str


@dataclass(frozen=True)
class StepResult:
    """One step's outcome (0.3.0a5's fields)."""

    name: str
    content: str = ""
    metadata: dict[str, Any] | None = None
    usage: UsageInfo | None = None
    error: str | None = None


@dataclass(frozen=True)
class PipelineContext:
    """The input and the results so far (0.3.0a5's fields)."""

    input: str
    results: tuple[StepResult, ...] = ()

    def result(self, name: str) -> StepResult | None:
        """The result named ``name``, or ``None``."""
        return next((r for r in self.results if r.name == name), None)

    @property
    def previous(self) -> StepResult | None:
        """The last result, or ``None``."""
        return self.results[-1] if self.results else None


#: ``builder(context) -> str`` (sync or async), 0.3.0a5's alias.
InputBuilder = Callable[[PipelineContext], "str | Awaitable[str]"]
#: ``runner(step, step_input, context, emit)``, 0.3.0a5's alias.
StepRunner = Callable[..., Awaitable[StepRunResult]]


@dataclass(frozen=True)
class PipelineResult:
    """A run's results (0.3.0a5's fields)."""

    results: tuple[StepResult, ...] = ()
    stopped: bool = False

    @property
    def ok(self) -> bool:
        """True when every step ran and none failed."""
        return not self.stopped and all(r.error is None for r in self.results)

    @property
    def final(self) -> StepResult | None:
        """The last result, or ``None``."""
        return self.results[-1] if self.results else None


@dataclass(frozen=True)
class PipelineStep:
    """0.3.0a5's pipeline step (its fields); building one raises
    :class:`~cliver_core.CapabilityNotSupported`."""

    name: str
    skill: Any = None
    prompt: str | None = None
    input_builder: InputBuilder | None = None
    runner: StepRunner | None = None
    on_failure: FailurePolicy = FailurePolicy.STOP

    def __post_init__(self) -> None:
        raise _unsupported(f"PipelineStep({self.name!r})")


class SkillPipeline:
    """0.3.0a5's pipeline runner; building one raises
    :class:`~cliver_core.CapabilityNotSupported`.

    Args:
        steps: the steps.
        agent: the default agent.
        on_event: the event handler.
    """

    def __init__(
        self,
        steps: Sequence[PipelineStep],
        *,
        agent: Any = None,
        on_event: Any = None,
    ) -> None:
        raise _unsupported("SkillPipeline")

    async def run(self, input: str) -> PipelineResult:
        """Raises :class:`~cliver_core.CapabilityNotSupported`."""
        raise _unsupported("SkillPipeline.run")
