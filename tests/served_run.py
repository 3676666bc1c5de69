"""Helpers for the serving tests: the smallest agent run directory `raygent serve` accepts, and the Serve app's
routes (`platform.serving.build_api`, the same app a Serve replica builds) on a loopback uvicorn server.

The run is built the way `raygent run grpo_toy_tiny` starts one, without Ray: the job's validated config saved as the
run's `config.yaml`, the tiny `tiny-qwen2` policy with a BPE tokenizer trained on ToolCalc text (the recipe's own
`initial_model`), copied to `checkpoints/final` with a `trainer_state.json`, where a finished run leaves its
policy. Its weights are untrained: these tests check the API, not what the policy learned.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import free_port

VERSION = 3


def make_agent_run(run_dir: Path) -> Path:
    from raygent.environments.toolcalc import corpus
    from raygent.platform import rundir
    from raygent.platform.config import load_config
    from raygent.platform.rl.checkpoint import CHECKPOINTS, FINAL, write_state
    from raygent.platform.rl.initial import agent_sections, initial_model
    from raygent.platform.rl.settings import AgentRunConfig

    run_dir.mkdir(parents=True, exist_ok=True)
    config = load_config("grpo_toy_tiny")
    rundir.save_config(run_dir, config)
    model = initial_model(agent_sections(config, AgentRunConfig), run_dir, corpus(n_tasks=300, seed=0))
    final = run_dir / CHECKPOINTS / FINAL
    shutil.copytree(model, final)
    write_state(final, {"stage": "grpo", "step": VERSION, "version": VERSION})
    return run_dir


@contextmanager
def uvicorn_app(app: Any) -> Iterator[str]:
    """Serve an ASGI app on a free loopback port in a thread; yields the base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 60
    while not server.started:
        assert thread.is_alive() and time.time() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
