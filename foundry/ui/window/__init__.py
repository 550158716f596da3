"""The main window, split by its parts: menus, the Agent panel, the tabs and the preloads.

`foundry.ui.window.main_window.MainWindow` composes them. This package imports Qt and nothing
heavy at import time (see main_window's docstring): keep this file empty of imports.
"""
