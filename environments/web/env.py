"""`BrowserEnv`: a gymnasium environment that puts an agent in front of one of the suite's web apps.

Each episode is one task (`registry.py`): a fresh browser context of the process's one Chromium
(`browser.py`) opens the task's page on the suite's server (`server.py`): the template's `url(params)` when it
gives one, else its app's (`/<app>/index.html?seed=<ui seed>`). Through the page contract (`task.PageContract`:
the template's, else its app's; by default the suite's own) it runs the contract's init scripts, awaits
`window.raygent.ready`, calls `window.raygent.setState(initial_state)` and, when the contract has a `goal`,
reads the instruction from the page. Each `step` parses the action string with the web grammar
(`grammar.py`), carries it out (`actions.py`), reads the page's state (`window.raygent.getState()` by default)
and asks the template's `validate`.

- Observation (dict): `text` (the accessibility tree with element ids, `observe.py`), `goal`, `url`,
  `last_action_error` ("" when the last action was fine), and `screenshot` (an `H×W×3` uint8 image) when built
  with `screenshot=(W, H)`.
- Episode end: `terminated` when `validate` says done or the agent says `finished()`; `truncated` at the
  template's `max_steps` (or the `max_steps` given) and on an infrastructure failure. The step that ends the
  episode carries `validate`'s reward; earlier steps earn 0 (each step's verdict is in `info["validate"]`).
- `info`: `task_id` (`<app>/<template>/<seed>@<ui_seed>`), `goal`, `message` (validate's), `validate`, `step`,
  `valid_action`, `visited_urls` (main-frame URLs of the episode, for DocOS's TUI metric),
  `blocked_requests` (the sandbox's log, `sandbox.py`), `infra_failure`, and `success` on the last step:
  `validate`'s explicit success when it says one, else `done and reward >= 1.0` (`task.verdict`).
- Sandbox: pages reach the suite's server and the `allowed_origins` given (loopback only).
- Reliability: every browser call runs under a watchdog (`step_timeout_s`); a crashed or hung browser ends the
  episode with `info["infra_failure"] = True` (truncated, reward 0) so the caller retries it, and the next
  `reset` relaunches the browser. `reset` itself retries `reset_retries` times (on a fresh context, or on a
  fresh browser when the browser died or hung) and then raises `RuntimeError` with the page's script errors.
  Every environment of the process shares the browser: a crash ends all their episodes as infrastructure
  failures.

A page that opens another tab moves the agent to the newest tab; the app's state is always read from the
first page. `run_solver(env, task_id)` runs a template's scripted expert through the same `step`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from playwright.sync_api import Error as PlaywrightError

from raygent.environments.web.actions import ActionError, ActionExecutor, ActionSettings, settle
from raygent.environments.web.browser import BrowserHost, BrowserHung, shared_browser
from raygent.environments.web.dom import INIT_SCRIPT, observe
from raygent.environments.web.grammar import WEB_GRAMMAR, ClickLabel
from raygent.environments.web.obs_space import MAX_TEXT_CHARS, action_space, clean, observation_space, png_to_array
from raygent.environments.web.observe import find_label
from raygent.environments.web.registry import (
    TaskInstance,
    WebApp,
    app_names,
    available_apps,
    env_id,
    from_platform,
    get_app,
    list_tasks,
    make_task,
)
from raygent.environments.web.sandbox import Sandbox, origin_of
from raygent.environments.web.server import AppServer, shared_server, ui_spec
from raygent.environments.web.task import SUITE_CONTRACT, PageContract, verdict
from raygent.platform.contracts import Task
from raygent.policies.actions import Action, ClickAction, FinishedAction, InvalidAction

UNREADABLE_STATE: dict[str, Any] = {}
"""What `validate` sees when the app's page cannot be read (it navigated away)."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})


def loopback_origins(origins: Sequence[str]) -> tuple[str, ...]:
    """`origins` as `scheme://host:port`, each checked to be an http(s) origin on this machine's loopback."""
    checked = []
    for origin in origins:
        normal = origin_of(origin)
        host = normal.split("://", 1)[1].rsplit(":", 1)[0] if normal else ""
        if host not in LOOPBACK_HOSTS and not host.startswith("127."):
            raise ValueError(f"allowed_origins: {origin!r} is not an http(s) origin on loopback (127.0.0.1, localhost)")
        checked.append(normal)
    return tuple(checked)

