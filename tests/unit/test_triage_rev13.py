"""rev13 (session 46, fix14): facts' chain-link look-back (chain_links.chained_how) read under every prefix it sets aside.

B1: a blank line that still carries its prefix (journald's "... sglang[123]: ", docker -t's stamp, compose -t's name and
stamp) was stripped before the prefix match, lost the prefix's trailing space and was kept as a line, so the line read as
the earlier traceback's closing line was a bare prefix; rev12 B1's positive case (the backend's own OOM wrapped by a
"During handling" chain) lost its attention-backend evidence again (cause activations)."""
from support.triage_event import top
from test_triage_fix11 import OWN, SG_OOM
from test_triage_rev11 import DURING, IMPORT_FAIL, TP1
from test_triage_rev12 import WRAP_DURING, _attn


def _each(prefix, text):
    return "".join(prefix + line + "\n" for line in text.splitlines())


def _attention_oom(text):
    cause, conf, ev = top(text)
    assert ev["runtime"] == "sglang"
    assert cause == "other" and _attn(ev), conf


def _refused(text):
    cause, conf, ev = top(text)
    assert not _attn(ev) and cause != "other", conf


def test_wrapped_attention_oom_under_journald():
    p = "Dec 05 18:02:44 host sglang[123]: "
    _attention_oom(_each(p, TP1 + OWN + WRAP_DURING))     # was activations
    _refused(_each(p, TP1 + IMPORT_FAIL + DURING))         # rev11's false positive: refused for its closing line now


def test_wrapped_attention_oom_under_compose_t():
    # compose -t: the service's name, then docker's stamp (paste.undo strips neither: the lines open with the name)
    p = "sglang-1  | 2026-01-01T00:00:00.123456789Z "
    _attention_oom(_each(p, TP1 + OWN + WRAP_DURING))     # was activations
    _refused(_each(p, TP1 + IMPORT_FAIL + DURING))


def _past_one_chunk(p, text=TP1 + OWN + WRAP_DURING):
    # docker logs -t over more than the first chunk (1 MiB): paste.undo leaves the stamps, the look-back sets them aside
    filler = "".join(f"{p}[2026-01-01 00:00:00] INFO: step {i} done, nothing to see here at all\n" for i in range(15000))
    assert len(filler) > 1 << 20
    return filler + _each(p, text)


def test_wrapped_attention_oom_under_docker_t_past_one_chunk():
    _attention_oom(_past_one_chunk("2026-01-01T00:00:00.123456789Z "))                    # was activations


def test_docker_t_stamp_with_offset():
    # D2: the stamp is paste's (one pattern), an RFC 3339 offset included (a CI runner's local time). Left on, it hid the
    # frames' indentation and TP1's rank tag: rev11's false positive read TP1's OOM line as the ImportError block's
    p = "2026-01-01T01:00:00.123456+01:00 "
    _attention_oom(_past_one_chunk(p))
    _refused(_past_one_chunk(p, TP1 + IMPORT_FAIL + DURING))                                  # was other


