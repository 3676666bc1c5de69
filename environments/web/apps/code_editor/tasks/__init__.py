"""The code editor's task templates (importing this module registers them in `TASKS`).

Seven atomic templates (`atomic.py`: open, create, rename, delete a file; tab size; word wrap; run),
seven composed ones (`composed.py`: replace and save, comment or delete a line, write a new file,
append and run, sort lines, configure the editor) and four long ones (`long.py`: fix a value and run,
rename a variable across files, reorganize the workspace, clean up and run). Checkers read `getState()`:
`files` (saved contents), `dirty`, `tabs`, `active`, `runs` (each with its file, source, output and error) and
`settings`.
"""

from raygent.environments.web.apps.code_editor.tasks import atomic, composed, long

__all__ = ["atomic", "composed", "long"]
