"""Session 18, task fix18a: the triage findings of review18a. Each test is written from the reviewer's example and failed
on the commit before its mend (the commit names the deliberate break that makes it fail again)."""
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.categories import frame_category


def _top(text):
    r = engine.triage_text(text)
    return [c["id"] for c in r["events"][-1]["causes"]]


def test_loss_is_matched_as_a_word_part_not_inside_other_words():
    # review18a #7: "loss" inside lossless / gloss / floss is no loss function
    for func in ("decode_lossless", "gloss_lookup", "floss"):
        assert frame_category("/srv/app/codec.py", func) is None, func
    # a loss as a word part split by _ or ending the name stays the batch's working tensor
    for func in ("compute_loss", "loss_fn", "ForCausalLMLoss", "loss", "dpo_loss_step", "train_loss"):
        assert frame_category("/srv/app/train/trainer.py", func) == "activations", func


def test_private_pools_of_a_compiled_model_without_a_capture_line_are_not_a_runtime_allocator():
    # review18a #1: torch.compile(mode="reduce-overhead") captures CUDA graphs without a "Capturing" line; 4.20 GiB of the
    # 23.65 GiB card in private pools is the graphs', not a runtime allocator to update
    log = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of "
           "which 1.12 GiB is free. Including non-PyTorch memory, this process has 22.51 GiB memory in use. Of the allocated "
           "memory 21.80 GiB is allocated by PyTorch, with 4.20 GiB allocated in private pools (e.g., CUDA Graphs), and "
           "310.00 MiB is reserved by PyTorch but unallocated.\n")
    assert _top(log)[0] != "other"
    # the same numbers under a pluggable allocator the log names: that allocator's pool
    own = "torch.cuda.memory.change_current_allocator(CUDAPluggableAllocator('alloc.so', 'my_malloc', 'my_free'))\n"
    assert _top(own + log)[0] == "other"


def test_a_lone_process_entry_in_a_cut_message_is_not_flipped_to_another_program():
    # review18a #3: "Process N has X" with no "this process" is this process under its container's host pid; a paste cut
    # after the entry, under any pid, is no evidence that another program holds the card
    cut = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.65 GiB "
           "of which 301.12 MiB is free. Process 48211 has 23.34 GiB memory in use.\n")
    r = engine.triage_text(cut)
    assert r["events"][-1]["causes"][0]["id"] != "other-process"
    # the entry close to what PyTorch reserved (22.79 GiB + a context) is this process's figure
    full = cut.rstrip("\n") + (" Of the allocated memory 22.41 GiB is allocated by PyTorch, and 386.00 MiB is reserved by "
                               "PyTorch but unallocated.\n")
    ev = engine.triage_text(full)["events"][-1]
    assert abs(ev["numbers"].get("this_process", 0) - 23.34 * 2**30) < 2**20 and "other_processes" not in ev["numbers"]


_BFC = ("2021-01-02 03:04:05.000001: W tensorflow/core/common_runtime/bfc_allocator.cc:440] Allocator ({name}) ran out of "
        "memory trying to allocate {req} (rounded to {rounded}).\n"
        "2021-01-02 03:04:05.000003: I tensorflow/core/common_runtime/bfc_allocator.cc:950] Stats: \n"
        "Limit:                  {limit}\nInUse:                  {inuse}\nMaxInUse:               {inuse}\n")


def test_bfc_stats_belong_to_the_failure_of_their_own_allocator():
    # review18a #4: a GPU_0_bfc failure with its stats, then a gpu_host_bfc failure with the host allocator's: the device
    # event keeps the device allocator's limit and bytes in use, not the last Stats block of the log
    log = (_BFC.format(name="GPU_0_bfc", req="3.00MiB", rounded=3145728, limit=4000000000, inuse=3990000000)
           + _BFC.format(name="gpu_host_bfc", req="64.00MiB", rounded=67108864, limit=68719476736, inuse=68700000000))
    evs = engine.triage_text(log)["events"]
    dev = [e for e in evs if e["device_kind"] == "cuda"]
    assert dev, [(e["device_kind"], e["numbers"]) for e in evs]
    assert dev[0]["numbers"]["device_limit"] == 4000000000 and dev[0]["numbers"]["allocated"] == 3990000000


