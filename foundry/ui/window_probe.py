"""`python -m foundry.ui.window_probe`: open a window with a chart in it, print the Qt platform
used, close it. (The chart proves the dashboards' pyqtgraph and numpy load: a bundle built
without them would open windows but not the dashboards.)

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
    _chart(window)
    window.show()
    app.processEvents()
    print(QGuiApplication.platformName())
    window.close()


def _chart(window: QWidget) -> None:
    import pyqtgraph

    plot = pyqtgraph.PlotWidget(window)
    plot.plot([0.0, 1.0, 2.0], [1.0, 3.0, 2.0])
    plot.resize(160, 80)


if __name__ == "__main__":
    main()
