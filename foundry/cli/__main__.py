"""`python -m foundry.cli`, as the installed `foundry` command runs."""

import sys

from foundry.cli.main import main

sys.exit(main())
