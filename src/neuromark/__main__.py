"""``python -m neuromark`` is the ``neuromark`` command."""

import sys

from neuromark.cli import main

sys.exit(main())
