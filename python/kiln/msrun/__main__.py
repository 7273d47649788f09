"""`python -m kiln.msrun ...`: MindSpore's msrun launcher on Kiln (see kiln.msrun)."""
import sys

from kiln.msrun import main

if __name__ == "__main__":
    sys.exit(main())
