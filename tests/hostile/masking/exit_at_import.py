"""Calls sys.exit(0) while being imported."""
CLASS = "11 misbehaving answers"
BASE = "reference"
EXPECT = "zero"
PRESENT = ["sys.exit(0)"]
CODE = "import sys\nsys.exit(0)\n"
