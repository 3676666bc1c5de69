"""TRL's `GRPOTrainer` set up to match raygent's GRPO step: the benches' shared TRL side (`grpo_vs_trl.py`: wall
time of a step; `learning_vs_trl.py`: what a run learns).

`grpo_config` is one optimizer step per batch of `prompts` × `group` completions (`per_device_train_batch_size` =
prompts × group, `num_generations` = group, no gradient accumulation), sampling at `temperature` with no top-k or
top-p, group-normalized advantages (`scale_rewards="group"`), the clipped surrogate (ε = 0.2), token-mean loss
(`loss_type="dapo"`), no KL term (`beta=0`: no reference model), AdamW at a constant `lr` with gradient clipping at
1.0, `model.generate` (no vLLM), no gradient checkpointing and float32 unless `precision="bf16"` (TRL defaults to
bf16 autocast and gradient checkpointing; raygent's learner does neither unless told). `shuffle=False` keeps the
dataset's order, so step i trains on rows i·prompts … (i+1)·prompts − 1, the batch raygent's task stream gives.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase, PrinterCallback, TrainerCallback


def grpo_config(
    output_dir: Path,
    *,
    prompts: int,
    group: int,
    completion_tokens: int,
    lr: float,
    steps: int,
    seed: int,
    temperature: float = 1.0,
    device: str = "cpu",
    precision: str = "none",
    shuffle: bool = True,
) -> Any:
    """The `GRPOConfig` of the module docstring."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(output_dir),
        per_device_train_batch_size=prompts * group,
        gradient_accumulation_steps=1,
        num_generations=group,
        max_completion_length=completion_tokens,
        temperature=temperature,
        top_p=1.0,
        top_k=0,
        use_vllm=False,
        beta=0.0,
        epsilon=0.2,
        loss_type="dapo",
        scale_rewards="group",
        learning_rate=lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        max_steps=steps,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=device == "cpu",
        bf16=precision == "bf16",  # TRL's default is True (bf16 autocast), which raygent matches only when asked
        gradient_checkpointing=False,  # TRL's default is True; raygent's learner recomputes nothing
        seed=seed,
        shuffle_dataset=shuffle,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )


def grpo_trainer(model_dir: Path, config: Any, reward: Any, dataset: Any, callbacks: list[Any]) -> Any:
    """A `GRPOTrainer` on a freshly loaded `model_dir` (model and tokenizer), quiet (no per-step log prints)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer

    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(str(model_dir)),
        reward_funcs=reward,
        args=config,
        train_dataset=dataset,
        processing_class=AutoTokenizer.from_pretrained(str(model_dir)),
        callbacks=callbacks,
    )
    trainer.remove_callback(PrinterCallback)  # with tqdm off, it prints every step's log dict
    return trainer


class StepTimer(TrainerCallback):
    """Seconds from `on_step_begin` to `on_step_end` of every optimizer step."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._start = 0.0

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._start = time.perf_counter()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if torch.cuda.is_available():
            torch.cuda.synchronize()  # the optimizer step's kernels are part of the step
        self.times.append(time.perf_counter() - self._start)


def same_token_ids(tokenizer: PreTrainedTokenizerBase, texts: list[str]) -> list[list[int]]:
    """The prompts' token ids as raygent's `encode_prompt` gives them for chat-template text; raises when TRL's
    tokenization of the same text (`tokenizer(text=...)`) would differ, so both sides see the same tokens."""
    ids = [[int(t) for t in tokenizer.encode(text, add_special_tokens=False)] for text in texts]
    if [list(row) for row in tokenizer(text=texts)["input_ids"]] != ids:
        raise RuntimeError("TRL would tokenize the prompts differently from raygent's encode_prompt")
    return ids


def trl_version() -> str:
    """TRL's version; exits with the install line when TRL is missing."""
    try:
        import trl
    except ImportError:
        raise SystemExit("this bench needs TRL: pip install -e '.[bench]'") from None
    return str(trl.__version__)
