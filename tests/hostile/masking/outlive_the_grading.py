"""Starts a daemon that escapes everything a process can escape (double fork, a new session, no parent-death
signal, SIGTERM and SIGHUP ignored) and keeps writing to /tmp for ten minutes."""
CLASS = "7 stopping and crashing"
BASE = "reference"
EXPECT = "full"
CODE = r'''
import ctypes as _ctypes
import os as _os
import signal as _signal
import time as _time


def _daemon():
    if _os.fork() != 0:
        return
    _os.setsid()
    if _os.fork() != 0:
        _os._exit(0)
    _ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG 0
    for number in (_signal.SIGTERM, _signal.SIGHUP, _signal.SIGINT):
        _signal.signal(number, _signal.SIG_IGN)
    for _ in range(6000):
        try:
            with open(f"/tmp/hostile-daemon-{_os.getpid()}", "w") as handle:
                handle.write("@MARKER@")
        except OSError:
            pass
        _time.sleep(0.1)
    _os._exit(0)


_daemon()
'''
