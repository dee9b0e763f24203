"""Is handed in as a folder whose name carries escape sequences (a window title, a clipboard write, a hyperlink, a
screen clear, a C1 CSI), which the batch shows as the submission's name: on the progress bar, in the log, the summary
and the gradebook; the progress bar wrote it raw to the instructor's terminal (issue 41). Trusted code alone reads the
name, the same in either mode."""
CLASS = "14 injection into what staff and students open"
BASE = "reference"
EXPECT = "full"
SUBMITTED_AS = ("@LABEL@\x1b]0;pwned-title\x07\x1b]52;c;cm0gLXJmIH4K\x07\x1b]8;;file:evil\x1b\\link\x1b]8;;\x1b\\"
                "\x1b[2J\u009b1m")
MODES = ("namespaces",)
MODES_WHY = "only the trusted side reads a submission's name, and it does the same in either mode"
