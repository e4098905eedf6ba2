"""Messages triage did not recognise before round 7 (read after batches 23-25, which are regression sets for them):
exllamav3's loader finding no room in the GPU split, and SGLang's start-up check of the tensor-parallel ranks' free
memory. The lines are the runtimes' own strings (exllamav3 loader initial_split; SGLang srt/utils.py
get_available_gpu_memory), set in logs shaped like the reports that quote them; each test fails when its pattern or
its row goes."""
from gpu_garden.memory.triage import engine, parse

# tabbyAPI loading an exl3 quant with a cache_size too large for two cards (the shape of theroyallab/tabbyAPI reports)
EXL = ("INFO:     Loading model: /models/Qwen3-32B-exl3-6.0bpw\n"
       "INFO:     Loading with autosplit\n"
       "Loading model modules  92% 59/64\n"
       "RuntimeError: Insufficient VRAM in split for model and cache\n")
# SGLang with tensor parallel 2, one GPU partly held by a leftover container
SGL = ("[2026-03-02 10:14:07 TP0] Init torch distributed begin.\n"
       "[2026-03-02 10:14:09 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
       '  File "/sgl-workspace/sglang/python/sglang/srt/utils.py", line 412, in get_available_gpu_memory\n'
       "RuntimeError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
       "min_per_gpu_memory=38.52, local_gpu_memory=71.06, local_gpu_memory * 0.9=63.95\n")


def test_exllama_split_reads_as_weights_with_the_cache_second():
    assert parse.recognise("RuntimeError: Insufficient VRAM in split for model and cache")["kind"] == "exllama.split"
    res = engine.triage_text(EXL)
    ev = res["events"][-1]
    assert res["cause"] == "weights-exceed-vram" and ev["kind"] == "exllama.split"
    assert [c["id"] for c in ev["causes"][:2]] == ["weights-exceed-vram", "kv-cache"]
    assert "bpw" in ev["causes"][0]["evidence"][0]


def test_sglang_unbalanced_memory_is_another_process():
    res = engine.triage_text(SGL)
    ev = res["events"][-1]
    assert (res["cause"], ev["kind"], ev["runtime"]) == ("other-process", "sglang.unbalanced", "sglang")
    assert ev["causes"][0]["confidence"] == round(6.0 / 6.75, 2)       # one 6.0 row and "not determined" 0.75
    assert "CUDA_VISIBLE_DEVICES" in ev["causes"][0]["evidence"][0]
