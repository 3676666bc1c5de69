"""Fine-tune the laptop World State Model and measure it against the checkers on an app it was not trained on.

- `samples(records)`: the two yes/no questions of `rewards.seagent.lm_judge` from checker-labelled trajectories
  (`wsm_data.py`): each step that changed the screen, before the first error (yes) or at it (no), steps after it
  skipped; and per trajectory, the done question over the change from the first screen to the last (the
  checker's success), then `swap` more done questions (kind `swapped`) over the same change under other tasks'
  instructions of the same app, each labelled by that task's own checker on the trajectory's final state (mostly
  "no": the judge has to read the instruction against the change, where matched pairs alone let it answer from
  how a trajectory looks, e.g. an expert's complete menu path).
- `finetune(base, samples, out)`: the pretrained preset (SmolLM2-135M-Instruct) with its top `train_layers`
  transformer blocks and final norm trained (embeddings, LM head and the blocks below frozen) on the logit
  difference logit(" yes") − logit(" no") with a class-balanced logistic loss; saved as a model directory that
  `YesNoScorer` and the WSM load. The frozen blocks' output is computed once per prompt and cached, and each
  epoch runs only the top blocks from it (the model's own forward over `inputs_embeds`, with its layer list cut
  to the trained blocks), so an epoch costs `train_layers`/30 of a forward pass of the whole model.
- `trajectories(records)`: recorded trajectories as the platform's `Trajectory` contracts (the final screen in
  the last step's `info["screen"]`, as the SEAgent environment writes it), so `agreement` measures the real
  reward model: success accuracy against the checker, and first-error-step accuracy on the checker's failures
  (against `wsm_data`'s reference step), with two trivial baselines beside it (always "failed"; error at step 0),
  and `within_task_auc`: how often a success's P(done) exceeds a failure's of the same task (the ranking a
  probability reward gives GRPO, whatever the verdict's threshold).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from raygent.environments.web.registry import make_task
from raygent.environments.web.task import verdict
from raygent.jobs.seagent.wsm_data import Record, is_finish
from raygent.platform.contracts import Observation, Step, Trajectory
from raygent.rewards.seagent.lm_judge import MAX_PROMPT_TOKENS, answer_ids, done_prompt, encode_batch, step_prompt
from raygent.rewards.seagent.screens import NO_CHANGE, caption
from raygent.rewards.seagent.wsm import FINAL_SCREEN_KEY, WorldStateModel

Sample = tuple[str, bool]


def checker_says(task_id: str, state: dict[str, Any]) -> bool | None:
    """Whether the suite task `task_id`'s checker calls `state` done; None when it cannot read that state (a
    state of another task's start may lack what it looks up)."""
    instance = make_task(task_id)
    try:
        return verdict(tuple(instance.task.validate(state, instance.params))).success
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None


def swapped(records: Sequence[Record], per_record: int, seed: int = 0) -> list[Record]:
    """Each record (with a `state`) again under up to `per_record` other instructions of its app, kind `swapped`,
    its `success` that instruction's task's checker on the record's final state (a checker that cannot read that
    state: left out); no first error (the expert path is the other task's)."""
    rng = random.Random(seed)
    tasks_of: dict[str, dict[str, str]] = {}  # app -> instruction -> a task id with it
    for record in records:
        tasks_of.setdefault(record["app"], {}).setdefault(record["instruction"], record["task_id"])
    out: list[Record] = []
    for record in records:
        if "state" not in record:
            continue
        others = sorted(set(tasks_of[record["app"]]) - {record["instruction"]})
        for instruction in rng.sample(others, min(per_record, len(others))):
            task_id = tasks_of[record["app"]][instruction]
            label = checker_says(task_id, record["state"])
            if label is not None:
                out.append({**record, "task_id": task_id, "instruction": instruction, "kind": "swapped",
                            "success": label, "first_error": None})  # fmt: skip
    return out


