"""Ray Serve app over a run directory: its verdict, its report, a health check and, for an agent run (one with
`checkpoints/final`), the policy routes `POST /v1/act` and `POST /v1/chat/completions` (`policy_api.py`).

`build_app({"run_dir": ...})` is the import path that `deploy/serve.yaml` and the KubeRay RayService name;
`raygent serve RUN_DIR` runs it on the embedded cluster (or `--address`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict
from ray import serve

from raygent.platform import rundir
from raygent.platform.policy_api import (
    DEFAULT_MAX_BODY_BYTES,
    ActRequest,
    ActResponse,
    BodyLimit,
    ChatRequest,
    PolicyService,
)

api = FastAPI(title="raygent")
api.add_middleware(BodyLimit, max_bytes=DEFAULT_MAX_BODY_BYTES)


class AppArgs(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_dir: str
    backend: str = "hf"


@serve.deployment(num_replicas=1, ray_actor_options={"num_cpus": 0})
@serve.ingress(api)
class RunServer:
    def __init__(self, run_dir: str, backend: str = "hf") -> None:
        self.run_dir = Path(run_dir)
        if not (self.run_dir / rundir.CONFIG_FILE).is_file():
            raise ValueError(f"{run_dir} is not a raygent run directory")
        self.policy = PolicyService.from_run(self.run_dir, backend)

    def _policy(self) -> PolicyService:
        if self.policy is None:
            raise HTTPException(404, "this run has no trained policy (no checkpoints/final)")
        return self.policy

    @api.post("/v1/act")
    def act(self, request: ActRequest) -> ActResponse:
        return self._policy().act(request)

    @api.post("/v1/chat/completions")
    def chat_completions(self, request: ChatRequest) -> dict[str, Any]:
        return self._policy().chat(request)

    @api.get("/healthz")
    def healthz(self) -> dict[str, str]:
        return {"status": "ok"}

    @api.get("/v1/summary")
    def summary(self) -> dict[str, Any]:
        path = self.run_dir / rundir.SUMMARY_FILE
        if not path.is_file():
            raise HTTPException(404, "this run has no summary yet")
        return dict(json.loads(path.read_text()))

    @api.get("/v1/report", response_class=HTMLResponse)
    def report(self) -> str:
        path = self.run_dir / rundir.REPORT_FILE
        if not path.is_file():
            raise HTTPException(404, "this run has no report yet")
        return path.read_text()


def build_app(args: dict[str, Any]) -> Any:
    """Serve application builder (`import_path: raygent.platform.serving:build_app`)."""
    parsed = AppArgs.model_validate(args)
    return RunServer.bind(parsed.run_dir, parsed.backend)  # type: ignore[attr-defined]
