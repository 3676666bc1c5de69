"""XSkill's LM summarizer against a real model: does a language model turn contrasted rollouts into tips?

    python bench/xskill_summarizer.py [--model smollm2-135m-instruct] [--per-template 2] [--show 6]

The groups are the teacher's (`jobs/xskill/tasks.teacher_groups`: on ToolCalc train tasks of all nine templates,
the scripted expert's episode twice and perturbed experts' failures, all run through the environment), so every
group holds successes and failures to contrast. Each goes to `LMSummarizer` (the job's `xskill.summarizer: lm`)
through `PolicyChat` over an in-process `InferenceEngine` (hf backend, greedy, 160 new tokens) on `--model` (a
pretrained preset or a model directory, as `policy.model` takes it), and the parsed operations are applied to a
`MemoryBank` as the hook does. The programmatic summarizer's tips on the same groups are printed beside them.
Last line (`calls`: the groups with both outcomes, the ones sent; `unparsed`: objects that did not parse or copied
the prompt's placeholder): `calls=… answers_with_ops=… ops=… unparsed=… kept_tips=… seconds_per_call=…`.
"""

from __future__ import annotations

import argparse
import time

from raygent.environments.toolcalc.tasks import TEMPLATES
from raygent.jobs.xskill.memory import MemoryBank
from raygent.jobs.xskill.summarize import Group, LMSummarizer, PolicyChat, ProgrammaticSummarizer
from raygent.jobs.xskill.tasks import teacher_groups
from raygent.platform.rl.engine import InferenceEngine
from raygent.policies.loading import load_tokenizer, resolve_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--per-template", type=int, default=2, help="groups per template")
    parser.add_argument("--show", type=int, default=6, help="answers to print")
    args = parser.parse_args()
    path = resolve_model(args.model)
    engine = InferenceEngine("hf", str(path), {"threads": 2})
    groups: list[Group] = []
    for template in TEMPLATES:
        groups += teacher_groups([template])[: args.per_template]
    policy_chat = PolicyChat(engine, load_tokenizer(path), max_new_tokens=160)
    answers: list[str] = []
    seconds = 0.0

    def chat(prompt: str) -> str:
        nonlocal seconds
        begin = time.perf_counter()
        answers.append(policy_chat(prompt))
        seconds += time.perf_counter() - begin
        return answers[-1]

    lm, rules = LMSummarizer(chat), ProgrammaticSummarizer()
    bank, rule_bank = MemoryBank(), MemoryBank()
    with_ops = 0
    shown = 0
    for group in groups:
        view, asked = bank.view([group.situation]), len(answers)
        ops = lm.summarize([group], view)  # a group of only successes or only failures is not sent: nothing to contrast
        written = [op for op in ops if op.kind == "lm"]
        with_ops += bool(written)
        bank.apply(ops)
        rule_bank.apply(rules.summarize([group], rule_bank.view([group.situation])))
        if len(answers) > asked and shown < args.show:
            shown += 1
            print(f"--- {group.instruction}\n{lm.prompt(group, view)}{answers[-1].strip()}\n=> {len(written)} op(s)")
    print("\nLM tips kept:", *(f"  {e.text}" for e in bank.experiences.values()), sep="\n")
    print("programmatic tips on the same groups:", *(f"  {e.text}" for e in rule_bank.experiences.values()), sep="\n")
    calls = lm.stats["lm_calls"]
    print(
        f"calls={calls} answers_with_ops={with_ops} ops={lm.stats['lm_ops']} unparsed={lm.stats['lm_unparsed']} "
        f"kept_tips={len(bank.experiences)} seconds_per_call={seconds / max(calls, 1):.1f}"
    )


if __name__ == "__main__":
    main()
