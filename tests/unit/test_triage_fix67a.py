"""fix67a: mend audit aud67b's vLLM findings (issue 14). The logs are the auditor's (tests/unit/data/fix67a, modelled on
the vLLM threads its README names). Each test failed on main a7961647 unless it says it is a regression check."""
from pathlib import Path

from gpu_garden.memory.triage import engine

DATA = Path(__file__).parent / "data" / "fix67a"


def _answer(name):
    res = engine.triage_text((DATA / f"{name}.log").read_text())
    return res, res["events"][res["headline"]]


def _cmds(ev):
    return [c["text"] for c in ev["guide"]["commands"]]


# --- 1. (aud #1) the guides' vLLM commands keep the log's own --kv-cache-dtype, --max-model-len, --trust-remote-code, env -----

def test_the_kv_guide_keeps_the_logs_fp8_cache():
    _, ev = _answer("c3_v1_maxlen_fp8kv")
    first = _cmds(ev)[0]
    # 121856 tokens is what fits with the log's fp8 cache: without --kv-cache-dtype fp8 the default cache needs twice that
    assert "--max-model-len 121856" in first and "--kv-cache-dtype fp8" in first
    assert first.count("--max-model-len") == 1          # the guide's own figure replaces the log's 221000


def test_the_graph_capture_guide_keeps_env_cache_dtype_context_and_remote_code():
    _, ev = _answer("c3_graph_capture_nvfp4_5090laptop")
    cmds = [c for c in _cmds(ev) if "vllm serve" in c]
    assert cmds
    for c in cmds:
        assert c.startswith("VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve ./qwen-27b-nvfp4 ")
        assert "--kv-cache-dtype nvfp4" in c and "--max-model-len 124000" in c and "--trust-remote-code" in c


# --- 2. (aud #2) the graph-capture fixes fit the log's numbers ---------------------------------------------------------

def _util(cmd):
    return cmd.split("--gpu-memory-utilization ")[1].split()[0] if "--gpu-memory-utilization" in cmd else None


def test_the_capture_drop_is_sized_from_the_failed_request_and_keeps_max_model_len():
    _, ev = _answer("c3_graph_capture_nvfp4_5090laptop")
    md = ev["guide"]["markdown"]
    utils = [_util(c) for c in _cmds(ev) if _util(c)]
    # 136 MiB of 22.36 GiB is 0.006 of the card: one hundredth off 0.98 (the thread: 0.97 boots); the cache's 2.97 GiB for
    # 150,745 tokens spares 0.53 GiB over 124000 tokens: 0.02 at most (0.85 would take 2.9 GiB, the whole cache)
    assert utils == ["0.97"]
    assert "no lower than 0.96" in md
    # the log ran --max-num-seqs 1: Fix 3 never raises it
    seqs = [c.split("--max-num-seqs ")[1].split()[0] for c in _cmds(ev) if "--max-num-seqs" in c]
    assert seqs == ["1"] and '"cudagraph_capture_sizes": [1]' in _cmds(ev)[-1]
    # the message's own VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 hint is explained
    assert "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0" in md and "on by default from 0.20.0" in " ".join(md.split())     # (fix67g F7)


def test_no_drop_fits_when_max_model_len_needs_the_whole_cache():
    text = (DATA / "c3_graph_capture_nvfp4_5090laptop.log").read_text().replace("--max-model-len 124000", "--max-model-len 150000")
    res = engine.triage_text(text)
    ev = res["events"][res["headline"]]
    md = ev["guide"]["markdown"]
    assert "No lower utilization fits this log" in md
    assert not any(_util(c) for c in _cmds(ev))
    assert any("--enforce-eager" in c for c in _cmds(ev))


def test_a_v0_capture_drop_from_its_own_figures():
    _, ev = _answer("c3_graph_capture_v0_t4")
    # 54 MiB of 15.77 GiB: one hundredth off the log's 0.95
    assert [_util(c) for c in _cmds(ev) if _util(c)] == ["0.94"]


# --- 3. (aud #5) a capture frame after the KV cache was sized makes graph-capture certain ----------------------------------

