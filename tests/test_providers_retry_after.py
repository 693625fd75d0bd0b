"""A provider's ``timeout_s`` and ``max_retries`` bound a call's wall time whatever the server
asks (issue 32, item 7): every provider, on its real SDK against the local wire server, fails
at once with its rate-limit error on a 429 whose ``Retry-After`` is longer than it may wait
(so failover proceeds), and honours a shorter one within its budget."""

from __future__ import annotations

import time
from typing import Any

import pytest

from _provider_cases import KINDS, Make, make, request, server, srv
from agent_adapter import ModelError
from agent_adapter.providers._retry import body_wait, header_wait
from agent_adapter.testing import ProviderServer, Reply
from cliver_core._failover import is_retryable

__all__ = ["make", "server", "srv"]

_HEADERS = ["retry-after", "retry-after-ms"]


async def _collect(model: Any) -> list[Any]:
    return [event async for event in model.stream(request())]


@pytest.mark.parametrize("header", _HEADERS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("streamed", [False, True], ids=["generate", "stream"])
async def test_a_retry_after_longer_than_the_budget_fails_at_once(
    kind: str, srv: ProviderServer, make: Make, header: str, streamed: bool
) -> None:
    srv.add(Reply.rate_limited(retry_after_s=3600, header=header), Reply(text="too late"))  # type: ignore[arg-type]
    model = make(kind, timeout_s=2, max_retries=1)
    began = time.perf_counter()
    with pytest.raises(ModelError) as caught:
        await (_collect(model) if streamed else model.generate(request()))
    assert time.perf_counter() - began < 2.0
    error = caught.value
    assert type(error) is ModelError and "429" in str(error)
    assert "3600s" in str(error) and "not retried" in str(error)
    assert is_retryable(error)  # failover moves on to the next binding
    assert len(srv.requests) == 1 and srv.pending == 1


@pytest.mark.parametrize("header", _HEADERS)
@pytest.mark.parametrize("kind", KINDS)
async def test_a_short_retry_after_is_honoured_within_the_budget(
    kind: str, srv: ProviderServer, make: Make, header: str
) -> None:
    srv.add(Reply.rate_limited(retry_after_s=1, header=header), Reply(text="after the wait"))  # type: ignore[arg-type]
    model = make(kind, timeout_s=2, max_retries=1)
    began = time.perf_counter()
    response = await model.generate(request())
    took = time.perf_counter() - began
    assert response.text == "after the wait"
    assert 0.9 <= took < 2.5, took  # the server's second waited, not the hour's nor 0
    assert len(srv.requests) == 2


@pytest.mark.parametrize("kind", KINDS)
async def test_retries_past_the_budget_end_with_the_rate_limit_error(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    srv.add(*[Reply.rate_limited(retry_after_s=0.2)] * 3, Reply(text="never reached"))
    began = time.perf_counter()
    with pytest.raises(ModelError) as caught:
        await make(kind, timeout_s=2, max_retries=2).generate(request())
    assert time.perf_counter() - began < 2.0
    assert "429" in str(caught.value) and is_retryable(caught.value)
    assert len(srv.requests) == 3 and srv.pending == 1


def test_the_server_wait_is_read_from_each_header_and_body_form() -> None:
    assert header_wait({"retry-after-ms": "1500"}) == 1.5
    assert header_wait({"retry-after": "3600"}) == 3600
    assert header_wait({"retry-after-ms": "nope", "retry-after": "2"}) == 2
    assert header_wait({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # past
    assert header_wait({"retry-after": "soon"}) is None and header_wait({}) is None
    assert header_wait({"retry-after": "1e400"}) == float("inf")  # refused, never waited
    info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "36s"}
    assert body_wait({"error": {"code": 429, "details": [info]}}) == 36
    assert body_wait({"details": [{"@type": "other"}]}) is None and body_wait(None) is None
