"""What the apps share: the menu/dialog JavaScript kits (`shell.js`, `menus.js`, served at `/common/...`) and the
generic building blocks of the scripted solvers (`expert.py`). Not an app: it has no `commands.py`."""
