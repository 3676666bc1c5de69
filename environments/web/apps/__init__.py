"""The suite's apps, one subpackage each (`code_editor`, `image_editor`, `word_processor`, `slide_editor`,
`media_player`): static files served by `server.py`, `commands.py` (the UI vocabulary) and `tasks.py`."""
