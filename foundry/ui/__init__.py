"""The desktop app (PySide6): the only package that imports Qt."""

from foundry.ui.pyside_imports import check_sources_without_keeping_them

check_sources_without_keeping_them()
