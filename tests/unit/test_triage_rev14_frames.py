"""rev14 S1 and S2 (session 46, fix16), written by hand from review rev14's hand checks (/tmp/rev14/c1.py, c2.py).

S1: a traceback frame's source line (the indented line Python prints under '  File "...", line N, in fn') is code, never the
failure's error line, whatever it names: an old torch (< 2.5) running newer code prints "except torch.OutOfMemoryError:" or
"from torch.cuda import empty_cache, OutOfMemoryError" as a frame's source, then AttributeError / ImportError; that log read as
an OOM (torch.oom_type, cause other). The scanner now skips such a line (chain_links.frame_source, on the line before it).
S2: under a prefix the chain look-back does not set aside (kubectl logs --prefix's "[pod/NAME/CONTAINER] "), the earlier
traceback's last frame source line was read into its closing block; the prefix is now learnt from the separator line."""
from support.regex_time import assert_each_fast
from support.triage_event import top
from test_triage_fix11 import OWN
from test_triage_rev11 import DURING, IMPORT_FAIL, TP1
from test_triage_rev12 import WRAP_DURING, _attn
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.chain_links import frame_source, line_before

HEAD = 'Traceback (most recent call last):\n  File "/app/train.py", line 3, in <module>\n'
ATTR = "AttributeError: module 'torch' has no attribute 'OutOfMemoryError'\n"
IMPORT = "ImportError: cannot import name 'OutOfMemoryError' from 'torch.cuda' (/x/torch/cuda/__init__.py)\n"


def _each(prefix, text):
    return "".join(prefix + line + "\n" for line in text.splitlines())


def test_old_torch_tracebacks_naming_the_oom_type_in_source_are_no_oom():
    for src, exc in (("    except torch.OutOfMemoryError:\n", ATTR),
                     ("    from torch.cuda import empty_cache, OutOfMemoryError\n", IMPORT),
                     ("    from torch.cuda import (OutOfMemoryError)\n", IMPORT),
                     ("    except OutOfMemoryError:\n", ATTR)):
        log = HEAD + src + exc
        for text in (log, log.replace("\n", "\r\n"), _each("app-1  | ", log), _each("[pod/train-0/train] ", log),
                     _each("2026-01-01T00:00:00.123456789Z ", log)):
            assert not engine.triage_text(text)["found"], text      # was found, cause other (torch.oom_type)


def test_real_oom_under_a_frame_that_raises_it_is_still_read():
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.00 GiB is free.\n"
    for src in ("    raise torch.cuda.OutOfMemoryError(msg)\n", "    except torch.OutOfMemoryError:\n", ""):
        for text in (HEAD + src + oom, _each("[rank0]: ", HEAD + src + oom)):
            r = engine.triage_text(text)
            assert r["found"] and r["events"][r["headline"]]["numbers"].get("requested") == 2 << 30, text
    # a frame with no source line (<string>), its exception at the traceback's own depth; and inside an exception group
    assert engine.triage_text('Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n' + oom)["found"]
    group = ("  | Traceback (most recent call last):\n  |   File \"<string>\", line 1, in <module>\n  | " + oom)
    assert engine.triage_text(group)["found"]


def test_frame_source_reads_indentation_under_the_frames_prefix():
    frame = b'  File "/app/x.py", line 3, in f'
    assert frame_source(frame, b"    except torch.OutOfMemoryError:")
    assert frame_source(b"[rank0]: " + frame, b"[rank0]:     raise OutOfMemoryError(msg)")
    assert frame_source(b"2026-01-01T00:00:00.1Z " + frame, b"2026-01-01T00:00:00.2Z     x = f()")  # stamps differ
    assert not frame_source(frame, b"torch.OutOfMemoryError: CUDA out of memory.")          # the exception line
    assert not frame_source(b"[rank1]: " + frame, b"[rank0]:     except OutOfMemoryError:")  # another rank's line
    assert not frame_source(b"  |   File \"<string>\", line 1, in <module>", b"  | torch.OutOfMemoryError")
    assert not frame_source(b'File "/app/x.py", line 3, in f', b"    x")       # a frame with no indentation: no rule
    assert not frame_source(b"  some text", b"    except OutOfMemoryError:")
    # a paste's undo joined the source line and the exception line after it (the prefix again): the exception is read
    p = b"(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470] "
    assert not frame_source(p + frame, p + b"    super().capture_end() " + p + b"RuntimeError: CUDA error: out of memory")
    assert frame_source(p + frame, p + b"    super().capture_end()")
    assert line_before(b"a\nb\nc\n", 4, b"") == b"b" and line_before(b"c\n", 0, b"x\ny\n") == b"y"
    assert line_before(b"x" * 9000 + b"\nc\n", 9001, b"") == b""       # past 8 KiB: no frame read


