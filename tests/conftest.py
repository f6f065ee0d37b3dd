import pathlib
import sys

# The op matrix is a package of test data next to the tests.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
