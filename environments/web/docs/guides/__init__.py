"""The apps' guides, one module per app (`<app>.py`, its `GUIDE`). Not listed here: each app's `WebApp.guide` names
its guide (`registry.builtin_app` names `guides/<app>.py` for the suite's own apps) and `registry.app_guides()`
gathers them, in the order of `registry.app_names()`, for the documentation site."""
