"""Generated tokens per second of the `InferenceEngine` actor against its backend called directly in-process.

For each backend (`hf`, `vllm`) and model preset, one engine actor is started with `start_engines` and one raw
backend is built in this process with `make_backend`, over the same checkpoint. A tiny preset (`tiny-qwen2`,
`small-qwen2`) is built here with a tokenizer trained on ToolCalc text; a pretrained preset
(`smollm2-135m-instruct`, row `smollm2`) is its converted directory in the cache, with its own tokenizer and chat
template. A round then measures both arms on
the same prompts (ToolCalc task instructions through the chat template, token ids as rollout workers send them):

- engine: `--clients` threads, released together by a barrier, each send their share of the prompts in one
  `generate` call to the actor (as rollout workers do each turn); the engine may merge the requests into one
  backend call. Wall time runs from the release to the last answer.
- raw: one `backend.generate` call on all the prompts in this process.

Throughput is the number of response tokens actually returned divided by the wall time (sampling at temperature 1
may end a response at EOS early; counting the tokens keeps the arms comparable). Rounds alternate the arms
(engine, raw, engine, raw, ...) after one untimed warm-up call each, and the medians are compared. Both arms
run torch on `--threads` threads: the actor gets `num_cpus=threads`, for which Ray sets `OMP_NUM_THREADS`, and
this process calls `torch.set_num_threads`. A vLLM engine starts once per model and arm (45–90 s each on CPU);
both run eagerly (`enforce_eager`) unless `--vllm-compile`, as torch.compile's warm-up takes minutes on 2 shared
cores.

    python bench/rollout_throughput.py [--backends hf vllm] [--presets tiny-qwen2 small-qwen2] [--prompts 32]
                                       [--max-new-tokens 32] [--clients 4] [--rounds 3]
    python bench/rollout_throughput.py --presets smollm2-135m-instruct      # the SmolLM2-135M row

Last line: `<backend>_<size>_engine_tok_s=… <backend>_<size>_raw_tok_s=… <backend>_<size>_ratio=… …
min_ratio=…` (ratio = engine / raw; target ≥ 0.9).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import ray
import torch
from transformers import PreTrainedTokenizerBase

from raygent.environments.toolcalc import corpus, generate_tasks
from raygent.platform.rl.engine import VLLM_CPU_ENV, start_engines
from raygent.policies.backends import Completion, InferenceBackend, SamplingParams, make_backend
from raygent.policies.loading import load_tokenizer, resolve_model
from raygent.policies.presets import build_tiny_model
from raygent.policies.pretrained import PRETRAINED
from raygent.policies.prompts import ChatMessage, encode_prompt
from raygent.policies.tokenizer import build_tokenizer

BACKEND_OPTIONS: dict[str, dict[str, Any]] = {"hf": {}, "vllm": {"max_model_len": 512}}


def make_prompts(tokenizer: PreTrainedTokenizerBase, count: int, seed: int = 0) -> list[list[int]]:
    """`count` chat prompts (token ids) of ToolCalc task instructions, as a rollout worker's first turn builds."""
    tasks = generate_tasks(count, seed=seed, difficulty=[0, 1, 2])
    return [encode_prompt(tokenizer, [ChatMessage(role="user", content=task.instruction)]) for task in tasks]


def split(prompts: Sequence[list[int]], parts: int) -> list[list[list[int]]]:
    """`prompts` cut into `parts` contiguous shares of (nearly) equal size."""
    size, extra = divmod(len(prompts), parts)
    shares, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        shares.append(list(prompts[start:end]))
        start = end
    return [share for share in shares if share]


def tokens(completions: Sequence[Completion]) -> int:
    return sum(len(completion.response_ids) for completion in completions)


def engine_round(engine: Any, shares: list[list[list[int]]], params: SamplingParams) -> tuple[int, float]:
    """(tokens, seconds) of the shares sent concurrently by one thread each."""
    barrier = threading.Barrier(len(shares) + 1)

    def client(share: list[list[int]]) -> list[Completion]:
        barrier.wait()
        return list(ray.get(engine.generate.remote(share, params)))

    with ThreadPoolExecutor(max_workers=len(shares)) as pool:
        futures = [pool.submit(client, share) for share in shares]
        barrier.wait()
        start = time.perf_counter()
        results = [future.result() for future in futures]
        wall = time.perf_counter() - start
    return sum(tokens(result) for result in results), wall


