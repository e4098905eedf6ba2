"""none51: failure lines triage did not recognise at all, by family, each read from the runtime's own source. The logs
below are hand-made excerpts (no corpus case); every expected value is read from the line by hand.

1. PyTorch's caching-allocator message quoted as its sentences alone (torch_sentences.py; c10/cuda/CUDACachingAllocator.cpp,
   torch 2.14.1): "Tried to allocate N", "Process P has N memory in use", "Of the allocated memory A is allocated by
   PyTorch", "CUDA out of memory ... total capacity of T". A lone capacity sentence, and prose around a sentence, stay unread;
   a sentence line after the message's first lines continues that message (scan.py).
2. A CUDA runtime allocation call's check with its error string cut at the line's end (other_patterns.CUDA_CALL): tiny-cuda-nn's
   CUDA_CHECK_THROW, "<file>:<line> cudaMalloc(...) failed with error " + cudaGetErrorString, wrapped as "Could not allocate
   memory: ..." (include/tiny-cuda-nn/gpu_memory.h, GPUMemory::resize / allocate_memory). Another error string is not read.
3. Device: vLLM's ROCm-only switches (vllm/envs.py VLLM_ROCM_USE_AITER, VLLM_ROCM_*) set on its command line name a ROCm card.
"""
from support.regex_time import assert_each_fast
from support.triage_event import read
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.torch_sentences import torch_sentences

GiB, MiB = 1 << 30, 1 << 20


def test_request_sentence_alone():
    # a README's "Known issues": the one sentence its author kept
    cause, kind, runtime, device, numbers = read("Known issue at batch 32:\nTried to allocate 96.00 MiB\n")
    assert (kind, runtime) == ("torch.cuda", "pytorch")
    assert numbers["requested"] == 96 * MiB


def test_process_sentences_alone():
    # two other programs listed, no "this process" sentence: both stay other processes' (3.50 + 2.25 GiB)
    _, kind, _, _, numbers = read("Process 4242 has 3.50 GiB memory in use. Process 4343 has 2.25 GiB memory in use\n")
    assert kind == "torch.cuda"
    assert numbers["other_processes"] == int(5.75 * GiB)
    assert "this_process" not in numbers


def test_allocated_then_capacity_on_two_lines():
    # the allocated sentence, the capacity sentence on the line after it (a note's quote): one message, both figures
    _, kind, _, _, numbers = read("Of the allocated memory 5.25 GiB is allocated by PyTorch\nGPU 0 has a total capacity of 5.75 GiB\n")
    assert kind == "torch.cuda"
    assert (numbers["allocated"], numbers["total"]) == (int(5.25 * GiB), int(5.75 * GiB))


def test_first_words_and_elided_capacity_name_the_device():
    _, kind, _, device, numbers = read("HIP out of memory ... total capacity of 15.75 GiB\n")
    assert (kind, device) == ("torch.hip", "rocm")
    assert numbers["total"] == int(15.75 * GiB)


def test_prose_and_a_lone_capacity_are_not_read():
    for text in ("GPU 0 has a total capacity of 24.00 GiB\n",                       # a card's spec, in the message's words
                 "We tried to allocate 2.00 GiB buffers for the cache\n",            # prose around the words
                 "Tried to allocate 2.81 GiB, says the log, so we halved the batch\n",
                 "The dashboard shows 3.10 GiB memory in use\n"):
        assert not engine.triage_text(text)["found"], text
    assert torch_sentences("total capacity of 24.00 GiB") is None        # a subject-less capacity only after an ellipsis


def _one_event_numbers(text):
    res = engine.triage_text(text)
    assert len(res["events"]) == 1, res["events"]
    return res["events"][0]["numbers"]


def test_a_message_broken_at_its_sentences_stays_one():
    # PyTorch's message quoted a sentence a line: the process sentences continue the message before them (scan.py's joins),
    # so the listed process is another program's and "this process" is this one's; read as a message of its own, the listed
    # process became this process's figure (30.00 GiB)
    text = ("torch.OutOfMemoryError: Tried to allocate 2.00 GiB.\nGPU 0 has a total capacity of 47.50 GiB of which 1.50 GiB is free.\n"
            "Process 777 has 30.00 GiB memory in use.\n  \u2026 this process has 15.25 GiB memory in use.\n")
    numbers = _one_event_numbers(text)
    assert (numbers["this_process"], numbers["other_processes"]) == (int(15.25 * GiB), 30 * GiB)


def test_cuda_check_cut_after_its_error_string():
    line = ("12:01:07 ERROR    Uncaught exception: Could not allocate memory: /opt/ngp/dependencies/tiny-cuda-nn/include/"
            "tiny-cuda-nn/gpu_memory.h:112 cudaMalloc(&rawptr, n_bytes+DEBUG_GUARD_SIZE*2) failed with error out of mem\n")
    _, kind, runtime, device, _ = read(line)
    assert (kind, runtime, device) == ("cuda.driver", "tiny-cuda-nn", "cuda")
    assert [e["form"] for e in engine.triage_text(line)["events"]] == ["runtime_call"]
    other = line.replace("out of mem", "an illegal memory access was encountered")
    assert not engine.triage_text(other)["found"]


def test_vllm_rocm_switch_names_the_card():
    refusal = ("ValueError: To serve at least one request with the model's max seq len (262144), 40.00 GiB KV cache is needed, "
               "which is larger than the available KV cache memory (12.50 GiB). Based on the available memory, the estimated "
               "maximum model length is 81920. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
               "initializing the engine.\n")
    command = "$ VLLM_ROCM_USE_AITER=1 vllm serve some-org/some-model -tp 4 --max-model-len 262144\n"
    assert read(command + refusal)[3] == "rocm"
    assert read("$ VLLM_USE_V1=1 vllm serve some-org/some-model -tp 4 --max-model-len 262144\n" + refusal)[3] == "cuda"


def test_sentence_reader_is_linear():
    assert_each_fast([(torch_sentences, ["Tried to allocate 1.00 MiB. " * 4000, "Process 1 has " * 20000,
                                         "CUDA out of memory ... " + ". " * 50000])])


def test_lone_process_sentence_does_not_crash_the_ranking():
    # (rev51) one "Process N has M memory in use." line alone: split_listed makes the lone entry this process's and drops
    # other_processes; the reader still set others_largest, so rules_process's cut-message row (listed_others_cut) matched and
    # its evidence read n["other_processes"]: KeyError out of triage_text (the CLI's crash; the OOM panel logs it and shows
    # nothing). Expected figure read by hand: 30.00 GiB
    res = engine.triage_text("Process 777 has 30.00 GiB memory in use.\n")
    assert [e["numbers"] for e in res["events"]] == [{"this_process": 30 * GiB}]
    assert "others_largest" not in torch_sentences("Process 777 has 30.00 GiB memory in use.")


def test_sentences_inside_an_open_failure_add_no_figure():
    # (rev51) scan._place drops a sentences-only line inside an open failure: without that guard the next line's listed
    # process, another program's 3.00 GiB, became this process's figure (split_listed's lone-entry rule), though the quote's
    # own sentence gives 19.00 GiB. (fixT) The quote's sentence lines are now joined to its request line (wrapped.join), so
    # this text reads all three; the guard itself is pinned by test_triage_fixt's second quote
    text = ("Tried to allocate 2.00 GiB.\nProcess 7 has 3.00 GiB memory in use.\n"
            "Including non-PyTorch memory, this process has 19.00 GiB memory in use.\n")
    numbers = _one_event_numbers(text)
    assert numbers["requested"] == 2 * GiB and numbers.get("this_process") != 3 * GiB, numbers
