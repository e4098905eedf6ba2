"""Task dev66 (issue 14): the numbers a failure's own lines print, read where a quote or a tool's format kept them. Inputs
written by hand (figures invented); none taken from a corpus file.

- PyTorch's exception type followed by its message's sentences, "CUDA out of memory." cut between them
  (torch_sentences: "torch.OutOfMemoryError: GPU 0 has total capacity of T of which F is free. ...");
- PyTorch <= 2.0's bracket cut right after the semicolon that follows its allocated figure (error_patterns.TORCH_BARE);
- vLLM's max-seq-len check cut after "available KV cache memory": the length and the need it kept (servers._vllm_v1);
- nvidia-smi's one card row beside the failure: its used column, as its total already was (engine, facts "smi_used");
- TensorFlow 1.x's device line "totalMemory: T freeMemory: F" (gpu_device.cc, both on one line), and the stream
  executor's row that compares the request with that free figure printed with two decimals (rules.py)."""
from support.triage_event import last_event, read

GiB, MiB = 1 << 30, 1 << 20


def _n(text):
    return last_event(text)[1]["numbers"]


def test_the_exception_type_then_the_capacity_sentence():
    # fails on the old code: the line was read as torch.oom_type with no figure at all
    text = ("Loading shards: 100%|##########| 9/9\n"
            "torch.OutOfMemoryError: GPU 0 has total capacity of 39.39 GiB of which 2.50 MiB is free. "
            "Process 4411 has 36.12 GiB memory in use\n")
    n = _n(text)
    assert n["total"] == round(39.39 * GiB) and n["free"] == round(2.50 * MiB)
    assert read(text)[1] == "torch.cuda"


def test_the_exception_type_an_ellipsis_then_the_request():
    # fails on the old code: "torch.OutOfMemoryError ... Tried to allocate N" (no colon, the head elided) kept no request
    n = _n("step 12 | loss 2.31\ntorch.OutOfMemoryError ... Tried to allocate 12.50 GiB\n")
    assert n["requested"] == round(12.5 * GiB)


def test_a_tagged_type_with_an_ellipsis_reads_the_capacity_sentence_and_a_bare_type_reads_nothing():
    # fails on the old code (first half): a tool's tag before the type, then "... GPU 0 has a total capacity of ..."
    n = _n("vocoder_load  OutOfMemoryError: ... GPU 0 has a total capacity of 7.63 GiB of which 11.06 MiB is free.\n")
    assert (n["total"], n["free"]) == (round(7.63 * GiB), round(11.06 * MiB))
    # the type alone after a node's name stays the type's own reading, with no figure (so before this task too)
    res, ev = last_event("KSampler failed: torch.OutOfMemoryError\n")
    assert (ev["kind"], ev["numbers"]) == ("torch.oom_type", {})


def test_the_old_bracket_cut_after_the_semicolon_keeps_its_allocated_figure():
    # fails on the old code: the trailing ";" after "already allocated" lost the allocated figure
    n = _n("RuntimeError: CUDA out of memory. Tried to allocate 3.10 GiB (GPU 0; 10.76 GiB total capacity; "
           "61.50 MiB already allocated;\n")
    assert (n["requested"], n["total"], n["allocated"]) == (round(3.10 * GiB), round(10.76 * GiB), round(61.5 * MiB))


def test_vllms_length_check_cut_after_the_available_memory_keeps_the_length_and_the_need():
    # fails on the old code: the cut check was read without figures ("bare")
    text = ("INFO 05-02 10:11:12 [gpu_worker.py:298] Available KV cache memory: 11.20 GiB\n"
            "ValueError: To serve at least one request with the model's max seq len (262144), 30.50 GiB KV cache is "
            "needed, which is larger than the available KV cache memory\n")
    cause, kind, _, _, n = read(text)
    assert kind == "vllm.kv_max_len"
    assert (n["max_model_len_tokens"], n["kv_needed"]) == (262144, round(30.5 * GiB))
    assert cause == "kv-cache"      # the row for a check without the available figure still reads it (no KeyError)


SMI = ("+-----------------------------------------------------------------------------+\n"
       "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
       "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
       "|===============================+======================+======================|\n"
       "|   0  GeForce GTX 1070    Off  | 00000000:01:00.0  On |                  N/A |\n"
       "| 31%   47C    P2    40W / 151W |   7905MiB /  8119MiB |      3%      Default |\n"
       "+-------------------------------+----------------------+----------------------+\n")


def test_nvidia_smis_one_card_row_gives_the_cards_used_memory():
    # fails on the old code: the row's total was read (tri78), its used column was not
    n = _n(SMI + "terminate called after throwing an instance of 'thrust::system::system_error'\n"
                 "  what():  cudaErrorMemoryAllocation out of memory\n")
    assert (n["used"], n["total"]) == (7905 * MiB, 8119 * MiB)


def test_two_card_rows_give_no_used_figure():
    # a control (so before this task too: no "used" key at all): two cards, the failure names neither
    two = SMI.replace("|   7905MiB /  8119MiB |", "|   7905MiB /  8119MiB |\n| 30%   40C    P8    9W / 151W |"
                      "    210MiB /  8119MiB |")
    assert "used" not in _n(two + "  what():  cudaErrorMemoryAllocation out of memory\n")


TF1 = ("2019-03-02 11:20:31.104522: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1433] Found device 0 with properties:\n"
       "name: Tesla P4 major: 6 minor: 1 memoryClockRate(GHz): 1.1135\n"
       "pciBusID: 0000:00:04.0\n"
       "totalMemory: 7.43GiB freeMemory: {free}\n"
       "2019-03-02 11:20:31.520187: E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate {req} "
       "({req_b} bytes) from device: CUDA_ERROR_OUT_OF_MEMORY\n")


def test_tensorflow_1x_device_line_gives_total_and_free():
    # fails on the old code: "totalMemory: T freeMemory: F" (one line) was not read, only TF 2.x's "Total memory:" lines
    text = TF1.format(free="97.44MiB", req="97.44M", req_b=102173952)
    n = _n(text)
    assert (n["total"], n["free"], n["requested"]) == (round(7.43 * GiB), round(97.44 * MiB), 102173952)
    # the request (97.4375 MiB, printed 97.44M) is the free figure TensorFlow printed with two decimals (97.44 MiB read
    # as 102173245 bytes, 707 under it): not more than it, so
    # the stream executor's other-process row still holds; without the rounding allowance this cause changed
    assert read(text)[0] == "other-process"


def test_a_request_well_over_the_printed_free_figure_is_over_it():
    # the allowance is the printing's 0.5 %, no more: a request 5 % over the free figure is more than it (old code: no
    # free figure read, so this row held for any request)
    from support.triage_event import top
    _, conf, ev = top(TF1.format(free="97.44MiB", req="102.31M", req_b=107279810))
    assert ev["numbers"]["free"] == round(97.44 * MiB)
    hi = top(TF1.format(free="97.44MiB", req="97.44M", req_b=102173952))[1]
    assert conf.get("other-process", 0) < hi["other-process"]
