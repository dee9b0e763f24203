"""The static scan for forbidden library routines."""

import json

from autograder.grading.staticcheck import MODULE_LEVEL, scan

FORBIDDEN = ["torch.nn.functional.scaled_dot_product_attention", "torch.nn.MultiheadAttention"]


def findings(tmp_path, source, filename="masking.py"):
    (tmp_path / filename).write_text(source)
    return scan(tmp_path, [filename], FORBIDDEN)


def test_library_calls_are_found_per_symbol(tmp_path):
    found = findings(tmp_path, """
import torch.nn.functional as F
from torch.nn.functional import scaled_dot_product_attention as sdpa

def scaled_dot_product_attention(q, k, v, mask=None):
    return F.scaled_dot_product_attention(q, k, v), None

class Block:
    def __init__(self):
        self.attn = torch.nn.MultiheadAttention(8, 2)

def sneaky(q):
    return getattr(F, "scaled_dot_product_attention")(q, q, q)
""")
    assert set(found) == {MODULE_LEVEL, "scaled_dot_product_attention", "Block", "sneaky"}
    assert "line 6" in found["scaled_dot_product_attention"][0]  # the source starts with a blank line


def test_own_function_with_the_same_name_is_allowed(tmp_path):
    assert findings(tmp_path, """
def scaled_dot_product_attention(q, k, v):
    return q

class Attention:
    def forward(self, q):
        return self.scaled_dot_product_attention(q) + scaled_dot_product_attention(q, q, q)
""") == {}


def test_notebooks_and_unparsable_files(tmp_path):
    notebook = {"cells": [{"cell_type": "code", "source": ["%matplotlib inline\n",
                                                            "y = torch.nn.MultiheadAttention(4, 2)\n"]}]}
    found = findings(tmp_path, json.dumps(notebook), "attention.ipynb")
    assert "attention.ipynb cell 1, line 2" in found[MODULE_LEVEL][0]
    assert findings(tmp_path, "def broken(:\n") == {}