def test_rev13_line_readers_linear():
    from support.regex_time import assert_each_fast
    from gpu_garden.memory.triage import chain_links as C
    n = 1 << 20
    texts = [b"2026-01-01T00:00:00." + b"0" * n, b"2026-01-01T00:00:00+" + b"0" * n, b"a" * n, b"a." * (n // 2),
             b"sglang-1 " + b" " * n, b"a" * 64 + b" " * n + b"|"]
    assert_each_fast([(C._LINE_PREFIX.match, texts), (C._EXC_TYPE.match, texts)])


def test_closing_line_read_by_triage_recogniser():
    # S1: the earlier traceback's closing line is an OOM line as parse.recognise reads it, never as a second pattern.
    # FlashInfer's workspace failing as cudaErrorMemoryAllocation, wrapped as in rev12 B1: the backend's own OOM
    flashinfer = "RuntimeError: FlashInfer workspace: cudaErrorMemoryAllocation\n"
    _attention_oom(TP1 + OWN.replace(SG_OOM, flashinfer) + WRAP_DURING)              # was activations


def test_closing_import_error_naming_oom_type_refused():
    # S1: an old torch's ImportError naming OutOfMemoryError (recognise takes the name) in rev11's false positive: refused
    old_torch = "ImportError: cannot import name 'OutOfMemoryError' from 'torch.cuda'\n"
    _refused(TP1 + IMPORT_FAIL.replace(IMPORT_FAIL.splitlines()[-1] + "\n", old_torch) + DURING)   # was other


def test_closing_exception_block_of_several_lines():
    # S2: c10's "CUDA error: out of memory" is followed by its three hint lines: the earlier traceback's closing block is read
    # up to its last frame line, not only the line above the separator
    c10 = ("RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, "
           "so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
           "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n\n")
    _attention_oom(TP1 + OWN.replace(SG_OOM, c10) + WRAP_DURING)                     # was activations
    _attention_oom(_each("Dec 05 18:02:44 host sglang[123]: ", TP1 + OWN.replace(SG_OOM, c10) + WRAP_DURING))
    # the block ends at the last frame's source line: a frame line above it that names the OOM type is no part of it
    import_fail = IMPORT_FAIL.replace("    self.attn_backend = FlashInferAttnBackend(self)\n",
                                      "    self.attn_backend = retry_on(torch.cuda.OutOfMemoryError, FlashInferAttnBackend, self)\n")
    assert import_fail != IMPORT_FAIL
    _refused(TP1 + import_fail + DURING)


def test_closing_block_stops_at_a_frame_under_an_unknown_prefix():
    # S2 bounded: under a prefix the look-back does not set aside (kubectl logs --prefix), the frames' indentation is hidden;
    # the block still ends at the earlier traceback's "File" line, so TP1's OOM line above is not read as its closing line
    p = "[pod/sglang-0/sglang] "
    _refused(_each(p, TP1 + IMPORT_FAIL + DURING))              # other with the block read past the frame line
    _attention_oom(_each(p, TP1 + OWN + WRAP_DURING))


def test_old_torch_import_of_oom_type_is_no_oom():
    # S1's wider form: parse.recognise (and so is_oom_error) took any line naming OutOfMemoryError, an old torch's failed import
    # of the type included (torch < 2.5 has no torch.OutOfMemoryError, torch < 1.13 no torch.cuda.OutOfMemoryError)
    from gpu_garden.memory.triage import engine, parse as P
    lines = ["ImportError: cannot import name 'OutOfMemoryError' from 'torch.cuda'",
             "AttributeError: module 'torch' has no attribute 'OutOfMemoryError'", "from torch.cuda import OutOfMemoryError"]
    assert [P.recognise(line) for line in lines] == [None] * 3                          # was torch.oom_type each
    assert not P.is_oom_error("ImportError", lines[0].split(": ", 1)[1])                 # was True
    log = ('Traceback (most recent call last):\n  File "/app/train.py", line 3, in <module>\n    ' + lines[2] + "\n" + lines[0]
           + " (/usr/lib/python3/dist-packages/torch/cuda/__init__.py)\n")
    assert not engine.triage_text(log)["found"]                                         # was other, torch.oom_type
    # (rev14 S1) the type itself still read; no longer "except OutOfMemoryError:", a frame's source line (code, not an error
    # line: the scanner skips it under its frame, test_triage_rev14_frames), pinned here as an OOM by mistake
    for line in ("torch.OutOfMemoryError: CUDA out of memory.", "torch.cuda.OutOfMemoryError", "[rank0]: torch.OutOfMemoryError"):
        assert P.recognise(line), line
    from support.regex_time import assert_each_fast
    n = 1 << 20
    texts = ["import name '" * (n // 13), "import " * (n // 7), "OutOfMemoryError" * (n // 16), "x" * n]
    assert_each_fast([(P.RX.TORCH_OOM_TYPE.search, texts)])
