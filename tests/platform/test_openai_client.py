"""The official `openai` client against a served agent run: models, plain, streamed (server-sent events), n=2,
tool-result turns, content parts, logprobs, an over-long prompt refused, and the same seed giving the same answer
under 10 concurrent requests. The Serve app's routes run on a loopback uvicorn server (`served_run.py`); the last
test runs `raygent serve` itself on Ray Serve."""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest
from openai import OpenAI
from served_run import VERSION, make_agent_run, uvicorn_app

from raygent.platform.serving import build_api

from conftest import post, served

QUESTION = [{"role": "user", "content": "What is 2+3?"}]


@functools.cache
def agent_run() -> Path:
    return make_agent_run(Path(tempfile.mkdtemp(prefix="raygent-served-")) / "run")


@pytest.fixture(scope="module")
def client() -> Iterator[OpenAI]:
    with uvicorn_app(build_api(agent_run())) as base:
        yield OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0, timeout=120)


def test_models_list_and_retrieve(client: OpenAI) -> None:
    models = client.models.list()
    assert [model.id for model in models.data] == ["grpo_toy_tiny"]
    assert client.models.retrieve("grpo_toy_tiny").owned_by == "raygent"
    with pytest.raises(openai.NotFoundError, match="model 'gpt-4o' does not exist here"):
        client.models.retrieve("gpt-4o")
    with pytest.raises(openai.NotFoundError, match="does not exist here"):
        client.chat.completions.create(model="gpt-4o", messages=QUESTION)  # type: ignore[arg-type]


def test_plain_completion(client: OpenAI) -> None:
    answer = client.chat.completions.create(model="grpo_toy_tiny", messages=QUESTION, max_tokens=6, temperature=0)  # type: ignore[arg-type]
    assert answer.object == "chat.completion" and answer.model == "grpo_toy_tiny"
    assert len(answer.choices) == 1 and answer.choices[0].message.role == "assistant"
    assert isinstance(answer.choices[0].message.content, str)
    assert answer.choices[0].finish_reason in {"stop", "length"}
    assert answer.usage is not None and 1 <= answer.usage.completion_tokens <= 6 and answer.usage.prompt_tokens > 0
    assert answer.system_fingerprint == f"raygent-v{VERSION}"


def test_streamed_chunks_arrive_and_join_to_the_plain_answer(client: OpenAI) -> None:
    kwargs = {"model": "grpo_toy_tiny", "messages": QUESTION, "max_tokens": 12, "temperature": 0}
    plain = client.chat.completions.create(**kwargs)  # type: ignore[call-overload]
    stream = client.chat.completions.create(**kwargs, stream=True, stream_options={"include_usage": True})  # type: ignore[call-overload]
    chunks = list(stream)
    assert len(chunks) >= 3 and all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == plain.choices[0].message.content
    finishes = [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices and chunk.choices[0].finish_reason]
    assert finishes == [plain.choices[0].finish_reason]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == plain.usage.completion_tokens  # type: ignore[union-attr]


def test_n_2_gives_two_choices_and_logprobs(client: OpenAI) -> None:
    answer = client.chat.completions.create(
        model="grpo_toy_tiny",
        messages=QUESTION,
        max_tokens=8,
        n=2,
        seed=7,
        logprobs=True,  # type: ignore[arg-type]
    )
    assert [choice.index for choice in answer.choices] == [0, 1]
    for choice in answer.choices:
        assert choice.logprobs is not None and choice.logprobs.content
        assert all(entry.logprob <= 0.0 for entry in choice.logprobs.content)
    assert answer.usage is not None
    assert answer.usage.completion_tokens == sum(len(c.logprobs.content) for c in answer.choices)  # type: ignore[union-attr,arg-type]
    with pytest.raises(openai.BadRequestError, match="top_logprobs: only 0"):
        client.chat.completions.create(model="grpo_toy_tiny", messages=QUESTION, logprobs=True, top_logprobs=3)  # type: ignore[arg-type]


