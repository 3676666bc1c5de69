"""The RL core's GPU paths on one CUDA device, with the same classes the trainer's actors run.

Written for a one-GPU machine that has PyTorch and transformers but no downloads: models are randomly initialised
from a real configuration (`--config-dir`: a checkpoint directory's `config.json`, tokenizer and chat template,
e.g. the SmolLM2-135M preset's) and saved as plain HF directories that `load_policy` loads, as it would real weights.

1. **Logprob agreement on CUDA**: `HFBackend` (float32, on the GPU) samples completions and records each token's
   logprob; `Learner` (float32, on the GPU) scores the same tokens teacher-forced. Max |difference| (target 1e-3).
2. **FSDP and DDP over NCCL**: a `LearnerWorker` (the learner group's rank) joins an NCCL process group of one rank,
   wraps its model (`fully_shard` per transformer block / DDP) and trains one GRPO update on the completions of 1.
   with random advantages; its gathered full state is compared with a plain `Learner`'s after the same update
   (deterministic algorithms on). One GPU cannot show sharding across ranks: NCCL refuses two ranks on one device.
3. **Step time, raygent against TRL**: `bench/grpo_vs_trl.py`'s two runs on the GPU (`--device cuda`), float32 and
   bf16 autocast, on the configuration's model. TRL is optional: without it only raygent's side is timed.
4. **A bigger model's throughput**: a Llama of `--big-layers` × `--big-hidden` (about 1.2 B parameters by default)
   trains raygent GRPO steps under bf16 autocast (float32 master weights, AdamW); tokens a second and peak memory.

    python bench/gpu_paths.py --config-dir DIR [--out DIR] [--skip-trl] [--micro-batch-tokens N --engine-batch N]

Measured 2026-12-04 on one H200 (docs/architecture.md, "GPU paths"), `--config-dir` the SmolLM2-135M preset's
directory without its weights: logprob max diff 2.9e-6; FSDP and DDP over NCCL max |Δθ| 0; raygent 6.7 s / TRL
3.0 s a step (float32) at the defaults, 2.74 s with `--micro-batch-tokens 32768 --engine-batch 256`; 1.18 B:
6.3 s a step, 1,296 tokens/s, 65 GiB. That machine reaches no network: the repository went with Ray 2.60 (its
Java jars left out), pydantic, jsonschema, gymnasium, TRL and datasets as wheels, on its own torch 2.11 and
transformers 5.17, with the five folders linked as the `raygent` namespace package.

Last line: `logprob_max_diff=… fsdp_param_max_diff=… ddp_param_max_diff=… small_fp32_step_s=… small_bf16_step_s=…
trl_fp32_step_s=… trl_bf16_step_s=… big_params_b=… big_step_s=… big_tokens_per_s=… big_peak_gib=…`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS (part 2)

import torch
from transformers import AutoConfig, AutoModelForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
import grpo_vs_trl

from raygent.platform.rl.batch import Sample
from raygent.platform.rl.learner import Learner
from raygent.platform.rl.learner_group import LearnerWorker
from raygent.platform.rl.settings import LearnerSettings
from raygent.policies.backends import SamplingParams
from raygent.policies.backends.hf import HFBackend
from raygent.policies.loading import load_tokenizer

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json")


def random_checkpoint(config_dir: Path, out: Path, device: str, **overrides: Any) -> tuple[Path, float]:
    """A randomly initialised model of `config_dir`'s configuration (with `overrides`), saved with its tokenizer as
    a plain HF directory in bfloat16 (what `load_policy` reads); returns it and its parameter count in billions."""
    config = AutoConfig.from_pretrained(config_dir)
    for key, value in overrides.items():
        setattr(config, key, value)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    billions = sum(p.numel() for p in model.parameters()) / 1e9
    model.save_pretrained(out)
    for name in TOKENIZER_FILES:
        if (config_dir / name).exists():
            shutil.copy(config_dir / name, out / name)
    del model
    torch.cuda.empty_cache()
    return out, billions


def logprob_agreement(model_dir: Path, prompts: list[list[int]], device: str) -> tuple[float, list[Any]]:
    """Part 1: the engine's recorded logprobs against the learner's teacher-forced ones; returns the max |diff|
    and the completions (reused by part 2)."""
    backend = HFBackend.from_pretrained(model_dir, device=device)
    completions = backend.generate(prompts, SamplingParams(temperature=1.0, max_new_tokens=48, seed=0))
    del backend
    learner = Learner(str(model_dir), LearnerSettings(device=device, num_cpus=0), seed=0)
    samples = [Sample(prompt_ids=tuple(c.prompt_ids), response_ids=tuple(c.response_ids)) for c in completions]
    scored = learner.evaluate_logprobs(samples)
    diff = max(
        abs(a - b) for c, row in zip(completions, scored, strict=True) for a, b in zip(c.logprobs, row, strict=True)
    )
    del learner
    torch.cuda.empty_cache()
    return diff, completions


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sharded_parity(model_dir: Path, completions: list[Any], device: str, strategy: str) -> dict[str, float]:
    """Part 2: one GRPO update by a plain `Learner` and by a one-rank `LearnerWorker` (`strategy` over NCCL), from
    the same seed on the same samples; the largest parameter difference afterwards and both gradient norms."""
    rng = random.Random(0)
    samples = [
        Sample(
            prompt_ids=tuple(c.prompt_ids),
            response_ids=tuple(c.response_ids),
            behaviour_logprobs=tuple(c.logprobs),
            advantage=rng.choice((-1.0, 1.0)),
        )
        for c in completions
    ]
    settings = LearnerSettings(device=device, num_cpus=0, lr=1e-4, strategy=strategy)  # type: ignore[arg-type]
    torch.use_deterministic_algorithms(True, warn_only=True)
    plain = Learner(str(model_dir), settings, seed=0)
    plain_stats = plain.policy_update(samples)
    expected = {name: tensor.detach().to("cpu") for name, tensor in plain.plain_state().items()}
    del plain
    torch.cuda.empty_cache()
    worker = LearnerWorker(rank=0, world_size=1)
    worker.setup("127.0.0.1", _free_port(), str(model_dir), settings, 0, 1.0)
    backend = torch.distributed.get_backend()
    worker_stats = worker.policy_update(samples)
    worker.gather_weights()
    got = worker.plain_state()
    diff = max(float((got[name].to("cpu").float() - tensor.float()).abs().max()) for name, tensor in expected.items())
    torch.distributed.destroy_process_group()
    torch.use_deterministic_algorithms(False)
    del worker
    torch.cuda.empty_cache()
    print(
        f"  {strategy} over {backend}: max |Δθ| {diff:.3g}, grad norm plain {plain_stats['learner/grad_norm']:.6f} "
        f"worker {worker_stats['learner/grad_norm']:.6f}",
        flush=True,
    )
    return {
        f"{strategy}_param_max_diff": diff,
        f"{strategy}_grad_norm_rel_diff": abs(plain_stats["learner/grad_norm"] - worker_stats["learner/grad_norm"])
        / plain_stats["learner/grad_norm"],
    }


def step_times(
    model_dir: Path,
    prompts: list[list[int]],
    texts: list[str],
    args: argparse.Namespace,
    precision: str,
    with_trl: bool,
) -> dict[str, float]:
    """Part 3 (and 4): medians of raygent's (and TRL's) GRPO steps after one warm-up step."""
    run_args = argparse.Namespace(
        group=args.group,
        completion_tokens=args.completion_tokens,
        steps=args.steps,
        lr=1e-5,
        precision=precision,
        device=args.device,
        micro_batch_tokens=args.micro_batch_tokens,
        engine_batch=args.engine_batch,
    )
    cuda = args.device.startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    ours, length = grpo_vs_trl.our_run(model_dir, prompts, run_args, seed=0)
    out = {
        "ours": statistics.median(ours[1:]),
        "tokens": length * len(prompts) * args.group,
        "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else float("nan"),
    }
    torch.cuda.empty_cache()
    if with_trl:
        with tempfile.TemporaryDirectory() as directory:
            out["trl"] = statistics.median(grpo_vs_trl.trl_run(model_dir, texts, run_args, 0, Path(directory))[1:])
        torch.cuda.empty_cache()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config-dir", type=Path, required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", type=Path, default=None, help="where to write gpu_paths.json")
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--completion-tokens", type=int, default=64)
    parser.add_argument("--steps", type=int, default=4, help="GRPO steps per timed run (the first is warm-up)")
    parser.add_argument("--big-layers", type=int, default=24)
    parser.add_argument("--big-hidden", type=int, default=2048)
    parser.add_argument("--micro-batch-tokens", type=int, default=4096, help="raygent's learner.micro_batch_tokens")
    parser.add_argument("--engine-batch", type=int, default=64, help="raygent's HF engine: sequences per generate call")
    parser.add_argument("--skip-trl", action="store_true")
    parser.add_argument("--skip-checks", action="store_true", help="only the step times (parts 3 and 4)")
    parser.add_argument("--skip-big", action="store_true")
    args = parser.parse_args()
    with_trl = not args.skip_trl
    try:
        import trl  # noqa: F401
    except ImportError:
        with_trl = False
    if args.device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = False  # float32 means float32 (part 1's 1e-3)
        print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}, trl {with_trl}", flush=True)
    results: dict[str, float] = {}
    work = Path(tempfile.mkdtemp(prefix="gpu_paths_"))
    small, small_b = random_checkpoint(args.config_dir, work / "small", args.device)
    tokenizer = load_tokenizer(small)
    texts = grpo_vs_trl.prompt_texts(tokenizer, args.prompts)
    prompts = [[int(t) for t in tokenizer.encode(text, add_special_tokens=False)] for text in texts]
    print(f"model: {small_b:.3f} B parameters (random init of {args.config_dir.name})", flush=True)

    completions: list[Any] = []
    if not args.skip_checks:
        diff, completions = logprob_agreement(small, [p for p in prompts for _ in range(4)], args.device)
        results["logprob_max_diff"] = diff
        print(f"1. logprob agreement: max |engine - learner| {diff:.2e}, {len(completions)} completions", flush=True)
    for strategy in ("fsdp", "ddp") if completions else ():
        try:
            results.update(sharded_parity(small, completions, args.device, strategy))
        except Exception as error:  # report and go on: the other parts still measure
            print(f"2. {strategy}: FAILED {type(error).__name__}: {error}", flush=True)
    for precision in ("none", "bf16"):
        tag = "fp32" if precision == "none" else "bf16"
        try:
            times = step_times(small, prompts, texts, args, precision, with_trl)
        except Exception as error:
            print(f"3. {tag}: FAILED {type(error).__name__}: {error}", flush=True)
            continue
        results[f"small_{tag}_step_s"] = times["ours"]
        if "trl" in times:
            results[f"trl_{tag}_step_s"] = times["trl"]
        print(
            f"3. {tag}: raygent {times['ours']:.3f} s/step, TRL {times.get('trl', float('nan')):.3f} s/step, "
            f"peak {times['peak_gib']:.1f} GiB",
            flush=True,
        )
    if not args.skip_big:
        big, big_b = random_checkpoint(
            args.config_dir,
            work / "big",
            args.device,
            hidden_size=args.big_hidden,
            num_hidden_layers=args.big_layers,
            intermediate_size=int(args.big_hidden * 2.75),
            num_attention_heads=args.big_hidden // 64,
            num_key_value_heads=args.big_hidden // 256,
            head_dim=64,
        )
        results["big_params_b"] = big_b
        times = step_times(big, prompts, texts, args, "bf16", with_trl=False)
        tokens = times["tokens"]
        results.update(
            big_step_s=times["ours"], big_tokens_per_s=tokens / times["ours"], big_peak_gib=times["peak_gib"]
        )
        print(
            f"4. {big_b:.2f} B, bf16 autocast: {times['ours']:.2f} s/step ({tokens:.0f} sampled tokens a step), "
            f"peak {times['peak_gib']:.1f} GiB",
            flush=True,
        )
    shutil.rmtree(work, ignore_errors=True)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "gpu_paths.json").write_text(json.dumps(results, indent=1))
    print(" ".join(f"{key}={value:.4g}" for key, value in results.items()))


if __name__ == "__main__":
    main()
