"""`python -m foundry.ui.window_probe`: open and close a window, print the Qt platform used.

`foundry doctor` runs it in a child process, so that only the ui package imports Qt and a
platform plugin that crashes cannot take the doctor down with it.
"""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QWidget


def main() -> None:
    app = QApplication([])
    window = QWidget()
    window.setWindowTitle("foundry doctor")
    window.resize(160, 80)
    window.show()
    app.processEvents()
    print(QGuiApplication.platformName())
    window.close()


if __name__ == "__main__":
    main()
