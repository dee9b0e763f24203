"""Does not parse."""
CLASS = "11 misbehaving answers"
BASE = "skeleton"
EXPECT = "zero"
PRESENT = ["SyntaxError", "line"]
CODE = "def causal_mask(T:\n    return\n"