def test_tool_result_turn_developer_role_and_names(client: OpenAI) -> None:
    messages = [
        {"role": "developer", "content": "Use the calculator."},
        {"role": "user", "content": "What is 2+3?", "name": "alice"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "calc", "arguments": '{"e":"2+3"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "5"},
    ]
    answer = client.chat.completions.create(model="grpo_toy_tiny", messages=messages, max_tokens=6)  # type: ignore[arg-type]
    assert answer.choices[0].message.role == "assistant" and answer.usage is not None


def test_content_parts_read_as_their_text(client: OpenAI) -> None:
    parts = [{"type": "text", "text": "What is"}, {"type": "text", "text": "2+3?"}]
    joined = [{"role": "user", "content": "What is\n2+3?"}]
    as_parts = client.chat.completions.create(
        model="grpo_toy_tiny",
        messages=[{"role": "user", "content": parts}],
        max_tokens=8,
        temperature=0,  # type: ignore[arg-type,misc]
    )
    as_text = client.chat.completions.create(model="grpo_toy_tiny", messages=joined, max_tokens=8, temperature=0)  # type: ignore[arg-type]
    assert as_parts.choices[0].message.content == as_text.choices[0].message.content
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    with pytest.raises(openai.BadRequestError, match=r"content part type 'image_url' is not supported"):
        client.chat.completions.create(model="grpo_toy_tiny", messages=[{"role": "user", "content": [image]}])  # type: ignore[arg-type,misc]


def test_an_over_long_prompt_is_refused_naming_the_limit(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match=r"context is 4096 tokens; the prompt alone is \d+ tokens") as info:
        client.chat.completions.create(model="grpo_toy_tiny", messages=[{"role": "user", "content": "7 " * 30_000}])  # type: ignore[arg-type]
    assert info.value.code == "context_length_exceeded"
    with pytest.raises(openai.BadRequestError, match=r"max_tokens asks for 4090 more"):
        client.chat.completions.create(model="grpo_toy_tiny", messages=QUESTION, max_tokens=4090)  # type: ignore[arg-type]


def test_same_seed_same_answer_under_10_concurrent_requests(client: OpenAI) -> None:
    def ask(seed: int) -> str:
        answer = client.chat.completions.create(
            model="grpo_toy_tiny",
            messages=QUESTION,
            max_tokens=16,
            temperature=1.0,
            seed=seed,  # type: ignore[arg-type]
        )
        return answer.choices[0].message.content or ""

    with ThreadPoolExecutor(10) as pool:
        same = list(pool.map(ask, [1234] * 10))
        others = list(pool.map(ask, [1, 2, 3]))
    assert len(set(same)) == 1, same
    assert len({*others, same[0]}) > 1, "different seeds should sample different answers"


def test_unsupported_fields_are_refused_in_openai_format(client: OpenAI) -> None:
    tool = {"type": "function", "function": {"name": "calc", "parameters": {"type": "object"}}}
    with pytest.raises(openai.BadRequestError, match="tools: not supported") as info:
        client.chat.completions.create(model="grpo_toy_tiny", messages=QUESTION, tools=[tool])  # type: ignore[arg-type,list-item]
    assert info.value.param == "tools"
    with pytest.raises(openai.BadRequestError, match="response_format: only"):
        client.chat.completions.create(
            model="grpo_toy_tiny",
            messages=QUESTION,
            response_format={"type": "json_object"},  # type: ignore[arg-type]
        )


@pytest.mark.ray
@pytest.mark.slow
def test_raygent_serve_on_ray_serve_speaks_openai() -> None:
    """The same routes through `raygent serve` (a Ray Serve deployment building the app on its replica)."""
    with served(agent_run(), wait_s=300) as base:
        client = OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0, timeout=120)
        assert [model.id for model in client.models.list().data] == ["grpo_toy_tiny"]
        kwargs = {"model": "grpo_toy_tiny", "messages": QUESTION, "max_tokens": 6, "temperature": 0}
        plain = client.chat.completions.create(**kwargs)  # type: ignore[call-overload]
        chunks = list(client.chat.completions.create(**kwargs, stream=True))  # type: ignore[call-overload]
        assert chunks[0].choices[0].delta.role == "assistant"
        assert "".join(chunk.choices[0].delta.content or "" for chunk in chunks) == plain.choices[0].message.content
        assert chunks[-1].choices[0].finish_reason == plain.choices[0].finish_reason
        nan = b'{"model": "grpo_toy_tiny", "messages": [{"role": "user", "content": "hi"}], "temperature": NaN}'
        status, answer = post(f"{base}/v1/chat/completions", nan)
        assert status == 422 and answer["error"]["param"] == "temperature", answer
        with pytest.raises(openai.BadRequestError, match=r"context is 4096 tokens"):
            client.chat.completions.create(model="grpo_toy_tiny", messages=[{"role": "user", "content": "7 " * 30_000}])  # type: ignore[arg-type]
        assert post(f"{base}/v1/act", {"task": {"instruction": "2+3?"}, "observation": {"text": "2+3?"}})[0] == 200
