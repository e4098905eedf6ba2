"""review30: SGLang's cut quote read only where no other program's frames come with it. Logs written here (paths, sizes
and line numbers made up), not copied from the corpus; expected values by hand."""
from gpu_garden.memory.triage import engine

# any Python program may raise RuntimeError("Not enough memory"): here a renderer's own pool, its frames its own
FOREIGN = ('Traceback (most recent call last):\n'
           '  File "/home/ana/tiles/render.py", line 41, in <module>\n'
           '    buf = pool.reserve(n)\n'
           '  File "/home/ana/tiles/mempool.py", line 12, in reserve\n'
           '    raise RuntimeError("Not enough memory")\n'
           'RuntimeError: Not enough memory\n')
# the same cut quote raised from SGLang's model runner
SGLANG = ('Traceback (most recent call last):\n'
          '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 1502, in init_memory_pool\n'
          '    raise RuntimeError(\n'
          'RuntimeError: Not enough memory\n')


def test_cut_quote_under_another_programs_frames_is_not_sglangs():
    """Before review30 this read as SGLang's pool check (runtime sglang, weights-exceed-vram, --mem-fraction-static)."""
    res = engine.triage_text(FOREIGN)
    ev = res["events"][-1]
    assert ev["runtime"] != "sglang", ev["runtime"]
    assert res["cause"] != "weights-exceed-vram", ev["causes"]
    assert not any("SGLang" in e or "mem-fraction" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def test_cut_quote_from_sglangs_frames_or_alone_stays_sglangs():
    for text in (SGLANG, "RuntimeError: Not enough memory\n"):
        res = engine.triage_text(text)
        ev = res["events"][-1]
        assert (ev["kind"], ev["runtime"], res["cause"]) == ("sglang.pool", "sglang", "weights-exceed-vram"), (text, ev["causes"])
