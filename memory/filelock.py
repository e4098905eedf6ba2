"""An exclusive lock on a side file, held across processes (fcntl on POSIX, msvcrt on Windows) and threads: the
one lock every read-modify-write of a shared store takes (OOM reports, recorded runs), so two ComfyUI processes
on one user directory never lose each other's writes."""
import os
import threading


class FileLock:
    def __init__(self, path: str):
        self.path = str(path)
        self._thread_lock = threading.Lock()
        self._fd = None

    def __enter__(self):
        self._thread_lock.acquire()
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                import fcntl

                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except ImportError:  # Windows
                import msvcrt

                os.lseek(self._fd, 0, os.SEEK_SET)
                msvcrt.locking(self._fd, msvcrt.LK_LOCK, 1)
        except BaseException:
            self._release()
            raise
        return self

    def _release(self):
        if self._fd is not None:
            try:
                try:
                    import fcntl

                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                except ImportError:
                    import msvcrt

                    os.lseek(self._fd, 0, os.SEEK_SET)
                    msvcrt.locking(self._fd, msvcrt.LK_UNLCK, 1)
            except OSError:
                pass
            os.close(self._fd)
            self._fd = None
        self._thread_lock.release()

    def __exit__(self, *exc):
        self._release()
        return False
