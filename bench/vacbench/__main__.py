"""python3 -m bench.vacbench: see bench/vacbench/__init__.py."""

import sys

from bench.vacbench.cli import main

sys.exit(main())