def raw_round(backend: InferenceBackend, prompts: list[list[int]], params: SamplingParams) -> tuple[int, float]:
    """(tokens, seconds) of one in-process call on all the prompts."""
    start = time.perf_counter()
    completions = backend.generate(prompts, params)
    return tokens(completions), time.perf_counter() - start


def measure(
    backend_name: str, model_dir: Path, prompts: list[list[int]], params: SamplingParams, args: argparse.Namespace
) -> tuple[float, float]:
    """Median engine and raw tokens/s over `args.rounds` alternating rounds (after one warm-up call each)."""
    options = dict(BACKEND_OPTIONS[backend_name])
    if backend_name == "vllm" and not args.vllm_compile:
        options["enforce_eager"] = True
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=1) as pool:  # the actor's engine starts while this process builds its own
        starting = pool.submit(start_engines, 1, backend_name, str(model_dir), options, num_cpus=args.threads)
        raw = make_backend(backend_name, model_dir, **options)
        (engine,) = starting.result()
    print(f"  engines ready in {time.perf_counter() - started:.0f} s", flush=True)
    shares = split(prompts, args.clients)
    rounds: dict[str, list[float]] = {"engine": [], "raw": []}
    arms: dict[str, Callable[[], tuple[int, float]]] = {
        "engine": lambda: engine_round(engine, shares, params),
        "raw": lambda: raw_round(raw, prompts, params),
    }
    for arm in arms.values():
        arm()
    before = ray.get(engine.get_stats.remote())
    for index in range(args.rounds):
        for name, arm in arms.items():
            count, wall = arm()
            rounds[name].append(count / wall)
            print(f"  round {index} {name}: {count} tokens in {wall:.2f} s = {count / wall:.0f} tok/s", flush=True)
    after = ray.get(engine.get_stats.remote())
    calls = (after["calls"] - before["calls"]) / args.rounds
    print(f"  engine: {len(shares)} requests per round served in {calls:.1f} backend calls", flush=True)
    ray.kill(engine)
    return statistics.median(rounds["engine"]), statistics.median(rounds["raw"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", choices=sorted(BACKEND_OPTIONS), default=["hf", "vllm"])
    parser.add_argument("--presets", nargs="+", default=["tiny-qwen2", "small-qwen2"])
    parser.add_argument("--prompts", type=int, default=32, help="prompts per round (all clients together)")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--clients", type=int, default=4, help="concurrent client threads of the engine arm")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads of each arm")
    parser.add_argument("--vocab-size", type=int, default=2048)
    parser.add_argument(
        "--vllm-compile", action="store_true", help="let vLLM torch.compile the model (minutes of warm-up on 2 cores)"
    )
    args = parser.parse_args()
    # The raw vLLM arm runs in this process: its engine reads these when vllm is imported (the actor gets them
    # from `engine_runtime_env`).
    os.environ.update(VLLM_CPU_ENV)
    torch.set_num_threads(args.threads)
    params = SamplingParams(temperature=args.temperature, max_new_tokens=args.max_new_tokens)
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench_rollout_") as directory:
        tokenizer = build_tokenizer(corpus(n_tasks=500), directory, vocab_size=args.vocab_size)
        prompts = make_prompts(tokenizer, args.prompts)
        ray.init(address="local", num_cpus=max(2, args.threads), include_dashboard=False, log_to_driver=False)
        for preset in args.presets:
            if preset in PRETRAINED:
                model_dir = resolve_model(preset)
                preset_prompts = make_prompts(load_tokenizer(model_dir), args.prompts)
            else:
                model_dir = build_tiny_model(preset, tokenizer, Path(directory) / preset, seed=0)
                preset_prompts = prompts
            size = preset.split("-")[0]
            for backend_name in args.backends:
                print(f"{backend_name} {preset}: {len(prompts)} prompts × {args.max_new_tokens} tokens", flush=True)
                engine_tok_s, raw_tok_s = measure(backend_name, model_dir, preset_prompts, params, args)
                gc.collect()  # frees the raw arm's backend (a vLLM engine holds its KV cache) before the next
                key = f"{backend_name}_{size}"
                results[f"{key}_engine_tok_s"] = engine_tok_s
                results[f"{key}_raw_tok_s"] = raw_tok_s
                results[f"{key}_ratio"] = engine_tok_s / raw_tok_s
    ray.shutdown()
    ratios = [value for key, value in results.items() if key.endswith("_ratio")]
    line = " ".join(f"{key}={value:.2f}" for key, value in results.items())
    print(f"{line} min_ratio={min(ratios):.2f}")


if __name__ == "__main__":
    main()
