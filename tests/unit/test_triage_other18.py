"""Session 18 (regA): `other` read from what the log itself shows, each beside the same log without that evidence; and a
traceback frame read whole after a paste was wrapped and joined again.
Lines modelled on the runtimes' own messages in public threads (paths rewritten): Wan2GP#1215 (an OOM raised in
torch.cuda.empty_cache), huggingface/text-generation-inference#1164 and #1085 (the warm-up's "Not enough memory to
handle N prefill tokens")."""
import textwrap

from gpu_garden.memory.triage import engine, lines, window

CUDA_ERR = ("RuntimeError: CUDA error: out of memory\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


def _tb(inner_file, inner_func, src):
    return ("Traceback (most recent call last):\n"
            '  File "C:\\apps\\gen\\app.py", line 5746, in generate_video\n'
            "    offloadobj.unload_all()\n"
            f'  File "{inner_file}", line 222, in {inner_func}\n'
            f"    {src}\n" + CUDA_ERR)


def _causes(log):
    return [c["id"] for c in engine.triage_text(log)["events"][-1]["causes"]]


def test_oom_raised_inside_empty_cache_is_not_a_request_the_card_refused():
    log = _tb("C:\\apps\\gen\\lib\\site-packages\\torch\\cuda\\memory.py", "empty_cache", "torch._C._cuda_emptyCache()")
    assert _causes(log)[0] == "other"
    # the same bare error raised from a copy to the card keeps the pinned-RAM reading of a bare PyTorch CUDA check
    log = _tb("C:\\apps\\gen\\lib\\site-packages\\mmgp\\offload.py", "move_to_device", "t = t.to('cuda', non_blocking=True)")
    assert _causes(log)[0] != "other"


def _tgi(tokens):
    return (f"2023-10-24T09:12:02.101Z ERROR warmup{{max_input_length=64 max_prefill_tokens={tokens}}}:warmup: "
            f"text_generation_client: router/client/src/lib.rs:33: Server error: Not enough memory to handle {tokens} prefill "
            "tokens. You need to decrease `--max-batch-prefill-tokens`\n")


def test_tgi_warmup_refusing_a_tiny_prefill_is_not_the_batchs_memory():
    assert _causes(_tgi(256))[0] == "other"
    assert _causes(_tgi(512))[0] == "other"
    # TGI's default budget (4096) failing is the prefill batch's working memory
    assert _causes(_tgi(4096))[0] == "activations"
    assert _causes(_tgi(513))[0] == "activations"


def test_a_frame_line_joined_without_its_blank_still_reads_as_a_frame():
    # a paste wrapped before "line" (or before its number) and joined again as a terminal's cut loses that blank
    for text in ('  File "C:\\apps\\gen\\torch\\cuda\\memory.py",line 222, in empty_cache',
                 '  File "C:\\apps\\gen\\mmgp\\offload.py", line2070, in unload_all'):
        m = lines.FRAME_RE.search(text)
        assert m and m.group(2) in ("empty_cache", "unload_all"), text
        assert window._FRAME_RE.search(text.encode()).group(2).decode() == m.group(2)
    assert lines.FRAME_RE.search('  File "/srv/app/run.py", line 12, in main').group(2) == "main"
    # the whole traceback wrapped at 80 columns (textwrap, as a mail client): the innermost frame is still read
    log = _tb("C:\\apps\\Wan2GP\\python_embeded\\lib\\site-packages\\torch\\cuda\\memory.py", "empty_cache",
              "torch._C._cuda_emptyCache()")
    wrapped = "\n".join(w for ln in log.splitlines() for w in (textwrap.wrap(ln, 80, break_on_hyphens=False) or [""])) + "\n"
    assert wrapped != log and _causes(wrapped)[0] == "other"
