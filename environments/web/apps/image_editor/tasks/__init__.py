"""The image editor's task templates (importing this package registers them in `TASKS`): `atomic.py` (one command
each), `composed.py` (a few) and `long.py` (several features in one episode)."""

from raygent.environments.web.apps.image_editor.tasks import atomic, composed, long

__all__ = ["atomic", "composed", "long"]
