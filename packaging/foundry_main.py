"""The script PyInstaller freezes: the packaged `foundry` executable starts here."""

import sys

from foundry.launcher import main

if __name__ == "__main__":
    sys.exit(main())
