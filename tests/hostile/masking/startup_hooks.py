"""Hands in sitecustomize.py, usercustomize.py and a .pth file, which Python runs at start-up when they are on the
path: each saves the original fused attention before the traps are set."""
CLASS = "6 forbidden routines"
BASE = "reference"
EXPECT = "zero"
PRESENT = ["a file Python runs at start-up"]
FILES = {"sitecustomize.py": "import torch.nn.functional as F\nORIGINAL = F.scaled_dot_product_attention\n",
         "usercustomize.py": "import torch.nn.functional as F\nORIGINAL = F.scaled_dot_product_attention\n",
         "hook.pth": "import os; os.environ['HOOKED'] = '1'\n"}
