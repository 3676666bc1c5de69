"""Does the frozen web agent follow a skill it is served? Its held-out success with the experts' memory, an upper
bound on what XSkill's memory can give it.

    python bench/xskill_oracle.py RUN_DIR [RUN_DIR ...] [overrides ...]

Each RUN_DIR is a finished `raygent run xskill_web` (e.g. `python bench/xskill.py --job xskill_web --keep DIR`'s
`DIR/seed0`). For each, the *teacher bank* (the same `WebSummarizer` and `MemoryBank` fed with the scripted
experts' episodes of the evaluated apps' train tasks, as many parameter seeds as the run's SFT pool, at the run's
UI layout: `jobs.xskill.web.teacher_bank`) is written to `teacher.json`, and the
run's config is run again on its final checkpoint with that memory and no SFT or phase I
(`policy.model=RUN_DIR/checkpoints/final sft.steps=0 trainer.steps=0 xskill.initial_memory=teacher.json`): the
four variants on the run's held-out tasks. The experts' skills are what the agent was fine-tuned to read, on
other parameter seeds of the same templates; where the agent's own memory holds few skills, this says whether
more skills would have helped.

Per run it prints the variants' success and how many held-out episodes got a skill; last line: means over runs,
`gain` = both − none with `gain_sd` its standard deviation over runs, and `minutes` the mean wall time.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from statistics import mean

from _runs import parse_args, run_job, variant_summary

from raygent.environments.web.agent.demos import demonstrations
from raygent.environments.web.agent.tasks import sft_pool_for
from raygent.jobs.xskill.web import XSkillWebConfig, teacher_bank
from raygent.platform.config import load_config
from raygent.platform.rl.initial import agent_sections

VARIANTS = ("none", "experiences", "skills", "both")


def write_teacher(run: Path, out: Path, overrides: list[str]) -> int:
    """The teacher bank of the experts' episodes on `run`'s evaluated apps (`eval_apps`, else `apps`) at its
    layouts (`env.task_kwargs.ui_seeds`), the tasks of its SFT pool size, saved to `out`; returns how many skills it
    holds. `overrides` are the bench's, so the teacher is of the tasks the run is evaluated on."""
    agent = agent_sections(load_config(str(run / "config.yaml"), overrides), XSkillWebConfig)
    env_kwargs = {k: v for k, v in agent.env.task_kwargs.items() if k != "modes"}
    evaluated = env_kwargs.get("eval_apps") or env_kwargs.get("apps")
    pool = sft_pool_for({**env_kwargs, "apps": evaluated, "pool": agent.sft.task_kwargs.get("pool", 1)})
    bank = teacher_bank(pool, demonstrations(pool, agent.web.demo_workers))
    bank.save(out)
    return len(bank.skills)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+", help="finished xskill_web run directories")
    parser.add_argument("--keep", type=Path, default=None, help="keep the oracle runs under this folder")
    args = parse_args(parser)
    success: dict[str, list[float]] = {v: [] for v in VARIANTS}
    minutes: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        for index, run in enumerate(args.runs):
            folder = root / f"oracle{index}"
            folder.mkdir(parents=True, exist_ok=True)
            skills = write_teacher(run, folder / "teacher.json", args.overrides)
            overrides = [
                f"policy.model={(run / 'checkpoints' / 'final').resolve()}",
                "sft.steps=0",
                "trainer.steps=0",
                f"xskill.initial_memory={(folder / 'teacher.json').resolve()}",
                *args.overrides,
            ]
            results, wall = run_job(str(run / "config.yaml"), overrides, folder / "run", "xskill.json")
            minutes.append(wall)
            after = results["after"]
            for variant in VARIANTS:
                success[variant].append(after[variant]["success"])
            line = " ".join(f"{v} {after[v]['success']:.3f}" for v in VARIANTS)
            shown = after["skills"].get("xskill/context_ok", 0)
            print(
                f"{run}: {line}; teacher skills {skills}, held-out episodes shown a skill "
                f"{shown:.0f} of {after['skills']['episodes']}; {wall:.1f} min",
                flush=True,
            )
    print(f"{variant_summary(success)} minutes={mean(minutes):.2f} runs={len(minutes)}")


if __name__ == "__main__":
    main()
