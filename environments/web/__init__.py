"""The novel-software suite: local web apps, their tasks, and the browser environment that runs them.

`env.BrowserEnv` (gymnasium, Playwright over Debian's Chromium), `env.run_solver`, `env.register_envs`;
`registry.list_tasks` / `registry.make_task`; the shared contract in `ui.py`, `task.py` and `observe.py`.
Importing this package starts nothing (no browser, no server, no Playwright).
"""
