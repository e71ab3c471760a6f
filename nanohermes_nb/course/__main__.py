"""``python -m nanohermes_nb.course``: execute the notebooks and build the course."""

import sys

from .build import main

sys.exit(main())
