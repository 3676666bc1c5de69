"""Weight sync per update on SmolLM2-135M-Instruct: full weights (full fine-tuning) against adapter-only (LoRA).

Where it sits: the trainer's `_push_weights` after each update, `ObjectStoreSync.push(learner, engines, version)`
(the default sync), through the real actors: a `Learner` actor and one `InferenceEngine` actor (`hf` backend)
on the embedded cluster, as `AgentTrainer` starts them. Each mode runs `--updates` rounds of one small SFT step
(so every push is a new version) then one push, and reports the median push seconds and the bytes the engine
received (`EngineStats.load_bytes`). LoRA is the small-model recipe's: rank 16, alpha 32, every linear layer of
the blocks (`jobs/configs/grpo_toy.yaml`); the engine holds the base once and applies each pushed adapter (peft).

    python bench/weight_sync.py [--model smollm2-135m-instruct] [--updates 5]

Measured 2026-12-08 (2 cores, run under the shared heavy-work lock): full weights 272 tensors, 513.1 MiB,
median 0.239 s a push; adapter-only 420 tensors, 18.6 MiB, median 0.041 s.

Last line: `full_bytes=… adapter_bytes=… full_s=… adapter_s=…`.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

import ray

from raygent.platform.rl.batch import Sample
from raygent.platform.rl.distributed import lora_spec
from raygent.platform.rl.engine import start_engines
from raygent.platform.rl.learner import Learner
from raygent.platform.rl.settings import LearnerSettings, LoraSettings
from raygent.platform.rl.weight_sync import ObjectStoreSync
from raygent.policies.backends.base import SamplingParams
from raygent.policies.loading import resolve_model

ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
RECIPE_LORA = LoraSettings(rank=16, alpha=32, target_modules=ALL_LINEAR)


@ray.remote(num_cpus=0)
def where_raygent_is() -> str:
    import raygent

    return str(list(raygent.__path__))


def measure(model: str, lora: LoraSettings | None, updates: int) -> dict[str, Any]:
    """Median push seconds and the engine's received bytes and tensors over `updates` update + push rounds."""
    options = {"threads": 1} | ({"lora": lora_spec(lora).model_dump()} if lora is not None else {})
    (engine,) = start_engines(1, "hf", model, options, num_cpus=0)
    settings = LearnerSettings(lr=1e-4, lora=lora, threads=1, num_cpus=0)
    learner = ray.remote(Learner).options(num_cpus=0).remote(model, settings)
    prompt = [[1, 2, 3, 4, 5, 6, 7, 8]]
    greedy = SamplingParams(temperature=0.0, max_new_tokens=4)
    (completion,) = ray.get(engine.generate.remote(prompt, greedy))
    sample = Sample(tuple(completion.prompt_ids), tuple(completion.response_ids))
    sync = ObjectStoreSync()
    seconds, loads = [], []
    try:
        for version in range(1, updates + 1):
            ray.get(learner.sft.remote([sample]))
            seconds.append(sync.push(learner, [engine], version))
            stats = ray.get(engine.get_stats.remote())
            loads.append((stats["load_bytes"], stats["load_tensors"]))
            ray.get(engine.generate.remote(prompt, greedy))  # the engine serves the new version
        assert len(set(loads)) == 1, f"every push moves the same tensors: {loads}"
        return {"s": statistics.median(seconds), "bytes": loads[0][0], "tensors": loads[0][1], "all_s": seconds}
    finally:
        ray.kill(engine)
        ray.kill(learner)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--updates", type=int, default=5)
    args = parser.parse_args()
    model = str(resolve_model(args.model))  # converted once into the cache by the preset's loading code
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        print(f"raygent in the actors: {ray.get(where_raygent_is.remote())}", flush=True)
        results = {}
        for name, lora in (("full", None), ("adapter", RECIPE_LORA)):
            results[name] = measure(model, lora, args.updates)
            r = results[name]
            print(
                f"{name}: {r['tensors']} tensors, {r['bytes'] / 2**20:.1f} MiB a push, median {r['s']:.3f} s "
                f"({', '.join(f'{s:.3f}' for s in r['all_s'])})",
                flush=True,
            )
    finally:
        ray.shutdown()
    full, adapter = results["full"], results["adapter"]
    print(
        f"full_bytes={full['bytes']} adapter_bytes={adapter['bytes']} "
        f"full_s={full['s']:.3f} adapter_s={adapter['s']:.3f}"
    )


if __name__ == "__main__":
    main()
