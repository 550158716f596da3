"""The app's icon comes from resources/icons, at every size the desktop may ask for."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from foundry.ui.app import app_icon


def test_app_icon_has_every_shipped_size(qapp: QApplication) -> None:
    sizes = {(size.width(), size.height()) for size in app_icon().availableSizes()}
    assert sizes == {(n, n) for n in (16, 24, 32, 48, 64, 128, 256, 512)}
