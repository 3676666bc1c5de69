"""Wall time of one GRPO step, raygent's RL core against TRL's `GRPOTrainer`, on CPU with the same tiny model.

Both sides train the same `tiny-qwen2` checkpoint (built here with a tokenizer trained on ToolCalc text) on the same
`--prompts` chat prompts, sampling `--group` completions of at most `--completion-tokens` tokens per prompt at
temperature 1 (no top-k/top-p), rewarded by the same pure function of the completion text (`digit_reward`), with
group-normalized advantages, the clipped surrogate (ε = 0.2), token-mean loss, no KL term (no reference model),
AdamW at the same learning rate and gradient clipping at 1.0, the same precision (`--precision none`: float32
throughout; `bf16`: the learner's forward passes under bf16 autocast on both sides, `learner.autocast` and TRL's
`bf16`), and no gradient checkpointing (TRL's `GRPOConfig` defaults to bf16 autocast and gradient checkpointing;
both are set explicitly here).

- raygent's step: `HFBackend.generate` on the prompts repeated `--group` times, the rewards,
  `group_advantages`, `Sample`s from the completions' recorded `prompt_ids`/`response_ids`/`logprobs`,
  `Learner.policy_update` (one optimizer step) and `HFBackend.load_weights` of the learner's weights (the backend
  and the learner hold separate copies, as the engine and learner actors do). Timed around the whole step.
- TRL's step: one `GRPOTrainer` optimizer step with `num_generations=--group`, `per_device_train_batch_size` =
  prompts × group (one step sees the same completions), `use_vllm=False`, `beta=0.0`, generation with
  `model.generate`. Timed by a callback from `on_step_begin` to `on_step_end` (generation, rewards, loss, backward,
  clipping, optimizer step; TRL's logging after the step is left out).

Runs alternate (raygent, TRL, raygent, TRL, ...) in this process, each on a freshly loaded model for `--steps`
steps; the first step of every run is warm-up and dropped. On the CPU everything runs on one torch thread
(`torch.set_num_threads(1)`). Medians over the remaining steps are compared. `--device cuda` puts both sides'
models (and raygent's engine) on the GPU (`bench/gpu_paths.py` runs it so); `--micro-batch-tokens` and
`--engine-batch` are raygent's `learner.micro_batch_tokens` and sequences per generate call (TRL generates and
trains the whole batch at once).

    python bench/grpo_vs_trl.py [--prompts 4] [--group 4] [--completion-tokens 16] [--steps 5] [--runs 2]
    python bench/grpo_vs_trl.py --preset smollm2-135m-instruct      # the SmolLM2-135M row
    python bench/grpo_vs_trl.py --preset smollm2-135m-instruct --precision bf16

`--preset` is a tiny preset built here (default `tiny-qwen2`, with a tokenizer trained on ToolCalc text) or a
pretrained one (`smollm2-135m-instruct`: its converted directory in the cache, with its own tokenizer and chat
template); `--model-dir` any checkpoint directory; both sides load the same directory.

Last line: `ours_step_s=… trl_step_s=… ratio=… trl_version=… preset=… precision=… device=…` (ratio = ours / TRL;
target ≤ 1.0).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from _trl import StepTimer, grpo_config, grpo_trainer, same_token_ids, trl_version
from transformers import PreTrainedTokenizerBase

from raygent.environments.toolcalc import corpus, generate_tasks
from raygent.platform.losses.advantages import group_advantages
from raygent.platform.rl.batch import Sample
from raygent.platform.rl.learner import Learner
from raygent.platform.rl.settings import LearnerSettings
from raygent.policies.backends import SamplingParams
from raygent.policies.backends.hf import HFBackend
from raygent.policies.loading import load_tokenizer, resolve_model
from raygent.policies.presets import build_tiny_model
from raygent.policies.pretrained import PRETRAINED
from raygent.policies.prompts import ChatMessage, render_prompt
from raygent.policies.tokenizer import build_tokenizer


def digit_reward(text: str) -> float:
    """The fraction of the completion's characters that are digits (0 for an empty completion).

    >>> digit_reward("ab12")
    0.5
    """
    return sum(character.isdigit() for character in text) / len(text) if text else 0.0


def trl_reward(completions: list[str], **_: Any) -> list[float | None]:
    """`digit_reward` in TRL's reward-function signature (standard, non-conversational completions)."""
    return [digit_reward(completion) for completion in completions]


def prompt_texts(tokenizer: PreTrainedTokenizerBase, count: int, seed: int = 0) -> list[str]:
    """`count` chat prompts (ToolCalc task instructions through the chat template), as text."""
    tasks = generate_tasks(count, seed=seed, difficulty=[0, 1, 2])
    return [render_prompt(tokenizer, [ChatMessage(role="user", content=task.instruction)]) for task in tasks]


