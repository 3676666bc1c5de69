"""The laptop World State Model against a checker on an app it was never trained on (SEAgent's deliverable 2).

    python bench/seagent_wsm.py [seagent.KEY=VALUE ...]     # e.g. seagent.wsm_epochs=2

Fine-tunes the judge exactly as `raygent run seagent` does (`seagent.wsm_*`: SmolLM2-135M-Instruct on the
checker-labelled trajectories of four other apps; cached after the first run, keyed by those settings and the
judge's prompt format) and measures it on the learned app (`seagent.app`, the media player) with that app's
checker: `seagent.wsm_eval_seeds` parameter seeds per template, each as an expert, a prefix, a deviation and a
random trajectory, and each again under two other tasks' instructions (`swapped`, labelled by those tasks'
checkers on its final state: a judge that reads the instruction says "not done" to most). Per kind and overall it
prints the success accuracy beside "always failed", and the first-error-step accuracy on the checker's failures
beside "always step 0", and how often it ranks a task's success above the same task's failure (`within_task_auc`,
by P(done): 0.5 is chance). Last line: `success_accuracy=… always_failed=… first_error_accuracy=…
first_error_at_0=… judged_success_rate=… within_task_auc=… swapped_accuracy=… swapped_judged_done=…`.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import yaml
from pydantic import ValidationError
from rich.console import Console

from raygent.jobs.seagent.recipe import SeagentSettings, prepare_judge


def settings_from(argv: list[str]) -> SeagentSettings:
    values: dict[str, Any] = {}
    for item in argv:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("seagent."):
            print(f"expected seagent.KEY=VALUE, got {item!r}", file=sys.stderr)
            sys.exit(2)
        values[key.removeprefix("seagent.")] = yaml.safe_load(value)
    try:
        return SeagentSettings(**values)
    except ValidationError as exc:
        print(f"seagent: {exc}", file=sys.stderr)
        sys.exit(2)


def main() -> None:
    settings = settings_from(sys.argv[1:])
    console = Console()
    began = time.perf_counter()
    _, judge = prepare_judge(settings.model_copy(update={"wsm_eval_seeds": max(settings.wsm_eval_seeds, 1)}), console)
    for kind, row in judge["agreement"].items():
        print(
            f"{kind:>9}: n={row['n']:.0f} success accuracy {row['success_accuracy']:.3f} (always failed "
            f"{row['always_failed_accuracy']:.3f}; checker says done {row['checker_success_rate']:.3f}, judge "
            f"{row['judged_success_rate']:.3f}); first error {row.get('first_error_accuracy', float('nan')):.3f} "
            f"(always step 0 {row.get('first_error_at_0_accuracy', float('nan')):.3f}); within-task ranking "
            f"{row.get('within_task_auc', float('nan')):.3f}"
        )
    overall, swapped = judge["agreement"]["all"], judge["agreement"].get("swapped", {})
    print(f"training: {judge.get('training', 'a given judge (seagent.wsm_model)')}")
    print(f"minutes={(time.perf_counter() - began) / 60:.1f}")
    print(
        f"success_accuracy={overall['success_accuracy']:.3f} always_failed={overall['always_failed_accuracy']:.3f} "
        f"first_error_accuracy={overall['first_error_accuracy']:.3f} "
        f"first_error_at_0={overall['first_error_at_0_accuracy']:.3f} "
        f"judged_success_rate={overall['judged_success_rate']:.3f} "
        f"within_task_auc={overall.get('within_task_auc', float('nan')):.3f} "
        f"swapped_accuracy={swapped.get('success_accuracy', float('nan')):.3f} "
        f"swapped_judged_done={swapped.get('judged_success_rate', float('nan')):.3f}"
    )


if __name__ == "__main__":
    main()
