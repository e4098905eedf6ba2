"""The run store shared by two processes (two ComfyUI instances on one user directory): every run kept. The
store's read-modify-write held only a thread lock, so one process's write dropped the other's runs."""
import multiprocessing
import os

import pytest

from gpu_garden.memory.recorder import store


def _add_many(path, tag, n):
    s = store.RunStore(path, limit=1000)
    for i in range(n):
        s.add({"prompt_id": f"{tag}-{i}", "nodes": [], "pad": "x" * 2000})


def test_two_processes_sharing_a_user_dir_lose_no_run(tmp_path):
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs fork")
    ctx = multiprocessing.get_context("fork")
    path = str(tmp_path / "runs.jsonl")
    procs = [ctx.Process(target=_add_many, args=(path, tag, 60)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    ids = {r["prompt_id"] for r in store.RunStore(path, limit=1000).read()}
    assert ids == {f"{t}-{i}" for t in "ab" for i in range(60)}


def test_a_store_sees_another_process_s_write_of_the_same_size(tmp_path):
    """The read cache keys on the file's identity too: a replace by another process with the same size and a
    coarse mtime (FAT, SMB, some container filesystems) must not serve the old runs."""
    path = tmp_path / "runs.jsonl"
    mine = store.RunStore(path)
    mine.add({"prompt_id": "a", "nodes": []})
    st = os.stat(path)
    other = store.RunStore(path)
    other._write([{"prompt_id": "b", "nodes": []}])  # same length as "a"'s line
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same mtime, as a 1 s or 2 s clock would give
    assert [r["prompt_id"] for r in mine.read()] == ["b"]


def test_a_reader_never_waits_for_a_slow_write(tmp_path, monkeypatch):
    """The Footprint Estimate reads the store on ComfyUI's worker ("measured here"): a write stuck in fsync on a
    slow user folder (the recorder's writer thread) must not hold it up. The write used to hold the cache lock
    for the whole read-parse-write-fsync."""
    import threading
    import time

    path = tmp_path / "runs.jsonl"
    s = store.RunStore(path)
    s.add({"prompt_id": "a", "nodes": []})
    real_fsync, entered = os.fsync, threading.Event()

    def slow_fsync(fd):
        entered.set()
        time.sleep(1.5)
        real_fsync(fd)
    monkeypatch.setattr(store.os, "fsync", slow_fsync)
    writer = threading.Thread(target=s.add, args=({"prompt_id": "b", "nodes": []},))
    writer.start()
    assert entered.wait(10)
    t0 = time.monotonic()
    assert [r["prompt_id"] for r in s.read()] == ["a"]  # the file as it is until the replace
    assert time.monotonic() - t0 < 0.5
    writer.join(10)
    assert [r["prompt_id"] for r in s.read()] == ["b", "a"]
