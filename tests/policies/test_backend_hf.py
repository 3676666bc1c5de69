"""The transformers inference backend on a tiny model: batching, recorded logprobs, stops, weight updates."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from raygent.platform.losses.logprobs import token_logprobs
from raygent.policies.backends import InferenceBackend, SamplingParams, make_backend
from raygent.policies.backends.base import Completion
from raygent.policies.backends.hf import HFBackend, cut_at_stop
from raygent.policies.presets import build_tiny_model
from raygent.policies.tokenizer import train_tokenizer

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
    return build_tiny_model("tiny-llama", tokenizer, tmp_path_factory.mktemp("hf-backend"), seed=11)


@pytest.fixture
def backend(model_dir: Path) -> HFBackend:
    return HFBackend.from_pretrained(model_dir, max_batch_size=3)


def teacher_forced_logprobs(backend: HFBackend, completion: Completion, temperature: float) -> torch.Tensor:
    """A fresh, unpadded forward pass over prompt + response, scored at `temperature`."""
    ids = torch.tensor([completion.prompt_ids + completion.response_ids])
    with torch.no_grad():
        logits = backend.model(ids).logits
    start = len(completion.prompt_ids)
    return token_logprobs(logits[:, start - 1 : -1], ids[:, start:], temperature)[0]


def test_backend_satisfies_the_protocol_and_registry(model_dir: Path) -> None:
    backend = make_backend("hf", model_dir)
    assert isinstance(backend, InferenceBackend) and backend.version == 0
    with pytest.raises(KeyError, match="known backends: hf, vllm"):
        make_backend("tgi", model_dir)


def test_batch_returns_ids_and_logprobs_of_matching_length(backend: HFBackend) -> None:
    completions = backend.generate(PROMPTS, SamplingParams(temperature=1.0, max_new_tokens=12, seed=0))
    assert len(completions) == len(PROMPTS)
    for prompt, completion in zip(PROMPTS, completions, strict=True):
        assert completion.prompt_ids == backend.encode(prompt)
        assert 1 <= len(completion.response_ids) == len(completion.logprobs) <= 12
        assert all(value <= 0.0 for value in completion.logprobs)
        assert completion.policy_version == 0
        assert completion.text == backend.tokenizer.decode(completion.response_ids, skip_special_tokens=True)
    assert backend.generate([], SamplingParams()) == []
    with pytest.raises(ValueError, match="empty prompt"):
        backend.generate([[]], SamplingParams())


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(temperature=0.7, max_new_tokens=16, seed=1),
        SamplingParams(temperature=1.3, max_new_tokens=16, seed=2),
        SamplingParams(temperature=1.0, top_p=0.8, top_k=20, max_new_tokens=16, seed=3),
        SamplingParams(temperature=0.0, max_new_tokens=16),
    ],
    ids=["t0.7", "t1.3", "top-p-k", "greedy"],
)
def test_logprobs_equal_a_teacher_forced_forward_pass(backend: HFBackend, params: SamplingParams) -> None:
    """Left-padded, KV-cached, micro-batched generation records what the learner recomputes (1e-4)."""
    for completion in backend.generate(PROMPTS, params):
        expected = teacher_forced_logprobs(backend, completion, params.logprob_temperature)
        assert torch.allclose(torch.tensor(completion.logprobs), expected, atol=1e-4, rtol=0)


def test_greedy_is_deterministic_and_independent_of_batching(backend: HFBackend) -> None:
    params = SamplingParams(temperature=0.0, max_new_tokens=10)
    batched = [c.response_ids for c in backend.generate(PROMPTS, params)]
    assert batched == [c.response_ids for c in backend.generate(PROMPTS, params)]
    assert batched == [backend.generate([prompt], params)[0].response_ids for prompt in PROMPTS]
    first = backend.generate([PROMPTS[0]], params)[0]
    ids = torch.tensor([first.prompt_ids])
    with torch.no_grad():
        assert first.response_ids[0] == int(backend.model(ids).logits[0, -1].argmax())


def test_a_repeated_prompt_is_prefilled_once_and_generates_as_if_alone(model_dir: Path) -> None:
    """A group's copies of one prompt share one prefill (its cache copied to each row): greedy ids equal those of
    each prompt generated alone, and sampled logprobs equal a teacher-forced pass (1e-4)."""
    backend = HFBackend.from_pretrained(model_dir, max_batch_size=16)
    group = [prompt for prompt in PROMPTS for _ in range(3)]  # "hello" repeated, lengths 1 to 17 left-padded
    prefills: list[int] = []
    prefill = backend._shared_prefill
    backend._shared_prefill = lambda prompts, *rest: prefills.append(len(prompts)) or prefill(prompts, *rest)  # type: ignore[method-assign]
    greedy = SamplingParams(temperature=0.0, max_new_tokens=10)
    shared = backend.generate(group, greedy)
    assert prefills == [12]
    alone = [c.response_ids for c in HFBackend.from_pretrained(model_dir).generate(PROMPTS, greedy)]
    assert [c.response_ids for c in shared] == [ids for ids in alone for _ in range(3)]
    sampled = backend.generate(group, SamplingParams(temperature=1.0, max_new_tokens=10, seed=1))
    assert len({tuple(c.response_ids) for c in sampled[6:9]}) > 1, "the copies sample independently"
    for completion in sampled:
        expected = teacher_forced_logprobs(backend, completion, 1.0)
        assert torch.allclose(torch.tensor(completion.logprobs), expected, atol=1e-4, rtol=0)


def test_a_seed_makes_sampling_reproducible(backend: HFBackend) -> None:
    def sample(seed: int) -> list[list[int]]:
        return [c.response_ids for c in backend.generate(PROMPTS, SamplingParams(max_new_tokens=8, seed=seed))]

    assert sample(5) == sample(5)
    assert sample(5) != sample(6)


def test_a_seeded_prompt_samples_the_same_tokens_whatever_shares_its_batch(model_dir: Path) -> None:
    params = SamplingParams(temperature=1.0, max_new_tokens=10)
    seeds = (101, 202, 303, 404)
    together = HFBackend.from_pretrained(model_dir, max_batch_size=64).generate(
        PROMPTS, params.model_copy(update={"seeds": seeds})
    )
    one_by_one = HFBackend.from_pretrained(model_dir, max_batch_size=1)
    for prompt, seed, completion in zip(PROMPTS, seeds, together, strict=True):
        (alone,) = one_by_one.generate([prompt], params.model_copy(update={"seeds": (seed,)}))
        assert alone.response_ids == completion.response_ids
        assert alone.logprobs == pytest.approx(completion.logprobs, abs=1e-4)
    reordered = one_by_one.generate(PROMPTS[::-1], params.model_copy(update={"seeds": seeds[::-1]}))
    assert [c.response_ids for c in reordered[::-1]] == [c.response_ids for c in together]
    assert params.model_copy(update={"seed": 101}).prompt_seeds(2) == [101, 102]
    with pytest.raises(ValueError, match="2 seeds for 4 prompts"):
        one_by_one.generate(PROMPTS, params.model_copy(update={"seeds": (1, 2)}))
    with pytest.raises(ValueError, match="seed or seeds"):
        SamplingParams(seed=1, seeds=(1,))


def test_load_weights_changes_outputs_and_sets_the_version(backend: HFBackend) -> None:
    params = SamplingParams(temperature=0.0, max_new_tokens=8)
    before = backend.generate(PROMPTS, params)
    generator = torch.Generator().manual_seed(0)
    perturbed = {
        name: tensor + 0.2 * torch.randn(tensor.shape, generator=generator)
        for name, tensor in backend.model.state_dict().items()
    }
    backend.load_weights(perturbed, version=1)
    after = backend.generate(PROMPTS, params)
    assert backend.version == 1 and all(c.policy_version == 1 for c in after)
    assert [c.response_ids for c in after] != [c.response_ids for c in before]
    assert torch.equal(backend.model.state_dict()["model.norm.weight"], perturbed["model.norm.weight"])
    with pytest.raises(KeyError, match="no parameters named"):
        backend.load_weights({"not.a.weight": torch.zeros(1)}, version=2)
    assert backend.version == 1


def test_weights_trained_elsewhere_reach_the_engine_and_stop_at_eos(backend: HFBackend) -> None:
    """A learner copy learns 'hello' → ' world<|im_end|>'; after load_weights the engine stops at EOS."""
    tokenizer = backend.tokenizer
    prompt = tokenizer.encode("hello")
    target = [*tokenizer.encode(" world"), tokenizer.eos_token_id]
    learner = copy.deepcopy(backend.model).train()
    optimizer = torch.optim.Adam(learner.parameters(), lr=3e-3)
    ids = torch.tensor([prompt + target])
    labels = torch.tensor([[-100] * len(prompt) + target])
    for _ in range(40):
        optimizer.zero_grad()
        learner(input_ids=ids, labels=labels).loss.backward()
        optimizer.step()
    backend.load_weights(learner.state_dict(), version=backend.version + 1)

    done = backend.generate([prompt], SamplingParams(temperature=0.0, max_new_tokens=10))[0]
    assert done.response_ids == target and done.finish_reason == "stop"
    assert done.text == " world" and done.policy_version == 1

    cut = backend.generate([prompt], SamplingParams(temperature=0.0, max_new_tokens=1))[0]
    assert cut.response_ids == target[:1] and cut.finish_reason == "length"

    stopped = backend.generate([prompt], SamplingParams(temperature=0.0, max_new_tokens=10, stop=("or",)))[0]
    assert stopped.finish_reason == "stop" and stopped.text == " w"
    assert tokenizer.decode(stopped.response_ids).startswith(" wor") and len(stopped.response_ids) < len(target)
    kept = backend.generate(
        [prompt], SamplingParams(temperature=0.0, max_new_tokens=10, stop=("or",), include_stop_str_in_output=True)
    )[0]
    assert kept.text == " wor"


def test_stop_strings_end_sampled_responses(backend: HFBackend) -> None:
    """Whatever a random model samples, a response stops at the first stop string and its text is cut there."""
    params = SamplingParams(temperature=1.0, max_new_tokens=24, seed=4)
    free = backend.generate(PROMPTS, params)
    stops = ("a", "e", " ")
    stopped = backend.generate(PROMPTS, params.model_copy(update={"stop": stops}))
    for full, short in zip(free, stopped, strict=True):
        assert full.response_ids[: len(short.response_ids)] == short.response_ids  # same seed, same draws
        assert not any(stop in short.text for stop in stops)
        hit = any(stop in full.text for stop in stops)
        assert short.finish_reason == ("stop" if hit or full.finish_reason == "stop" else "length")
        if hit:
            assert short.text == cut_at_stop(full.text, stops)


def test_cut_at_stop() -> None:
    assert cut_at_stop("call(x)\nmore", ("\n",)) == "call(x)"
    assert cut_at_stop("abcabc", ("c", "b")) == "a"
    assert cut_at_stop("abc", ("c",), include=True) == "abc"
    assert cut_at_stop("abc", ("z",)) == "abc"


def test_threads_set_the_engine_process_torch_threads(model_dir: Path) -> None:
    before = torch.get_num_threads()
    try:
        HFBackend.from_pretrained(model_dir, threads=1)
        assert torch.get_num_threads() == 1
        HFBackend.from_pretrained(model_dir)  # None keeps the process's setting
        assert torch.get_num_threads() == 1
        with pytest.raises(ValueError, match="threads must be >= 1"):
            HFBackend.from_pretrained(model_dir, threads=0)
    finally:
        torch.set_num_threads(before)
