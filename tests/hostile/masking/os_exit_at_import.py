"""Calls os._exit(3) while being imported: the process is gone without a word."""
CLASS = "11 misbehaving answers"
BASE = "reference"
EXPECT = "zero"
PRESENT = ["exited with status 3"]
CODE = "import os\nos._exit(3)\n"