def test_a_capture_frame_after_the_kv_cache_is_certain():
    for name in ("c3_graph_capture_v1_tp4", "c3_graph_capture_v0_t4", "c3_graph_capture_nvfp4_5090laptop"):
        res, ev = _answer(name)
        assert res["cause"] == "graph-capture" and not res.get("uncertain"), name
        assert ev["causes"][0]["confidence"] >= 0.7, name


def test_the_capture_frame_alone_without_the_kv_line_stays_as_it_was():
    # regression check (passes on old code too): the row needs the KV cache's line; without it tp4 reads as before (60 %)
    text = "\n".join(l for l in (DATA / "c3_graph_capture_v1_tp4.log").read_text().splitlines()
                     if "KV cache" not in l and "concurrency" not in l)
    res = engine.triage_text(text)
    ev = res["events"][res["headline"]]
    assert res["cause"] == "graph-capture" and ev["causes"][0]["confidence"] < 0.7


# --- 4. (aud #11, #14) the fp8 sentences say whose length it is, and "8-bit", and no fp8 for a cache already that small ------

def test_the_fp8_cap_is_the_runs_own_max_model_len():
    _, ev = _answer("c3_maxseqlen_3090")
    md = " ".join(ev["guide"]["markdown"].split())
    assert "29000 this run asked for with --max-model-len" in md
    assert "model's maximum length" not in md


def test_the_fp8_cap_without_the_command_line_names_max_model_len_in_force():
    text = "\n".join(l for l in (DATA / "c3_maxseqlen_3090.log").read_text().splitlines() if not l.startswith("$ "))
    res = engine.triage_text(text)
    md = " ".join(res["events"][res["headline"]]["guide"]["markdown"].split())
    assert "max_model_len in force, 29000 (the model's own maximum unless --max-model-len set it)" in md


def test_an_fp8_cache_is_called_8_bit_and_gets_no_fp8_again():
    _, ev = _answer("c3_v1_maxlen_fp8kv")
    md = " ".join(ev["guide"]["markdown"].split())
    assert "already 8-bit (`kv_cache_dtype=fp8`)" in md and "smallest vLLM has" not in md
    assert not any("--kv-cache-dtype fp8 --max-model-len" in c or c.count("--kv-cache-dtype") > 1 for c in _cmds(ev))


def test_an_nvfp4_cache_gets_no_fp8_suggestion():
    text = (DATA / "c3_v1_maxlen_fp8kv.log").read_text().replace("--kv-cache-dtype fp8", "--kv-cache-dtype nvfp4")
    res = engine.triage_text(text)
    ev = res["events"][res["headline"]]
    md = " ".join(ev["guide"]["markdown"].split())
    assert "already 4-bit (`kv_cache_dtype=nvfp4`)" in md
    assert "--kv-cache-dtype fp8" not in md and "Or an 8-bit cache" not in md


# --- 5. (aud #8) vLLM's start-up figures in `numbers`, under the keys that exist ---------------------------------------------

def test_vllms_startup_figures_are_in_numbers():
    from gpu_garden.memory.triage.render import render_numbers
    _, ev = _answer("c3_graph_capture_v1_tp4")
    n = ev["numbers"]
    assert n["weights"] == round(33.9552 * 2 ** 30)          # "Model loading took 33.9552 GiB"
    assert n["kv_available"] == round(38.12 * 2 ** 30)       # "Available KV cache memory: 38.12 GiB"
    assert n["kv_max_tokens"] == 499616                      # "GPU KV cache size: 499,616 tokens"
    assert n["gpu_memory_utilization_ratio"] == 0.98
    shown = render_numbers(n)
    assert "weights 33.96 GiB" in shown and "KV cache available 38.12 GiB" in shown and "kv max 499616 tokens" in shown


def test_the_messages_own_figures_win():
    # regression check: the kv-cache message's 5.59 GiB and 23648 tokens stay the message's
    _, ev = _answer("c3_v1_maxlen_fp8kv")
    assert ev["numbers"]["kv_available"] == round(5.59 * 2 ** 30)
    _, ev = _answer("c3_maxseqlen_3090")
    assert ev["numbers"]["kv_max_tokens"] == 23648
