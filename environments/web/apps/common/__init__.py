"""What the apps share: the menu kit (`menus.js`, served at `/common/menus.js`: menu bar, shortcuts, context menu
and dialogs, as functions or as the `Shell`/`Dialogs` classes) and the generic building blocks of the scripted
solvers (`expert.py`). Not an app: it has no `commands.py` and no `tasks/`."""
