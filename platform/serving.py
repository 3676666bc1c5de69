"""Ray Serve app over a run directory: its verdict, its report, a health check and, for an agent run (one with
`checkpoints/final`), the policy routes of `policy_api.py`: `POST /v1/act` and OpenAI's chat completions
(`POST /v1/chat/completions` with server-sent-event streaming, `GET /v1/models`, `GET /v1/models/{id}`).

`build_api(run_dir, backend, max_body_bytes)` makes the FastAPI app; `RunServer` (a Serve deployment) builds it
on its replica (`__serve_build_asgi_app__`), and tests can run the same app under uvicorn without Ray.
`build_app({"run_dir": ...})` is the import path that `deploy/serve.yaml` and the KubeRay RayService name;
`raygent serve RUN_DIR` runs it on the embedded cluster (or `--address`).

A path with no run yet (a RayService started before its first training run) is served as *waiting*: `/healthz`
answers 200 with `{"status": "waiting", ...}` so the cluster stays healthy, the other routes answer 503 naming
the path, and the run is loaded on the first request after its `config.yaml` appears.

Every error, the framework's own included (404, 405, 422), is answered in OpenAI's error format
(`{"error": {"message", "type", "param", "code"}}`), so an OpenAI client shows the message.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from ray import serve
from starlette.exceptions import HTTPException as StarletteHTTPException

from raygent.platform import rundir
from raygent.platform.config import ConfigError
from raygent.platform.policy_api import (
    DEFAULT_MAX_BODY_BYTES,
    ActRequest,
    ActResponse,
    APIError,
    BodyLimit,
    ChatRequest,
    PolicyService,
    error_body,
)


class AppArgs(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_dir: str
    backend: str = Field(default="hf", pattern=r"^(hf|vllm)$")
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=1024)


class RunState:
    """What a replica serves: the run (loaded once its config exists) and its policy, if it has one."""

    def __init__(self, run_dir: Path, backend: str = "hf") -> None:
        self.run_dir = run_dir
        self.backend = backend
        self.loaded = False
        self.policy: PolicyService | None = None
        self._lock = threading.Lock()
        self.load()

    def load(self) -> bool:
        """Load the run if it exists now; False while there is none. A path that holds something that is not a
        run (a bad config.yaml) raises `ConfigError` at startup, as a misconfigured app should."""
        if self.loaded:
            return True
        with self._lock:
            if not self.loaded and (self.run_dir / rundir.CONFIG_FILE).is_file():
                rundir.load_run_config(self.run_dir)
                self.policy = PolicyService.from_run(self.run_dir, self.backend)
                self.loaded = True
        return self.loaded

    def require_run(self) -> None:
        if not self.load():
            raise APIError(503, f"no run at {self.run_dir} yet (the app loads it once its config.yaml exists)")

    def require_policy(self) -> PolicyService:
        self.require_run()
        if self.policy is None:
            raise APIError(404, "this run has no trained policy (no checkpoints/final)", code="no_policy")
        return self.policy


def _validation_message(exc: RequestValidationError) -> tuple[str, str | None]:
    errors = exc.errors()
    first = errors[0] if errors else {}
    loc = [str(part) for part in first.get("loc", ()) if part != "body"]
    where = ".".join(loc)
    message = str(first.get("msg", "invalid request"))
    if first.get("type") == "json_invalid":
        return f"the body is not valid JSON ({first.get('ctx', {}).get('error', message)})", None
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return (f"{where}: {message}{more}" if where else f"{message}{more}"), where or None


def build_api(run_dir: str | Path, backend: str = "hf", max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> FastAPI:
    """The app's routes over `run_dir` (see the module docstring)."""
    state = RunState(Path(run_dir), backend)
    api = FastAPI(title="raygent")
    api.add_middleware(BodyLimit, max_bytes=max_body_bytes)

    @api.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError) -> JSONResponse:
        return JSONResponse(error_body(exc.message, exc.status, exc.param, exc.code), status_code=exc.status)

    @api.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        message, param = _validation_message(exc)
        return JSONResponse(error_body(message, 422, param, "invalid_request"), status_code=422)

    @api.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail)
        if exc.status_code == 404:
            message = f"no route {request.method} {request.url.path} (see GET /docs)"
        return JSONResponse(error_body(message, exc.status_code), status_code=exc.status_code, headers=exc.headers)

    @api.post("/v1/act")
    def act(request: ActRequest) -> ActResponse:
        return state.require_policy().act(request)

    @api.post("/v1/chat/completions", response_model=None)
    def chat_completions(request: ChatRequest) -> dict[str, Any] | StreamingResponse:
        policy = state.require_policy()
        if request.stream:
            events = policy.chat_stream(request)  # checks and generates before the first byte: errors stay 4xx
            return StreamingResponse(events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
        return policy.chat(request)

    @api.get("/v1/models")
    def models() -> dict[str, Any]:
        return state.require_policy().models()

    @api.get("/v1/models/{model_id:path}")
    def model(model_id: str) -> dict[str, Any]:
        return state.require_policy().model_card(model_id)

    @api.get("/healthz")
    def healthz() -> dict[str, str]:
        if not state.load():
            return {"status": "waiting", "detail": f"no run at {state.run_dir} yet"}
        return {"status": "ok"}

    @api.get("/v1/summary")
    def summary() -> dict[str, Any]:
        state.require_run()
        path = state.run_dir / rundir.SUMMARY_FILE
        if not path.is_file():
            raise APIError(404, "this run has no summary yet")
        return dict(json.loads(path.read_text()))

    @api.get("/v1/report", response_class=HTMLResponse)
    def report() -> str:
        state.require_run()
        path = state.run_dir / rundir.REPORT_FILE
        if not path.is_file():
            raise APIError(404, "this run has no report yet")
        return path.read_text()

    return api


@serve.deployment(num_replicas=1, ray_actor_options={"num_cpus": 0})
@serve.ingress()
class RunServer:
    def __init__(self, run_dir: str, backend: str = "hf", max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.run_dir, self.backend, self.max_body_bytes = run_dir, backend, max_body_bytes

    def __serve_build_asgi_app__(self) -> FastAPI:
        try:
            return build_api(self.run_dir, self.backend, self.max_body_bytes)
        except ConfigError as exc:
            raise ValueError(f"{self.run_dir}: {exc}") from None


def build_app(args: dict[str, Any]) -> Any:
    """Serve application builder (`import_path: raygent.platform.serving:build_app`)."""
    parsed = AppArgs.model_validate(args)
    return RunServer.bind(parsed.run_dir, parsed.backend, parsed.max_body_bytes)  # type: ignore[attr-defined]