_TF1_DEV = "Found device {i} with properties:\nname: Tesla Test\nTotal memory: {total}\nFree memory: {free}\n"


def test_tf1_device_memory_is_not_the_last_cards_on_a_multi_gpu_log():
    # review18a #4 (57b5e65): TensorFlow 1.x prints one block per card; its stream executor's failure names no card, so a
    # figure the cards disagree on is nobody's, and one they share (same cards) stands
    fail = "Creating TensorFlow device (/gpu:0)\nfailed to allocate 6.00G (6442450944 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY\n"
    two = _TF1_DEV.format(i=0, total="11.17GiB", free="2.10GiB") + _TF1_DEV.format(i=1, total="11.17GiB", free="11.05GiB")
    nums = engine.triage_text(two + fail)["events"][-1]["numbers"]
    assert nums.get("total") == round(11.17 * 2**30) and "free" not in nums, nums
    mixed = _TF1_DEV.format(i=0, total="11.17GiB", free="2.10GiB") + _TF1_DEV.format(i=1, total="7.93GiB", free="7.80GiB")
    nums = engine.triage_text(mixed + fail)["events"][-1]["numbers"]
    assert "total" not in nums and "free" not in nums, nums
    # one card: its figures
    nums = engine.triage_text(_TF1_DEV.format(i=0, total="7.93GiB", free="7.80GiB") + fail)["events"][-1]["numbers"]
    assert nums["total"] == round(7.93 * 2**30) and nums["free"] == round(7.80 * 2**30)


def _tgi(tokens):
    return (f"2023-10-24T09:12:02.101Z ERROR warmup{{max_input_length=64 max_prefill_tokens={tokens}}}:warmup: "
            f"text_generation_client: router/client/src/lib.rs:33: Server error: Not enough memory to handle {tokens} prefill "
            "tokens. You need to decrease `--max-batch-prefill-tokens`\n")


def test_tgi_tiny_prefill_is_another_fault_only_where_the_weights_left_room():
    # review18a #5: a 7B in fp16 on a 16 GB T4 at --max-batch-prefill-tokens 512: the weights fill the card, the batch fails
    # for lack of memory
    full = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of "
            "14.58 GiB of which 25.56 MiB is free. Including non-PyTorch memory, this process has 14.55 GiB memory in use. Of "
            "the allocated memory 13.91 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n")
    assert _top(full + _tgi(512))[0] != "other"
    # the weights left room (a GiB or more beyond what PyTorch allocated): the tiny batch is no reason, another fault
    room = (full.replace("Tried to allocate 64.00 MiB", "Tried to allocate 12.00 GiB").replace("25.56 MiB is free", "11.30 GiB is free")
            .replace("14.55 GiB memory in use", "3.25 GiB memory in use").replace("13.91 GiB is allocated", "2.40 GiB is allocated"))
    assert _top(room + _tgi(512))[0] == "other"
    # no figures: other, uncertain, with the batch's memory as the runner-up
    r = engine.triage_text(_tgi(256))["events"][-1]
    assert [c["id"] for c in r["causes"]][:2] == ["other", "activations"] and r["uncertain"], r["causes"]


def test_a_failed_memory_query_speaks_for_its_own_failure_only():
    # review18a #6: a cuMemGetInfo that failed for lack of memory at start-up (another program held the card then) says
    # nothing of a bare CUDA error far later, after that failure ended and the run went on
    query = ("RuntimeError: cuMemGetInfo failed: out of memory\n"
             "torch.AcceleratorError: CUDA error: out of memory\n")
    later = "".join(f"epoch 1 step {i}: loss=0.{i:03d}\n" for i in range(200)) + "torch.AcceleratorError: CUDA error: out of memory\n"
    evs = engine.triage_text(query + later)["events"]
    assert len(evs) == 2, [e["kind"] for e in evs]
    assert evs[0]["causes"][0]["id"] == "other-process"
    assert evs[-1]["causes"][0]["id"] != "other-process", evs[-1]["causes"][:2]
    # the query right after the failure it belongs to still speaks for it
    after = "torch.AcceleratorError: CUDA error: out of memory\nRuntimeError: cuMemGetInfo failed: out of memory\n"
    assert engine.triage_text(after)["events"][-1]["causes"][0]["id"] == "other-process"