def our_run(
    model_dir: Path, prompts: list[list[int]], args: argparse.Namespace, seed: int
) -> tuple[list[float], float]:
    """Seconds of each of `args.steps` raygent GRPO steps on a freshly loaded model, and the mean completion
    length in tokens."""
    settings = LearnerSettings(
        lr=args.lr,
        grad_clip=1.0,
        num_cpus=0,
        autocast=args.precision,
        device=args.device,
        micro_batch_tokens=args.micro_batch_tokens,
    )
    learner = Learner(str(model_dir), settings, seed=seed, temperature=1.0)
    backend = HFBackend.from_pretrained(model_dir, device=args.device, max_batch_size=args.engine_batch)
    params = SamplingParams(temperature=1.0, max_new_tokens=args.completion_tokens)
    requests = [prompt for prompt in prompts for _ in range(args.group)]
    groups = torch.arange(len(prompts)).repeat_interleave(args.group)
    times, lengths = [], []
    for _ in range(args.steps):
        start = time.perf_counter()
        completions = backend.generate(requests, params)
        rewards = torch.tensor([digit_reward(completion.text) for completion in completions])
        advantages = group_advantages(rewards, groups)
        samples = [
            Sample(
                prompt_ids=tuple(completion.prompt_ids),
                response_ids=tuple(completion.response_ids),
                behaviour_logprobs=tuple(completion.logprobs),
                advantage=float(advantage),
                truncated=completion.finish_reason == "length",
                version=completion.policy_version,
            )
            for completion, advantage in zip(completions, advantages, strict=True)
        ]
        learner.policy_update(samples)
        backend.load_weights(learner.weights(), learner.version)
        times.append(time.perf_counter() - start)
        lengths.append(statistics.mean(len(completion.response_ids) for completion in completions))
    print(f"  ours: steps {_seconds(times)}, mean completion length {statistics.mean(lengths):.1f}", flush=True)
    return times, statistics.mean(lengths)


def trl_run(model_dir: Path, prompts: list[str], args: argparse.Namespace, seed: int, output_dir: Path) -> list[float]:
    """Seconds of each of `args.steps` TRL `GRPOTrainer` optimizer steps on a freshly loaded model."""
    from datasets import Dataset

    config = grpo_config(
        output_dir,
        prompts=len(prompts),
        group=args.group,
        completion_tokens=args.completion_tokens,
        lr=args.lr,
        steps=args.steps,
        seed=seed,
        device=args.device,
        precision=args.precision,
    )
    timer = StepTimer()
    trainer = grpo_trainer(model_dir, config, trl_reward, Dataset.from_dict({"prompt": prompts}), [timer])
    trainer.train()
    lengths = [log["completions/mean_length"] for log in trainer.state.log_history if "completions/mean_length" in log]
    print(f"  trl: steps {_seconds(timer.times)}, mean completion length {statistics.mean(lengths):.1f}", flush=True)
    if len(timer.times) != args.steps:
        raise RuntimeError(f"TRL ran {len(timer.times)} optimizer steps, expected {args.steps}")
    return timer.times


def _seconds(times: list[float]) -> str:
    return " ".join(f"{t:.2f}" for t in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group", type=int, default=4, help="completions per prompt (TRL's num_generations)")
    parser.add_argument("--completion-tokens", type=int, default=16)
    parser.add_argument("--steps", type=int, default=5, help="optimizer steps per run (the first is warm-up)")
    parser.add_argument("--runs", type=int, default=2, help="runs of each side, interleaved")
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--preset", default="tiny-qwen2")
    parser.add_argument("--model-dir", type=Path, help="a checkpoint directory both sides load (instead of --preset)")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda: both sides' model (and the engine) on the GPU")
    parser.add_argument("--micro-batch-tokens", type=int, default=4096, help="raygent's learner.micro_batch_tokens")
    parser.add_argument("--engine-batch", type=int, default=64, help="raygent's HF engine: sequences per generate call")
    parser.add_argument("--vocab-size", type=int, default=2048)
    parser.add_argument(
        "--precision",
        choices=("none", "bf16"),
        default="none",
        help="both sides' forward passes: float32, or bf16 autocast (raygent's learner.autocast, TRL's bf16)",
    )
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2 (the first step of each run is warm-up)")
    version = trl_version()

    if args.device == "cpu":
        torch.set_num_threads(1)
    print(f"trl {version}, torch {torch.__version__}, device {args.device}", flush=True)
    ours: list[float] = []
    theirs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench_grpo_") as directory:
        if args.model_dir is not None:
            model_dir = resolve_model(args.model_dir)
            tokenizer = load_tokenizer(model_dir)
        elif args.preset in PRETRAINED:
            model_dir = resolve_model(args.preset)
            tokenizer = load_tokenizer(model_dir)
        else:
            tokenizer = build_tokenizer(corpus(n_tasks=500), directory, vocab_size=args.vocab_size)
            model_dir = build_tiny_model(args.preset, tokenizer, Path(directory) / args.preset, seed=0)
        texts = prompt_texts(tokenizer, args.prompts)
        ids = same_token_ids(tokenizer, texts)
        for run in range(args.runs):
            print(f"run {run}", flush=True)
            ours.extend(our_run(model_dir, ids, args, seed=run)[0][1:])
            theirs.extend(trl_run(model_dir, texts, args, seed=run, output_dir=Path(directory) / f"trl{run}")[1:])
    ours_s, trl_s = statistics.median(ours), statistics.median(theirs)
    print(
        f"ours_step_s={ours_s:.3f} trl_step_s={trl_s:.3f} ratio={ours_s / trl_s:.2f} trl_version={version} "
        f"preset={args.model_dir or args.preset} precision={args.precision} device={args.device}"
    )


if __name__ == "__main__":
    main()
