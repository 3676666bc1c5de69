"""The media player's task templates (importing this package registers them in `TASKS`): `atomic.py` (one command
each), `composed.py` (a few) and `long.py` (several features in one episode)."""

from raygent.environments.web.apps.media_player.tasks import atomic, composed, long

__all__ = ["atomic", "composed", "long"]