Observation = dict[str, Any]


class BrowserEnv(gymnasium.Env[Observation, str]):
    """Web-app tasks in headless Chromium (see the module docstring); registered as `raygent/web-<app>-v0`.

    Args:
        app: the app(s) whose tasks `reset` draws when not given one (None: the suite's own apps); any registered
            app by name (`registry.register_app`, the `raygent.apps` entry points).
        templates: restrict the drawn templates (names within the app(s)).
        difficulties: the levels drawn from (1 atomic, 2 composed, 3 long).
        ui_seed: the UI layout seed of drawn tasks (0: default labels; None: drawn from `ui_seeds`).
        ui_seeds: how many UI seeds a drawn one comes from.
        screenshot: `(width, height)` of a downscaled screenshot in the observation, or None.
        viewport: the browser viewport `(width, height)`.
        max_steps: overrides the templates' step limits.
        step_timeout_s: the watchdog deadline of one step.
        reset_timeout_s: the watchdog deadline of a reset's page work (a browser launch has its own).
        reset_retries: fresh browsers `reset` tries after a failure before raising.
        action_settings: timeouts and amounts of the actions (`actions.py`).
        render_mode: None, `"ansi"` (the observation text) or `"rgb_array"` (a full screenshot).
        browser, server: the host and server to use (default: the thread's shared browser, the process's server).
        cpus: the cores to hold the browser's processes to (`BrowserHost.pin`; None: any core).
        allowed_origins: origins besides the suite's server that pages may reach (loopback only, e.g. a
            benchmark's own server at `http://127.0.0.1:8123`).
    """

    action_grammar = WEB_GRAMMAR
    """The actions `step` parses (a served agent's answers are checked against it: `platform/policy_api.py`)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}  # noqa: RUF012 (gymnasium's attribute)

    def __init__(
        self,
        app: str | Sequence[str] | None = None,
        templates: Sequence[str] | None = None,
        difficulties: Sequence[int] = (1, 2, 3),
        ui_seed: int | None = 0,
        ui_seeds: int = 1000,
        screenshot: tuple[int, int] | None = None,
        viewport: tuple[int, int] = (1280, 800),
        max_steps: int | None = None,
        step_timeout_s: float = 30.0,
        reset_timeout_s: float = 60.0,
        reset_retries: int = 2,
        action_settings: ActionSettings | None = None,
        render_mode: str | None = None,
        browser: BrowserHost | None = None,
        server: AppServer | None = None,
        cpus: Sequence[int] | None = None,
        allowed_origins: Sequence[str] = (),
    ) -> None:
        apps = available_apps() if app is None else (app,) if isinstance(app, str) else tuple(app)
        unknown = [name for name in apps if name not in app_names()]
        if not apps or unknown:
            raise ValueError(f"app must be among {app_names()}, got {app!r}")
        self.allowed_origins = loopback_origins(allowed_origins)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi' or 'rgb_array', got {render_mode!r}")
        self.apps = apps
        self.template_ids = [
            tid
            for name in apps
            for tid in list_tasks(name, difficulties)
            if templates is None or tid.split("/")[1] in templates
        ]
        if not self.template_ids:
            raise ValueError(f"no task templates for apps {apps}, templates {templates}, levels {difficulties}")
        self.ui_seed, self.ui_seeds = ui_seed, ui_seeds
        self.screenshot_size = screenshot
        self.viewport = viewport
        self.last_state: dict[str, Any] | None = None
        self.max_steps_override = max_steps
        self.step_timeout_s = step_timeout_s
        self.reset_timeout_s = reset_timeout_s
        self.reset_retries = reset_retries
        self.action_settings = action_settings or ActionSettings()
        self.render_mode = render_mode
        self._host = browser
        self._server = server
        self.cpus = tuple(cpus) if cpus is not None else None
        self.observation_space = observation_space(screenshot)
        self.action_space = action_space()
        self.task: TaskInstance | None = None
        self._context: Any = None
        self._pages: list[Any] = []
        self._sandbox: Sandbox | None = None
        self._executor: ActionExecutor | None = None
        self._visited: list[str] = []
        self._page_errors: list[str] = []
        self._steps = 0
        self._done = True
        self._last_obs: Observation | None = None
        self._page_goal: str | None = None

    # ------------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict]:
        """Start an episode of `options["task"]` (an id, a platform `Task` or its dict) or of a drawn task.

        `options["ui_seed"]` overrides the UI seed of an id without `@`.
        """
        super().reset(seed=seed)
        self.task = self._choose_task(options or {})
        failure: Exception | None = None
        self.host.pin(self.cpus)  # a relaunch below pins the new browser itself
        for _ in range(self.reset_retries + 1):
            try:
                browser = self.host.browser  # launches (again) if needed, under its own timeout
                with self.host.watchdog(self.reset_timeout_s):
                    observation = self._open_episode(browser)
                break
            except (PlaywrightError, BrowserHung) as error:
                failure = error
                if isinstance(error, BrowserHung) or not self.host.alive():
                    self.host.kill()  # else a fresh context (and renderer) is the retry; other envs keep the browser
        else:
            errors = "; ".join(self._page_errors[-3:]) or "none"
            raise RuntimeError(
                f"could not start {self.task.full_id} in the browser: {failure} (page errors: {errors})"
            ) from failure
        self._steps, self._done = 0, False
        self.last_state = None
        return observation, self._info(message="", verdict=None, infra_failure=False)

    def step(self, action: str) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        """Carry out one action string (see the module docstring for the episode's rules)."""
        if self.task is None or self._done:
            raise RuntimeError("step() called before reset() or after the episode ended")
        self._steps += 1
        parsed = WEB_GRAMMAR.parse(action if isinstance(action, str) else "")
        error = parsed.reason if isinstance(parsed, InvalidAction) else ""
        try:
            with self.host.watchdog(self.step_timeout_s):
                if not isinstance(parsed, InvalidAction):
                    try:
                        self._executor_for().run(self._active_page(), self._by_id(parsed))
                        error = self._sandbox_for().enforce(self._active_page(), self._last_allowed_url()) or ""
                    except ActionError as refused:
                        error = str(refused)
                state = self._read_state()
                observation = self._observe(error)
        except (PlaywrightError, BrowserHung) as failure:
            return self._infra_failure(failure)
        self.last_state = state
        result = tuple(self.task.task.validate(state, self.task.params))
        judged = verdict(result)
        terminated = judged.done or isinstance(parsed, FinishedAction)
        truncated = not terminated and self._steps >= self.max_steps
        self._done = terminated or truncated
        info = self._info(message=judged.message, verdict=result, infra_failure=False)
        info["valid_action"] = not isinstance(parsed, InvalidAction)
        if self._done:
            info["success"] = judged.success
        return observation, judged.reward if self._done else 0.0, terminated, truncated, info

    def _by_id(self, action: Action) -> Action:
        """`click_label("Save")` as a click on the element of that name in the latest observation (`find_label`);
        any other action as it is."""
        if not isinstance(action, ClickLabel):
            return action
        try:
            return ClickAction(element=find_label(self._last_obs["text"] if self._last_obs else "", action.label))
        except LookupError as error:
            raise ActionError(f"{action.render()}: {error}") from None

    def render(self) -> Any:
        """`ansi`: the latest observation text; `rgb_array`: a screenshot of the active page."""
        if self.render_mode == "ansi":
            return self._last_obs["text"] if self._last_obs else ""
        if self.render_mode == "rgb_array" and self._pages:
            return png_to_array(self._active_page().screenshot(type="png"), None)
        return None

    def close(self) -> None:
        """Close the episode's browser context (the browser stays for the thread's other environments)."""
        self._close_context()
        super().close()

    # ------------------------------------------------------------------ helpers

    @property
    def host(self) -> BrowserHost:
        if self._host is None:
            self._host = shared_browser()
        return self._host

    @property
    def server(self) -> AppServer:
        if self._server is None:
            self._server = shared_server()
        return self._server

    @property
    def max_steps(self) -> int:
        assert self.task is not None
        return self.max_steps_override or self.task.max_steps

    @property
    def app(self) -> WebApp:
        """The registered app of the current task."""
        assert self.task is not None
        return get_app(self.task.app)

    @property
    def contract(self) -> PageContract:
        """The page contract of the current task (its template's, else its app's)."""
        assert self.task is not None
        return self.task.task.contract or self.app.contract or SUITE_CONTRACT

    @property
    def goal(self) -> str:
        """The current task's instruction: read from the page when its contract has a `goal`, else the template's."""
        if self._page_goal is not None:
            return self._page_goal
        return self.task.goal if self.task else ""

    def task_url(self) -> str:
        """The current task's page: its template's `url(params)`, else its app's, on the suite's server unless
        absolute."""
        assert self.task is not None
        app = self.app
        if app.static_dir is not None:
            self.server.add_static(f"/{app.name}/", app.static_dir)
        url = self.task.task.url(self.task.params) or app.page_url(self.task.ui_seed)
        return url if "://" in url else self.server.origin + "/" + url.lstrip("/")

    @property
    def visited_urls(self) -> list[str]:
        return list(self._visited)

    def _choose_task(self, options: dict[str, Any]) -> TaskInstance:
        given = options.get("task")
        ui_override = options.get("ui_seed")
        if isinstance(given, str):
            return make_task(given, ui_seed=ui_override)
        if isinstance(given, Task | dict):
            return from_platform(given)
        if given is not None:
            raise TypeError(f"options['task'] must be a task id, a Task or its dict, got {type(given).__name__}")
        rng = self.np_random
        template_id = self.template_ids[int(rng.integers(len(self.template_ids)))]
        ui_seed = self.ui_seed if self.ui_seed is not None else int(rng.integers(self.ui_seeds))
        seed = int(rng.integers(2**31 - 1))
        return make_task(f"{template_id}/{seed}", ui_seed=ui_override if ui_override is not None else ui_seed)

    def _open_episode(self, browser: Any) -> Observation:
        assert self.task is not None
        self._close_context()
        self._visited, self._page_errors = [], []
        self._page_goal = None
        contract = self.contract
        self._sandbox = Sandbox((self.server.origin, *self.allowed_origins))
        self._executor = ActionExecutor(self._sandbox, self.action_settings)
        context = browser.new_context(
            viewport={"width": self.viewport[0], "height": self.viewport[1]},
            service_workers="block",
            accept_downloads=False,
        )
        self._context = context
        context.set_default_timeout(self.action_settings.navigation_timeout_ms)
        self._sandbox.install(context)
        context.add_init_script(INIT_SCRIPT)
        for script in contract.init_scripts:
            context.add_init_script(script)
        context.on("page", self._on_page)
        page = context.new_page()
        self._on_page(page)
        page.goto(self.task_url(), wait_until="load")
        if contract.ready:
            page.wait_for_function(contract.ready)
            page.evaluate(contract.ready)  # awaits the promise a ready function returns
        if contract.set_state:
            # JSON text crosses the protocol far faster than a nested object (a library with subtitle cues).
            page.evaluate(contract.set_state, json.dumps(self.task.task.initial_state(self.task.params)))
        if contract.goal:
            self._page_goal = str(page.evaluate(contract.goal) or "")
        settle(page, self.action_settings.navigation_timeout_ms)
        return self._observe("")

    def _on_page(self, page: Any) -> None:
        if page in self._pages:
            return
        self._pages.append(page)
        page.on("pageerror", lambda error: self._page_errors.append(str(error)[:500]))
        self._sandbox_for().watch(page)
        page.on("framenavigated", lambda frame: self._visited.append(frame.url) if frame == page.main_frame else None)

    def _last_allowed_url(self) -> str:
        sandbox = self._sandbox_for()
        return next((url for url in reversed(self._visited) if sandbox.allows(url)), self.task_url())

    def _active_page(self) -> Any:
        open_pages = [page for page in self._pages if not page.is_closed()]
        if not open_pages:
            raise PlaywrightError("every page of the episode is closed")
        return open_pages[-1]

    def read_state(self) -> dict[str, Any]:
        """The app's state now (what the task checkers read); `last_state` is the one read by the last step."""
        with self.host.watchdog(self.step_timeout_s):
            return self._read_state()

    def _read_state(self) -> dict[str, Any]:
        app_page = self._pages[0]
        if app_page.is_closed():
            raise PlaywrightError("the app's page is closed")
        text = app_page.evaluate(self.contract.get_state)
        try:
            state = json.loads(text) if isinstance(text, str) else text
        except json.JSONDecodeError:
            state = None
        return state if isinstance(state, dict) else dict(UNREADABLE_STATE)

    def _observe(self, error: str) -> Observation:
        page = self._active_page()
        observation: Observation = {
            "text": clean(observe(page), MAX_TEXT_CHARS),
            "goal": clean(self.goal),
            "url": clean(page.url),
            "last_action_error": clean(error),
        }
        if self.screenshot_size is not None:
            png = page.screenshot(type="png", animations="disabled", caret="hide")
            observation["screenshot"] = png_to_array(png, self.screenshot_size)
        self._last_obs = observation
        return observation

    def _infra_failure(self, failure: Exception) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        self.host.kill()
        self._context, self._pages, self._done = None, [], True
        message = f"infrastructure failure: {type(failure).__name__}: {str(failure).splitlines()[0][:300]}"
        observation: Observation = {
            "text": "",
            "goal": clean(self.goal),
            "url": "",
            "last_action_error": clean(message),
        }
        if self.screenshot_size is not None:
            shape = self.observation_space["screenshot"].shape  # type: ignore[index]
            observation["screenshot"] = np.zeros(shape, np.uint8)
        info = self._info(message=message, verdict=None, infra_failure=True)
        info["success"] = False
        return observation, 0.0, False, True, info

    def _info(self, message: str, verdict: tuple | None, infra_failure: bool) -> dict[str, Any]:
        assert self.task is not None
        return {
            "task_id": self.task.full_id,
            "goal": self.goal,
            "message": message,
            "validate": verdict,
            "step": self._steps,
            "visited_urls": list(self._visited),
            "blocked_requests": [b.to_dict() for b in self._sandbox.blocked] if self._sandbox else [],
            "infra_failure": infra_failure,
        }

    def _executor_for(self) -> ActionExecutor:
        assert self._executor is not None
        return self._executor

    def _sandbox_for(self) -> Sandbox:
        assert self._sandbox is not None
        return self._sandbox

    def _close_context(self) -> None:
        context, self._context, self._pages = self._context, None, []
        if context is not None and self.host.alive():
            with contextlib.suppress(PlaywrightError, BrowserHung), self.host.watchdog(self.step_timeout_s):
                context.close()


def run_solver(env: BrowserEnv, task_id: str, ui_seed: int | None = None) -> tuple[bool, int]:
    """Run the template's scripted `solve` for `task_id` in `env`; `(success, steps taken)`.

    The solver sees each observation text and may use the seed's `UISpec` (the expert is privileged).
    """
    observation, _ = env.reset(options={"task": task_id, "ui_seed": ui_seed})
    task = env.task
    assert task is not None
    solver = task.task.solve(task.params, ui_spec(task.app, task.ui_seed))
    steps = 0
    try:
        action = next(solver)
        while True:
            observation, _, terminated, truncated, info = env.step(action)
            steps += 1
            if terminated or truncated:
                return bool(info.get("success")), steps
            action = solver.send(observation["text"])
    except StopIteration:
        return False, steps


def register_envs() -> list[str]:
    """Register `raygent/web-<app>-v0` for every known app with gymnasium (idempotent); returns the ids.

    `gymnasium.make("raygent/web-media_player-v0", difficulties=(1,))` builds one; the app is fixed by the id.
    """
    ids = []
    for app in app_names():
        gym_id = env_id(app)
        if gym_id not in gymnasium.registry:
            gymnasium.register(id=gym_id, entry_point="raygent.environments.web.env:BrowserEnv", kwargs={"app": app})
        ids.append(gym_id)
    return ids
