"""Leaves trees that clean-up must walk at import, in its working folder, its temporary folder and /dev/shm: 1500
entries in one folder, names that are not UTF-8, hold a newline or are 255 bytes long, links to / and to the
checkout, a FIFO, read-only files in a folder of mode 0; and answers one call with a reply nested 200,000 deep."""
CLASS = "12 trees the grader walks"
BASE = "reference"
EXPECT = "below"
ABSENT = ["The grader failed", "RecursionError"]
CODE = r'''
import json as _json
import os as _os
import struct as _struct
import sys as _sys
import tempfile as _tempfile

_protocol = _sys.modules.get("autograder.protocol")
_padding_mask = padding_mask


def _odd(folder):
    try:
        top = _os.path.join(folder, f"hostile-odd-{_os.getpid()}")
        _os.mkdir(top)
        wide = _os.path.join(top, "wide")
        _os.mkdir(wide)
        for number in range(1500):
            open(_os.path.join(wide, str(number)), "w").close()
        for name in (b"\xff\xfe-not-utf8", b"new\nline", b"x" * 255):
            open(_os.path.join(top.encode(), name), "w").close()
        _os.symlink("/", _os.path.join(top, "root-link"))
        _os.symlink("@REPO@", _os.path.join(top, "checkout-link"))
        _os.mkfifo(_os.path.join(top, "fifo"))
        closed = _os.path.join(top, "closed")
        _os.mkdir(closed)
        open(_os.path.join(closed, "file"), "w").close()
        _os.chmod(_os.path.join(closed, "file"), 0o400)
        _os.chmod(closed, 0)
    except OSError:
        pass


for _folder in (".", _tempfile.gettempdir(), "/dev/shm"):
    _odd(_folder)


def _deep(fd, header, blobs=()):
    body = b'{"ok": true, "value": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    _os.write(fd, _struct.pack(">I", len(body)) + body)


def padding_mask(lengths, T=None):
    if _protocol is not None:
        _real = _protocol.write_frame

        def _once(fd, header, blobs=()):
            _protocol.write_frame = _real
            _deep(fd, header, blobs)

        _protocol.write_frame = _once
    return _padding_mask(lengths, T) if T is not None else _padding_mask(lengths)
'''
