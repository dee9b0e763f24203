"""What reaches the instructor's terminal while a batch is graded: ``autograder grade`` run in a pseudo-terminal, as an
instructor runs it, every byte the terminal received read back. Submissions whose zip and folder names carry escape
sequences (a window title, a clipboard write, a hyperlink, a screen clear, C1 controls) are graded; none of their
sequences may arrive, only the program's own (the progress bar's and the summary table's cursor moves and colours).
The progress bar showed each submission's name raw (issue 41)."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
import zipfile

import pytest
from support.submissions import MASKING, REPO

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the pseudo-terminal test reads a Linux pty")

# What the names carry, each a sequence a terminal obeys: OSC 0 (the window's title), OSC 52 (write the clipboard),
# OSC 8 (a hyperlink), CSI (clear the screen, move the cursor, report its position: the terminal types the answer),
# and the C1 forms of CSI and OSC (one character each, which some terminals read as the two-byte forms).
SEQUENCES = {"title": "\x1b]0;pwned-title\x07", "clipboard": "\x1b]52;c;cm0gLXJmIH4K\x07",
             "hyperlink": "\x1b]8;;file:evil\x1b\\link\x1b]8;;\x1b\\", "clear": "\x1b[2J\x1b[1;1H",
             "report": "\x1b[6n", "c1-csi": "\u009b2J", "c1-osc": "\u009d0;c1-title\u009c"}
ZIPPED = "alice" + SEQUENCES["title"] + SEQUENCES["clipboard"] + SEQUENCES["c1-osc"]
FOLDER = "bob" + SEQUENCES["hyperlink"] + SEQUENCES["clear"] + SEQUENCES["report"] + SEQUENCES["c1-csi"]
# The program's own: CSI of colours (m), cursor up (A), erasing a line (K) and showing or hiding the cursor (h, l)
OWN = re.compile(rb"\x1b\[[0-9;?]*[mAKhl]")
DEADLINE_SECONDS = 600


def _grade_in_a_terminal(paths: list, out) -> bytes:
    """Run ``autograder grade`` on ``paths`` with a pseudo-terminal (200 columns) as its stdin, stdout and stderr;
    every byte the terminal received, until the command and everything it started closed it."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    command = [sys.executable, "-m", "autograder.cli", "grade", *map(str, paths), "--out", str(out), "--jobs", "2",
               "--public-only", "--skip-tag", "runtime"]
    process = subprocess.Popen(command, stdin=follower, stdout=follower, stderr=follower, cwd=REPO,
                               env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"},
                               start_new_session=True)
    os.close(follower)
    received = bytearray()
    deadline = time.monotonic() + DEADLINE_SECONDS
    try:
        while select.select([leader], [], [], max(0.0, deadline - time.monotonic()))[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: every process holding the terminal has closed it
                break
            if not chunk:
                break
            received += chunk
    finally:
        os.close(leader)
        process.kill()
        process.wait()
    return bytes(received)


def test_a_batch_graded_in_a_terminal_shows_no_sequence_of_a_submission(tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    skeleton = (MASKING.skeleton_dir / "masking.py").read_text()
    zipped = submissions / f"{ZIPPED}.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("masking.py", skeleton)
    folder = submissions / FOLDER
    folder.mkdir()
    (folder / "masking.py").write_text(skeleton)
    received = _grade_in_a_terminal([zipped, folder], tmp_path / "out")
    assert (tmp_path / "out" / "gradebook.csv").is_file(), received.decode(errors="replace")[-3000:]
    assert b"alice" in received and b"bob" in received, "the names were not shown: the test would show nothing"
    arrived = [name for name, sequence in SEQUENCES.items() if sequence.encode() in received]
    assert not arrived, f"escape sequences of the submissions reached the terminal: {arrived}"
    foreign = OWN.sub(b"", received).partition(b"\x1b")[2]
    assert not foreign, f"an escape sequence not the program's own: ESC {foreign[:40]!r}"
    assert not re.search("[\u0080-\u009f]", received.decode(errors="replace")), "a C1 control reached the terminal"
