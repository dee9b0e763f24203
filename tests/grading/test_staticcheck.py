"""The static scan for forbidden library routines."""

import json

from autograder.grading import staticcheck
from autograder.grading.staticcheck import MODULE_LEVEL, UNCHECKED, scan

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


def test_code_past_the_parse_limit_is_not_parsed_and_fails_closed(tmp_path, monkeypatch):
    """A file the scan does not read costs every covering test its points (``UNCHECKED``), saying why: 6 MB of code
    took the runner to 1.83 GB in ``ast.parse`` (issue 41). Just under the limit, it is parsed."""
    line = "x = 1\n"
    over = findings(tmp_path, line * (staticcheck.MAX_PARSED // len(line) + 1))
    assert list(over) == [UNCHECKED] and f"more than the {staticcheck.MAX_PARSED >> 10} KB" in over[UNCHECKED][0]
    cell = {"cell_type": "code", "source": [line * (staticcheck.MAX_PARSED // len(line) // 2 + 1)]}
    assert list(findings(tmp_path, json.dumps({"cells": [cell, cell]}), "attention.ipynb")) == [UNCHECKED]
    monkeypatch.setattr(staticcheck, "MAX_PARSED", 1000)
    assert findings(tmp_path, "y = F.scaled_dot_product_attention(q, k, v)\n" * 30)[UNCHECKED]
    assert set(findings(tmp_path, "y = F.scaled_dot_product_attention(q, k, v)\n")) == {MODULE_LEVEL}


def test_a_file_the_parser_gives_up_on_fails_closed(tmp_path, monkeypatch):
    def exhausted(source):
        raise MemoryError

    monkeypatch.setattr(staticcheck.ast, "parse", exhausted)
    assert "too deeply" in findings(tmp_path, "x = 1\n")[UNCHECKED][0]
