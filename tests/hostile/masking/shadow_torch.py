"""Hands in a torch.py that imports the real torch and puts the original fused attention back, so that its code,
first on the import path, runs before the grader's traps (the review's 55/55)."""
CLASS = "6 forbidden routines"
BASE = "reference"
EXPECT = "zero"
PRESENT = ["it has the name of the Python library torch"]
FILES = {"torch.py": "import sys, importlib\nsys.modules.pop('torch', None)\nsys.path.pop(0)\nimport torch\n"}
