"""``python -m fluidscope.widgets.cli``: the ``fluidscope`` command."""
import sys

from .app import main

sys.exit(main())
