import os
import sys

# Tests run against the installed package, or against python/ in a development build (tools/dev_build.sh).
sys.path.insert(0, os.path.dirname(__file__))
