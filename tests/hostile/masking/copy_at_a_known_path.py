"""Opens the reference in a second checkout at the path where the course keeps it (known to a student who saw it)."""
CLASS = "1 the grader's repository"
BASE = "skeleton"
EXPECT = "zero"
CODE = r'''
try:
    with open("@COPY@/solutions/masking/masking.py") as _handle:
        exec(compile(_handle.read(), "stolen.py", "exec"), globals())
except OSError:
    pass
'''
