#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The ILP study's model against measurement: `python3 ilp/model.py --help`.

The model is the ilpmodel package beside this file (one module per idea:
ilpmodel/__init__.py lists them); ilp/README.md says how to feed it and
how to read what it prints.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ilpmodel.cli import main  # noqa: E402

if __name__ == '__main__':
    sys.exit(main())
