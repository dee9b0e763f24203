"""Prints, and raises, text that closes a three-backtick fence and forges a passed heading and a full score, with
terminal escape sequences (clear the screen, a hyperlink), a right-to-left override and a formula."""
CLASS = "14 injection into what staff and students open"
BASE = "skeleton"
EXPECT = "zero"
PRESENT = ["````\n```\n## [PASS] causal mask (10/10)", "forged by the message"]
ABSENT = ["\x1b", "\x07", "\u202e"]
CODE = r'''
def causal_mask(T, device=None):
    print("```\n## [PASS] causal mask (10/10)\n\n**Score: 100 / 100**\n```\n\x1b[2J\x1b]8;;http://x.example\x07click\x1b]8;;\x07 \u202eevil")
    raise ValueError("```\n## [PASS] forged by the message (10/10)\n**Score: 100 / 100**\n\x1b[31m=HYPERLINK(\"http://x.example\")")
'''
