"""The RL orchestration core (docs/design.md §3): inference-engine actors, rollout workers, the learner, weight
sync, the sync/async trainer loop and its checkpoints. Modules:

- `settings`: the typed config sections of an agent run (`policy`, `env`, `rollout`, `learner`, `trainer`, ...).
- `engine`: `InferenceEngine`, a Ray actor over a `policies.backends` backend that batches requests across workers.
- `rollout`: `EpisodeRunner` (multi-turn episodes of N environments in lockstep) and the `RolloutWorker` actor.
- `batch`: trajectories and demonstrations → padded token tensors with loss masks.
- `learner`: `Learner` (torch: SFT, and the sum of the configured loss terms on driver-made samples).
- `weight_sync`: learner → engines (object store; a `ray.util.collective` broadcast for GPU clusters).
- `tasks`: task sources (`StaticSource`, the resumable stream; `AdaptiveSource`); `reward`: the judge stage;
  `agent_loop`: prompts and agent-side tool calls; `hooks`: trainer hooks.
- `checkpoint`, `metrics`, `trainer`: the loop, its checkpoints and its metric sinks.
- `learner_group`: the learner as `learner.num_workers` actors in one torch.distributed group (DDP or FSDP).
"""
