"""`python -m kiln.compat script.py [args]` / `-m module [args]`: run a MindSpore program on Kiln (see kiln.compat)."""
import sys

from kiln.compat import main

if __name__ == "__main__":
    sys.exit(main())
