"""Makes its worker send every float array in big-endian byte order (the review's reply that broke decoding with
something other than a protocol error, after which the test kept the points of the parts that had passed)."""
CLASS = "5 errors keep credit"
BASE = "reference"
EXPECT = "below"
CODE = r'''
import io as _io
import sys as _sys

import numpy as _np

_protocol = _sys.modules.get("autograder.protocol")
if _protocol is not None:
    def _big_endian(array):
        buffer = _io.BytesIO()
        array = _np.ascontiguousarray(array)
        if array.dtype.kind == "f":
            array = array.astype(array.dtype.newbyteorder(">"))
        _np.save(buffer, array, allow_pickle=False)
        return buffer.getvalue()

    _protocol.array_to_bytes = _big_endian
'''
