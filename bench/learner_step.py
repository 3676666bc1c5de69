"""One policy update of SmolLM2-135M-Instruct on this machine: full fine-tuning against LoRA, float32 against bf16
autocast, by torch threads — the numbers behind the small-model recipe's learner settings.

Each setting builds a `Learner` (in this process, no cluster) on the preset, then times `policy_update` on the same
48 samples (ToolCalc expert turns of 32 compare/single tasks in grpo_toy's prompt, ~4,150 tokens, advantages ±1),
3 updates, median. LoRA is rank 16 on every linear layer (`all`) or on the attention projections only (`attn`).

    python bench/learner_step.py [--settings full:1:none full:2:none lora:2:none lora:2:bf16 ...]

Measured 2026-12-07 (2 cores, nothing else running): full 1 thread 48.2 s, full 2 threads 28.3 s, LoRA (all) 2
threads 18.4 s, LoRA (attn) 2 threads 17.3 s, full bf16 2 threads 18.1 s, LoRA (all) bf16 2 threads 13.0 s.
Last line: one `<variant>_<threads>t_<precision>_s=…` per setting.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from raygent.jobs.grpo_toy.tasks import toolcalc_demonstrations, toolcalc_tasks
from raygent.platform.rl.batch import Sample, samples_from_demonstration
from raygent.platform.rl.learner import Learner
from raygent.platform.rl.settings import LearnerSettings, LoraSettings
from raygent.policies.loading import resolve_model
from raygent.policies.prompts import PromptFormat

SYSTEM = "Solve the task. Reply with one action: calc(EXPR) to use the calculator, answer(N) to answer."
ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def update_seconds(model: str, variant: str, threads: int, precision: str, updates: int = 3) -> float:
    torch.set_num_threads(threads)
    lora = {"full": None, "lora": LoraSettings(rank=16, alpha=32, target_modules=ALL_LINEAR)}.get(variant)
    if variant == "attn":
        lora = LoraSettings(rank=16, alpha=32)
    settings = LearnerSettings(lr=1e-4, lora=lora, threads=threads, autocast=precision)  # type: ignore[arg-type]
    learner = Learner(model, settings)
    tasks = toolcalc_tasks("train", 0, 32, task_types=["compare", "single"])
    demos = [
        s
        for task, turns in zip(tasks, toolcalc_demonstrations(tasks), strict=True)
        for s in samples_from_demonstration(learner.tokenizer, PromptFormat(system=SYSTEM), task, turns)
    ]
    samples = [
        Sample(s.prompt_ids, s.response_ids, tuple([-1.0] * len(s.response_ids)), advantage=1.0 if i % 2 else -1.0)
        for i, s in enumerate(demos)
    ]
    times = []
    for _ in range(updates):
        begin = time.perf_counter()
        learner.policy_update(samples)
        times.append(time.perf_counter() - begin)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--settings", nargs="+", default=["full:1:none", "full:2:none", "lora:2:none", "lora:2:bf16"])
    args = parser.parse_args()
    model = str(resolve_model(args.model))
    results = []
    for setting in args.settings:
        variant, threads, precision = setting.split(":")
        seconds = update_seconds(model, variant, int(threads), precision)
        print(f"{variant} {threads} thread(s) {precision}: {seconds:.2f} s an update", flush=True)
        results.append(f"{variant}_{threads}t_{precision}_s={seconds:.2f}")
    print(" ".join(results))


if __name__ == "__main__":
    main()
