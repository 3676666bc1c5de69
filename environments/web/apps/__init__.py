"""The suite's apps, one subpackage each, all laid out alike (`environments/web/README.md`): `__init__.py` (its
`APP`, named by a `raygent.apps` entry point), `tasks/{atomic,composed,long}.py`, `expert.py`, `commands.py` (the
UI vocabulary) and the page's static files served by `server.py`; `common/` is what they share. The list of apps
is the entry points' (`registry.builtin_apps()`), not written here."""
