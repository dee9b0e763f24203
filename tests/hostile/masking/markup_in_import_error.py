"""Fails to import with rich markup that would crash the summary table (``[/bold]``), an escape sequence and a formula
as its message."""
CLASS = "14 injection into what staff and students open"
BASE = "reference"
EXPECT = "zero"
PRESENT = ["cannot import"]
ABSENT = ["\x1b"]
CODE = r'''
raise ImportError("[/bold] cannot import \x1b[2J=cmd|' /C calc'!A0 [link=http://x.example]here[/link]")
'''
