"""cliver_core: the agent loop with a pluggable context compactor.

Not built yet: ``AgentCore``, ``CompactionContext``, ``CompactionPlan``, ``CompactionSplit``,
``LlmCompactor``, ``ModelBindings`` and ``presets`` arrive with their own issue, on top of
:mod:`agent_adapter`'s messages and compression engine.
"""

__all__: list[str] = []