def samples(
    records: Sequence[Record], caption_chars: int = 400, swap: int = 0, seed: int = 0
) -> tuple[list[Sample], list[Sample]]:
    """(step samples, done samples) of the records, then the done samples of `swap` swapped instructions per
    record (see the module docstring)."""
    steps: list[Sample] = []
    done: list[Sample] = []
    for record in [*records, *swapped(records, swap, seed)]:
        screens, actions = record["screens"], record["actions"]
        overall = caption(screens[0], screens[-1], caption_chars)
        done.append((done_prompt(record["instruction"], overall), bool(record["success"])))
        if record["kind"] == "swapped":
            continue
        error = record["first_error"]
        for index, action in enumerate(actions):
            if error is not None and index > error:
                break
            change = caption(screens[index], screens[index + 1], caption_chars)
            if change == NO_CHANGE or is_finish(action):
                continue
            steps.append((step_prompt(record["instruction"], action, change), error is None or index < error))
    return steps, done


def finetune(
    base: str | Path,
    data: Sequence[Sample],
    out: str | Path,
    train_layers: int = 4,
    epochs: int = 2,
    lr: float = 1e-4,
    batch_size: int = 8,
    seed: int = 0,
    threads: int | None = None,
    log: Any = print,
    max_tokens: int = MAX_PROMPT_TOKENS,
) -> dict[str, float]:
    """Fine-tune `base` on `data` and save it to `out` (see the module docstring); training stats."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    yes_id, no_id = answer_ids(tokenizer)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    blocks = model.model.layers
    trained = [*blocks[len(blocks) - train_layers :], model.model.norm]
    params = [p for module in trained for p in module.parameters()]
    for parameter in params:
        parameter.requires_grad_(True)
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    positives = sum(label for _, label in data)
    pos_weight = torch.tensor((len(data) - positives) / max(positives, 1))
    began = time.perf_counter()
    # the frozen blocks see each prompt once: their output is cached and the trained top blocks start from it
    cached = []
    with torch.inference_mode():
        for start in range(0, len(data), batch_size):
            batch = encode_batch(tokenizer, [prompt for prompt, _ in data[start : start + batch_size]], max_tokens)
            states = model.model(**batch, output_hidden_states=True).hidden_states[len(blocks) - train_layers]
            for row in range(states.shape[0]):
                width = int(batch["attention_mask"][row].sum())
                cached.append(states[row, :width].clone())
    log(f"wsm: {len(data)} prompts through the frozen blocks in {time.perf_counter() - began:.0f} s")
    full = model.model.layers
    model.model.layers = torch.nn.ModuleList(list(full[len(full) - train_layers :]))
    rng = random.Random(seed)
    order = list(range(len(data)))
    losses: list[float] = []
    model.train()
    try:
        for epoch in range(epochs):
            rng.shuffle(order)
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                width = max(cached[i].shape[0] for i in chunk)
                embeds = torch.zeros(len(chunk), width, cached[0].shape[1])
                mask = torch.zeros(len(chunk), width, dtype=torch.long)
                for row, i in enumerate(chunk):
                    embeds[row, : cached[i].shape[0]] = cached[i]
                    mask[row, : cached[i].shape[0]] = 1
                hidden = model.model(inputs_embeds=embeds, attention_mask=mask).last_hidden_state
                last = hidden[torch.arange(len(chunk)), mask.sum(dim=1) - 1]
                head = model.get_output_embeddings().weight
                logits = last @ (head[yes_id] - head[no_id])
                labels = torch.tensor([float(data[i][1]) for i in chunk])
                loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels, pos_weight=pos_weight)
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                optimizer.step()
                losses.append(float(loss.detach()))
            log(f"wsm epoch {epoch + 1}/{epochs}: loss {sum(losses[-20:]) / len(losses[-20:]):.3f}")
    finally:
        model.model.layers = full
    model.eval()
    Path(out).mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return {
        "samples": float(len(data)),
        "positives": float(positives),
        "seconds": time.perf_counter() - began,
        "final_loss": sum(losses[-20:]) / max(len(losses[-20:]), 1),
    }


def trajectory(record: Record, index: int = 0) -> Trajectory:
    """A recorded trajectory as the platform's contract (dummy token ids: the WSM reads screens and actions)."""
    from raygent.platform.contracts import Task

    screens, actions = record["screens"], record["actions"]
    steps = [
        Step(
            observation=Observation(text=screens[i]),
            prompt_ids=[0],
            response_ids=[],
            logprobs=[],
            action=action,
            info={FINAL_SCREEN_KEY: screens[-1]} if i == len(actions) - 1 else {},
            policy_version=0,
        )
        for i, action in enumerate(actions)
    ]
    task = Task(id=record["task_id"], env="raygent/web-url-v0", instruction=record["instruction"])
    return Trajectory(task=task, steps=steps, success=record["success"], group_id=f"g{index}")


