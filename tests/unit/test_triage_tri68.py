"""Task tri68: Kaldi's allocator refusing a region on a shared card, read from its own report (facts "kaldi_held";
predicates.kaldi_held_outside, one other-process row in rules_process.py). cu-allocator.cc's AllocateNewRegion calls
PrintMemoryUsage just before its KALDI_ERR: "Memory usage: A/H bytes currently allocated/total-held; ... device memory
info: free:FM, used:UM, total:TM". H is what this process's regions hold (every CuMatrix allocation is served from them),
U the card's total less free (cuMemGetInfo); used far past held is other processes' memory. Lines made up in Kaldi's
layout on an 8 GB card (total 8119M); expected values by hand."""
from support.triage_event import top

_HELD = 1073741824        # 1 GiB (1024 MiB) held by this process's regions


def _report(used, held=_HELD, free=219, total=8119):
    return (f"LOG (nnet3-train[5.5]:PrintMemoryUsage():cu-allocator.cc:368) Memory usage: 1000000000/{held} bytes currently "
            "allocated/total-held; 100/4 blocks currently allocated/free; largest free/allocated block sizes are 60000000/50000000; "
            "time taken total/cudaMalloc is 0.01/0.005, synchronized the GPU 0 times out of 50 frees; device memory info: "
            f"free:{free}M, used:{used}M, total:{total}M, free/total:0.0269737maximum allocated: 1010000000current allocated: 1000000000\n")


def _refusal(used, free=219, total=8119, shared=True):
    why = ("Possibly this is due to sharing the GPU.  Try switching the GPUs to exclusive mode (nvidia-smi -c 3) and using the "
           "option --use-gpu=wait to scripts like steps/nnet3/chain/train.py." if shared else "Possibly smaller minibatch size would help.")
    return ("ERROR (nnet3-train[5.5]:AllocateNewRegion():cu-allocator.cc:519) Failed to allocate a memory region of 268435456 "
            f"bytes.  {why}  Memory info: free:{free}M, used:{used}M, total:{total}M, free/total:0.0269737 CUDA error: 'out of memory'\n")


def test_card_used_far_past_held_reads_other_process():
    # used 7900M - held 1024 MiB = 6876 MiB outside this process's regions, past half the card (4059.5 MiB) and the 256 MiB
    # region; free (219M) is under the region, so round 94's free >= request row does not fire: without this row the
    # driver-level rows answer other (1.0 over 0.9)
    cause, conf, ev = top(_report(7900) + _refusal(7900))
    assert cause == "other-process"
    first = next(c for c in ev["causes"] if c["id"] == "other-process")["evidence"][0]
    assert "holds 1.00 GiB" in first and "6.71 GiB more" in first    # 6876 MiB = 6.71 GiB


def test_this_process_holding_the_card_is_no_other_process():
    # the same card full, but this process's regions hold 7168 MiB of the 7900M used: 732 MiB outside, a context's worth
    assert top(_report(7900, held=7168 * 2 ** 20) + _refusal(7900))[0] != "other-process"


def test_threshold_half_the_card():
    # 5000M used: 3976 MiB outside, under half of 8119M; 5200M used: 4176 MiB, past it
    assert top(_report(5000) + _refusal(5000))[0] != "other-process"
    assert top(_report(5200) + _refusal(5200))[0] == "other-process"


def test_exclusive_mode_message_and_a_distant_report_do_not_read():
    # compute-exclusive mode (the other KALDI_ERR branch: no other process can hold a context on the card), and a report
    # not the one printed for this refusal (more than KALDI_REPORT_WITHIN lines before it)
    assert top(_report(7900) + _refusal(7900, shared=False))[0] != "other-process"
    filler = "".join(f"LOG (nnet3-train[5.5]:main():nnet3-train.cc:90) minibatch {i} done\n" for i in range(6))
    assert top(_report(7900) + filler + _refusal(7900))[0] != "other-process"