def test_closing_block_under_kubectl_prefix_learns_it_from_the_separator():
    imp = IMPORT_FAIL.replace("    import flashinfer\n", "    except torch.OutOfMemoryError:\n").replace(
        "ImportError: cannot import name 'BatchPrefillWithPagedKVCacheWrapper' from 'flashinfer'",
        "AttributeError: module 'torch' has no attribute 'OutOfMemoryError'")
    assert imp != IMPORT_FAIL
    for p in ("", "[pod/sglang-0/sglang] "):
        cause, conf, ev = top(_each(p, TP1 + imp + DURING))
        assert not _attn(ev) and cause != "other", (p, conf)        # was other, attention backend, under kubectl's prefix
        cause, conf, ev = top(_each(p, TP1 + OWN + WRAP_DURING))
        assert cause == "other" and _attn(ev), (p, conf)            # the backend's own OOM still read


def test_frame_reads_linear():
    n = 1 << 20
    frame = b'  File "' + b'"' * 4000 + b'", line 1'
    texts = [(b"  File \"" * (n // 8), b" " * n), (frame, b" " * n), (b" " * n + b'File "x", line 1', b" " * n)]
    assert_each_fast([(lambda t: frame_source(*t), texts), (lambda b: line_before(b, len(b) - 1, b""), [b"x" * n + b"\n"])])
    log = (HEAD + "    except torch.OutOfMemoryError:\n") * (n // 80) + ATTR
    assert_each_fast([(engine.triage_text, [log, _each("[pod/a/b] ", log)])], limit=10.0)


def test_did_you_mean_names_no_oom():
    # rev14 D2: the name Python suggests after an AttributeError was read as the OOM type (recognise, so is_oom_error too)
    from gpu_garden.memory.triage import parse as P
    line = "AttributeError: module 'torch' has no attribute 'OutOfMemoryError'. Did you mean: 'OutOfMemoryError'?"
    assert P.recognise(line) is None and not P.is_oom_error("AttributeError", line.split(": ", 1)[1])     # was torch.oom_type
    assert P.recognise("torch.OutOfMemoryError: CUDA out of memory. Did you mean: 'x'?")
    assert_each_fast([(P.RX.TORCH_OOM_TYPE.search, ["Did you mean: '" * (1 << 16), "mean: 'OutOfMemoryError" * (1 << 15)])])


def test_ollama_compute_record_ends_at_any_space():
    # rev14 D4: the record cut to its id ended only at a space or the text's end; a kept \r (or a tab) lost it
    from gpu_garden.memory.triage.fact_patterns import FACTS
    rx = dict(FACTS)["ollama_compute"]
    for text in ("inference compute id=cpu\r", "inference compute id=cpu\tlibrary=cpu", "inference compute id=cpu"):
        m = rx.search(text)
        assert m and m.group(1) == "cpu", repr(text)                       # \r and \t: no match before
    assert rx.search('msg="inference compute" id=0 library=cpu variant=""').group(1, 2) == ("0", "cpu")
    assert_each_fast([(rx.search, ["inference compute id=" + "x" * (1 << 20), "inference compute id=x\r" * (1 << 15)])])


OOM15 = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.00 GiB is free.\n"


def test_rev15_exception_at_the_frames_own_depth_is_read():
    # rev15 B1 (fix17): a line at its frame's own depth under the prefix is the exception, not the frame's source line
    # (Python prints a source line 2 deeper); `>= deep` hid these four (deep counts the prefix's separator space too)
    for text in ("INFO: Traceback (most recent call last):\nINFO: File \"<string>\", line 1, in f\nINFO: " + OOM15,
                 'WARNING   File "x", line 1, in f\nWARNING   ' + OOM15,
                 'Traceback (most recent call last):\n\tFile "/a.py", line 1, in f\n\t' + OOM15,
                 'Current thread 0x1 (most recent call first):\n  File "/a.py", line 3 in f\n  ' + OOM15):
        r = engine.triage_text(text)
        assert r["found"] and r["events"][r["headline"]]["numbers"].get("requested") == 2 << 30, text
    assert not frame_source(b'INFO: File "<string>", line 1, in f', b"INFO: torch.OutOfMemoryError: x")
    assert not frame_source(b'\tFile "/a.py", line 1, in f', b"\ttorch.OutOfMemoryError")
    assert frame_source(b'INFO: File "/a.py", line 1, in f', b"INFO:   x = g()")           # 2 deeper: source


def test_rev15_joined_exception_after_source_is_read():
    # rev15 S1 (fix17): an unprefixed log's source line with its exception joined on (a paste's undo) hid the OOM
    h = 'Traceback (most recent call last):\n  File "/a.py", line 1, in f\n'
    r = engine.triage_text(h + "    y = model(x) " + OOM15)
    assert r["found"] and r["events"][r["headline"]]["numbers"].get("requested") == 2 << 30
    assert engine.triage_text(h + "    super().capture_end() RuntimeError: CUDA error: out of memory\n")["found"]
    frame = b'  File "/app/x.py", line 3, in f'
    assert not frame_source(frame, b"    y = model(x) torch.OutOfMemoryError: CUDA out of memory.")
    for src in (b"    except torch.OutOfMemoryError:", b"    except torch.OutOfMemoryError: pass",
                b"    from torch.cuda import empty_cache, OutOfMemoryError", b"    raise torch.cuda.OutOfMemoryError(msg)"):
        assert frame_source(frame, src), src                                 # still source lines
    from gpu_garden.memory.triage.chain_links import _JOINED_EXC
    n = 1 << 20
    assert_each_fast([(_JOINED_EXC.search, [b"a " * (n // 2), b"a" + b" " * n, b"a " + b"x" * n, b"a b" + b"Error" * (n // 5)]),
                      (lambda t: frame_source(frame, t), [b"    " + b"a \t" * (n // 3), b"    x " + b"y." * (n // 2)])])


def test_joined_bare_or_wrapping_exception_after_source_is_read():
    # a wrapped paste's undo joined a bare "MemoryError" (batch 557's form) or Ray's "RayTaskError(OutOfMemoryError): ..."
    # (batch 248's) onto the frame's source line; each hid the failure (found False) until _JOINED_EXC took both forms
    frame = b'  File "/app/x.py", line 3, in f'
    for joined in (b"    permutations = list(itertools.permutations(phrases)) MemoryError",
                   b"    raise value.as_instanceof_cause() ray.exceptions.RayTaskError(OutOfMemoryError): ray::main_task() (pid=1)"):
        assert not frame_source(frame, joined), joined
    for src in (b"    raise MemoryError", b"    except MemoryError:", b"    except (ValueError, MemoryError):",
                b"    ok = isinstance(e, MemoryError)", b"    from torch.cuda import OutOfMemoryError",
                b"    from torch.cuda import empty_cache, OutOfMemoryError"):
        assert frame_source(frame, src), src                                 # still source lines
    h = 'Traceback (most recent call last):\n  File "/a.py", line 1, in f\n'
    assert engine.triage_text(h + "    y = list(itertools.permutations(p)) MemoryError\n")["found"]
    from gpu_garden.memory.triage.chain_links import _JOINED_EXC
    n = 1 << 20
    assert_each_fast([(_JOINED_EXC.search, [b"a " + b"x" * n, b"a bError(" + b"y" * n, b"a bError" + b" " * n + b"z"])])
