"""Renders resources/icons/foundry.svg to the PNG sizes, the Windows .ico and the macOS .icns.

Run from the repository root after changing the SVG: `python packaging/make_icons.py`.
The outputs are committed, so a build needs neither Qt's SVG module nor this script.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PIL import Image

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SOURCE = ICONS / "foundry.svg"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICNS_SIZES = (16, 32, 64, 128, 256, 512)


def png_path(size: int) -> Path:
    return ICONS / f"foundry-{size}.png"


def render_pngs() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"{SOURCE}: not a valid SVG")
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter)
        painter.end()
        image.save(str(png_path(size)))
    del app


def write_bundles() -> None:
    largest = Image.open(png_path(max(SIZES)))
    largest.save(
        ICONS / "foundry.ico",
        sizes=[(size, size) for size in ICO_SIZES],
        append_images=[Image.open(png_path(size)) for size in ICO_SIZES],
    )
    largest.save(
        ICONS / "foundry.icns",
        append_images=[Image.open(png_path(size)) for size in ICNS_SIZES],
    )


if __name__ == "__main__":
    render_pngs()
    write_bundles()
    print(f"wrote {len(SIZES)} PNGs, foundry.ico and foundry.icns in {ICONS}")
