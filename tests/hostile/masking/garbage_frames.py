"""Writes a corrupt frame on the reply pipe (a header that announces gigabytes, then junk) instead of the answer to
one call, to break the grader's channel."""
CLASS = "5 errors keep credit"
BASE = "reference"
EXPECT = "below"
CODE = r'''
import os as _os
import struct as _struct
import sys as _sys

_protocol = _sys.modules.get("autograder.protocol")
_masked_softmax = masked_softmax


def masked_softmax(scores, mask=None):
    if _protocol is not None:
        _real = _protocol.write_frame

        def _corrupt(fd, header, blobs=()):
            _os.write(fd, _struct.pack(">I", 1 << 30) + b"{junk")
            _protocol.write_frame = _real

        _protocol.write_frame = _corrupt
    return _masked_softmax(scores, mask)
'''
