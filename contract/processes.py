"""Worker processes that die with the process that started them.

A ``ProcessPoolExecutor`` worker outlives a parent killed with SIGKILL: it keeps grading and
writing run folders nobody is waiting for. :func:`worker_pool` starts workers that ask the
Linux kernel for SIGKILL when their parent dies (``prctl(PR_SET_PDEATHSIG)``, prctl(2)).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor

PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal this process gets when its parent thread exits."""


def die_with_parent(parent_pid: int) -> None:
    """Ask for SIGKILL when the parent dies (Linux); exit at once if it is already gone.

    A no-op where prctl is not available (not Linux): workers then behave as before.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


def worker_pool(max_workers: int) -> ProcessPoolExecutor:
    """A process pool whose workers die with this process (see :func:`die_with_parent`)."""
    return ProcessPoolExecutor(max_workers=max_workers, initializer=die_with_parent,
                               initargs=(os.getpid(),))
