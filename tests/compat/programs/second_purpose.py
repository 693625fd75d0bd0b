"""Bindings with a second purpose, written against cliver-core 0.3.0a5: an llm plus embed and
rerank bindings (each its own endpoint, key and default parameters), used through AgentCore
and through the standalone capability calls; unbound purposes raising CapabilityNotSupported
(awaited, and at submit time); a binding mounted under the wrong purpose.

The model endpoint is $CLIVER_COMPAT_OPENAI_URL, embeddings and rerank are served at
$CLIVER_COMPAT_AUX_URL; prints one JSON object.
"""

import asyncio
import json
import os

from cliver_core import (
    AgentCore,
    CapabilityNotSupported,
    ModelBinding,
    ModelBindings,
    embed,
    rerank,
)


def unsupported(error: Exception, purpose: str) -> dict:
    return {
        "type": type(error).__name__,
        "capability_not_supported": isinstance(error, CapabilityNotSupported),
        "names_the_purpose": purpose in str(error),
    }


async def main() -> None:
    aux = os.environ["CLIVER_COMPAT_AUX_URL"]
    bindings = ModelBindings(
        llm=ModelBinding.llm(
            model="gpt-4o-mini", api_key="test", base_url=os.environ["CLIVER_COMPAT_OPENAI_URL"]
        ),
        embed=ModelBinding.embed(
            model="text-embedding-3-small", api_key="emb-key", base_url=aux, dimensions=3
        ),
        rerank=ModelBinding.rerank(model="rerank-v3.5", api_key="rr-key", base_url=aux, top_k=2),
    )
    agent = AgentCore(bindings)

    answer = await agent.chat("Say hi.")
    vectors = await agent.embed(["hello world", "agents call tools"])
    single = await embed(texts="one text", binding=bindings.embed, user="u-1")
    documents = ["agents call tools", "the weather is nice", "tools for agents and people"]
    ranked = await agent.rerank("which tools do agents call", documents)
    ranked_all = await rerank(
        query="which tools do agents call", documents=documents, binding=bindings.rerank, top_k=3
    )

    errors = {}
    for purpose, call in (
        ("image", lambda: agent.image("a red panda")),
        ("video", lambda: agent.video("a sunset")),
        ("tts", lambda: agent.tts("hello")),
        ("audio", lambda: agent.audio("hello")),
        ("asr", lambda: agent.asr(b"RIFF....WAVE")),
    ):
        try:
            await call()
            errors[purpose] = None
        except Exception as e:
            errors[purpose] = unsupported(e, purpose)
    try:
        agent.submit_image("a red panda")
        errors["submit_image"] = None
    except Exception as e:
        errors["submit_image"] = unsupported(e, "image")

    wrong = {}
    try:
        ModelBindings(embed=ModelBinding.rerank(model="r", base_url=aux)).get("embed")
        wrong["misplaced"] = None
    except Exception as e:
        wrong["misplaced"] = type(e).__name__
    try:
        bindings.get("telepathy")
        wrong["unknown_purpose"] = None
    except Exception as e:
        wrong["unknown_purpose"] = type(e).__name__
    await agent.aclose()

    print(
        json.dumps(
            {
                "answer": answer.message.content,
                "bound": bindings.bound_purposes(),
                "bindings": {
                    p: {
                        "purpose": bindings.get(p).purpose,
                        "model": bindings.get(p).model,
                        "params": bindings.get(p).params,
                        "call_defaults": bindings.get(p).call_defaults(),
                    }
                    for p in bindings.bound_purposes()
                },
                "embed": {
                    "vectors": vectors.vectors,
                    "model": vectors.model,
                    "usage": [vectors.usage.input_tokens, vectors.usage.output_tokens],
                },
                "embed_single": {"vectors": single.vectors, "model": single.model},
                "rerank": [[i.index, i.relevance_score, i.document] for i in ranked],
                "rerank_top3": [[i.index, i.relevance_score, i.document] for i in ranked_all],
                "unbound": errors,
                "wrong_slot": wrong,
            },
            indent=1,
            default=str,
        )
    )


asyncio.run(main())