def within_task_auc(rows: Sequence[tuple[str, bool, float]]) -> float | None:
    """The chance that a success's score (the judge's P(done)) exceeds a failure's of the same task, ties counting
    half, over `(task id, checker's success, score)` rows; None without such a pair. GRPO compares the episodes of
    one task with each other, so this, not the thresholded verdict, is the signal a probability reward
    (`reward.kwargs.score: probability`) gives it."""
    by_task: dict[str, list[tuple[bool, float]]] = {}
    for task_id, success, score in rows:
        by_task.setdefault(task_id, []).append((success, score))
    pairs = [
        (a > b) + 0.5 * (a == b)
        for rows_of_task in by_task.values()
        for a in (score for success, score in rows_of_task if success)
        for b in (score for success, score in rows_of_task if not success)
    ]
    return sum(pairs) / len(pairs) if pairs else None


def agreement(wsm: WorldStateModel, records: Sequence[Record], swap: int = 0) -> dict[str, Any]:
    """The WSM against the checker on `records` (see the module docstring), overall and per trajectory kind; with
    `swap`, also on that many swapped instructions per record (kind `swapped`, success only, not in `all`): a
    judge that reads the instruction says "not done" to another task's trajectory."""
    extra = swapped(records, swap) if swap else []
    judged = wsm.judge([trajectory(r, i) for i, r in enumerate([*records, *extra])])
    rows = list(zip([*records, *extra], judged, strict=True))

    def summary(subset: list[tuple[Record, Any]]) -> dict[str, float]:
        failures = [(r, j) for r, j in subset if not r["success"] and r["first_error"] is not None]
        out = {
            "n": float(len(subset)),
            "success_accuracy": sum(bool(r["success"]) == j.success for r, j in subset) / max(len(subset), 1),
            "checker_success_rate": sum(bool(r["success"]) for r, _ in subset) / max(len(subset), 1),
            "judged_success_rate": sum(j.success for _, j in subset) / max(len(subset), 1),
            "always_failed_accuracy": sum(not r["success"] for r, _ in subset) / max(len(subset), 1),
        }
        auc = within_task_auc([(r["task_id"], bool(r["success"]), j.info.get("p_done", j.score)) for r, j in subset])
        if auc is not None:
            out["within_task_auc"] = auc
        if failures:
            out["failures"] = float(len(failures))
            out["first_error_accuracy"] = sum(r["first_error"] == j.first_error_step for r, j in failures) / len(
                failures
            )
            out["first_error_at_0_accuracy"] = sum(r["first_error"] == 0 for r, _ in failures) / len(failures)
        return out

    matched = rows[: len(records)]
    kinds = sorted({r["kind"] for r, _ in rows})
    return {
        "all": summary(matched),
        **{kind: summary([(r, j) for r, j in rows if r["kind"] == kind]) for kind in kinds},
    }
