"""Answers one call with a valid frame of 1 GiB (a tensor of zeros, streamed without being held), to take the
grader's process past its memory: a reply is bounded by what the check can need, refused unread."""
CLASS = "13 memory of trusted processes"
BASE = "reference"
EXPECT = "below"
PRESENT = ["MB, more than the 64 MB this check can need"]
CODE = r'''
import io as _io
import json as _json
import os as _os
import struct as _struct
import sys as _sys

import numpy as _np

_protocol = _sys.modules.get("autograder.protocol")
_causal_mask = causal_mask


def _huge(fd, header, blobs=()):
    npy = _io.BytesIO()
    _np.lib.format.write_array_header_1_0(npy, {"descr": "<f4", "fortran_order": False, "shape": (1 << 28,)})
    tensor = {"__tensor__": 0, "dtype": "float32", "device": "cpu", "requires_grad": False, "cls": "Tensor"}
    body = _json.dumps({"ok": True, "value": tensor, "blobs": [len(npy.getvalue()) + (1 << 30)]}).encode()
    _os.write(fd, _struct.pack(">I", len(body)) + body + npy.getvalue())
    zeros = bytes(1 << 20)
    for _ in range(1 << 10):
        _os.write(fd, zeros)


def causal_mask(T, device=None):
    if _protocol is not None and T == 5:
        _real = _protocol.write_frame

        def _once(fd, header, blobs=()):
            _protocol.write_frame = _real
            _huge(fd, header, blobs)

        _protocol.write_frame = _once
    return _causal_mask(T, device)
'''
