"""Task kv48: llama.cpp's -b (--batch), ik_llama.cpp's padded context before the micro-batch cap (rev19 D1), and
compute_buffer's graph as one named choice (rev20 D4).

1. --batch (the `batch` knob, llama.cpp -b / --batch-size). llama-server's default -b is 2048 beside -ub 512
   (common/common.h 403-404 at TheTom/llama-cpp-turboquant 69d8e4be; ik_llama.cpp's common/common.h 296-297 the same), and
   the context caps -b at -c and -ub at -b (src/llama-context.cpp 161-163): the reserve is min(-c, -b, -ub) tokens.
     Qwen2.5-7B (hidden 3584, intermediate 18944, vocab 152064) at -c 8192, flash attention, b9849 (one row of logits):
     the feed-forward's live set 4 x ub x (3 x 18944 + 3584) = 4 x ub x 60,416 and the mask's f16 cast 2 x 8192 x ub:
       -ub 4096 alone runs at 2048: 4 x 2048 x 60,416 + 2 x 8192 x 2048 = 494,927,872 + 33,554,432 = 528,482,304
       -ub 4096 -b 4096: 4 x 4096 x 60,416 + 2 x 8192 x 4096 = 989,855,744 + 67,108,864 = 1,056,964,608
       -b 256 (-ub 512 by default) runs at 256: 4 x 256 x 60,416 + 2 x 8192 x 256 = 61,865,984 + 4,194,304 = 66,060,288
     Ollama >= 0.30 hands num_batch (--ubatch) to llama-server as -b and -ub (llm/llama_server.go): num_batch 4096 is
     not capped at 2048. Qwen2.5-0.5B (hidden 896, intermediate 4864) on 0.30.7, an RTX 3090 (flash on), 8192 tokens:
       4 x 4096 x (3 x 4864 + 896) + 2 x 8192 x 4096 = 253,755,392 + 67,108,864 = 320,864,256

2. ik_llama.cpp pads -c before the caps (rev19 D1): n_ctx to 256 cells with flash attention, 32 without
   (llama_kv_cache::get_padding, src/llama-context.h 74), then n_batch = min(n_ctx, n_batch), at least GGML_KQ_MASK_PAD
   16, and n_ubatch = min(n_batch, n_ubatch) (src/llama.cpp 8161-8174 at ikawrakow/ik_llama.cpp 8337e4cd); mainline caps
   at the -c given (src/llama-context.cpp 161-163, the pad at 181). Qwen2.5-7B at -c 1100 -b/-ub 8192, ik (no logits
   cap: a whole micro-batch's, 4 x ub x (3584 + 152064) = 4 x ub x 155,648, the largest term here):
       flash attention, 1280: 4 x 1280 x 155,648 = 796,917,760 (capped at 1100: 684,851,200)
       without, 1120: 4 x 1120 x 155,648 = 697,303,040

3. compute_buffer(..., graph=) names the runtime's graph, one of llamacpp_compute.GRAPHS; glu= and graph= (two booleans,
   four mixes for three graphs) are gone. Expected bytes by hand from the models' config.json:
     Qwen2.5-7B (hidden 3584, intermediate 18944), flash attention, -ub 512, no logits, no mask:
       llama.cpp and ik_llama.cpp, the gated feed-forward's live set: 4 x 512 x (3 x 18944 + 3584) = 123,731,968
       Ollama's own engine, the term before round 59: 4 x 512 x (4 x 3584 + 18944) = 68,157,440
     Qwen3.5-9B (hidden 4096, 16 heads, 4 KV heads x 256), no flash attention, 65,536 cells, -ub 512 (scores and mask
     65,536 x (1 + 16)):
       llama.cpp, the gated-attention term: 4 x 512 x (22,535 + 1,114,112) = 2,327,853,056
       ik_llama.cpp and Ollama's own engine, the old term 1 + 4 x 4096: 4 x 512 x (16,385 + 1,114,112) = 2,315,257,856
"""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB
from support.cli_run import run as _run

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data" / "llm_measured.json"
MODELS = Path(__file__).resolve().parents[2] / "memory" / "llm" / "models"


def _spec(name):
    from gpu_garden.memory.llm.spec import from_config
    return from_config(json.loads((MODELS / f"{name}.json").read_text()), "config.json")


# Breaking it: compute_buffer back to glu= / graph= booleans (a graph name is then truthy: ik_llama.cpp gets mainline's
# no-flash term, Ollama's engine the live set, and an unknown name passes).
def test_compute_buffer_takes_one_named_graph():
    from gpu_garden.memory.llm.runtimes.llamacpp_compute import GRAPHS, compute_buffer
    assert GRAPHS == ("llama.cpp", "ik_llama.cpp", "ollama-engine")
    q7, q9 = _spec("Qwen2.5-7B"), _spec("Qwen3.5-9B")
    flash = {g: compute_buffer(q7, 8192, 512, True, logits=False, graph=g) for g in GRAPHS}
    assert flash == {"llama.cpp": 123_731_968, "ik_llama.cpp": 123_731_968, "ollama-engine": 68_157_440}
    scores = {g: compute_buffer(q9, 65_536, 512, False, logits=False, graph=g) for g in GRAPHS}
    assert scores == {"llama.cpp": 2_327_853_056, "ik_llama.cpp": 2_315_257_856, "ollama-engine": 2_315_257_856}
    assert compute_buffer(q9, 65_536, 512, False, logits=False) == 2_327_853_056  # llama.cpp's by default
    with pytest.raises(ValueError, match="graph must be one of"):
        compute_buffer(q9, 65_536, 512, False, graph="vllm")
    with pytest.raises(TypeError):
        compute_buffer(q9, 65_536, 512, False, glu=False)


def _q7(**knobs):
    return llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), "llama.cpp", ctx=8192, parallel=1, flash_attn=True,
                    ngl=99, runtime_version="b9849", vram=24 * GiB, weights_dtype="Q4_K_M", **knobs)


# Breaking it: evaluate's cap back to min(-ub, -c) (rev19 S2's assumption, -b >= -ub): -ub 4096 alone gives 1,056,964,608.
def test_the_micro_batch_runs_at_no_more_than_the_batch():
    alone = _q7(ubatch=4096)
    assert alone["overhead"]["compute_buffer"] == 528_482_304
    assert any(n.startswith("-ub 4096 runs at -b 2048: ") for n in alone["notes"])
    both = _q7(ubatch=4096, batch=4096)
    assert both["overhead"]["compute_buffer"] == 1_056_964_608
    assert not any(n.startswith("-ub ") for n in both["notes"])
    assert _q7(batch=256)["overhead"]["compute_buffer"] == 66_060_288
    assert _q7(batch=2048)["overhead"]["compute_buffer"] == _q7()["overhead"]["compute_buffer"]  # the default
    with pytest.raises(UserError, match="--batch"):
        _q7(batch=0)


# Breaking it: ollama_server's settings without batch=num_batch (LC.settings' 2048 then caps num_batch 4096).
def test_ollama_num_batch_is_its_batch_and_micro_batch():
    def cb(ub):
        return llm.plan(llm.describe(model="Qwen/Qwen2.5-0.5B-Instruct"), runtime="ollama", ctx=8192, vram=8 * GiB,
                        runtime_version="0.30.7", gpu_name="RTX 3090", ubatch=ub)["overhead"]["compute_buffer"]
    assert cb(4096) == 320_864_256
    with pytest.raises(UserError, match=r"^ollama does not read batch \(--batch, "):
        llm.plan(llm.describe(model="Qwen/Qwen2.5-0.5B-Instruct"), runtime="ollama", ctx=8192, batch=4096)


# Breaking it: --batch out of the CLI (or of report._CLI_KNOBS), or flags.py's -b out of the command.
def test_the_cli_takes_batch_and_names_llamacpp_spelling(capsys):
    base = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--runtime", "llama.cpp", "--ctx", "8192", "--flash-attn", "on",
            "--ngl", "99", "--runtime-version", "b9849", "--vram", "24", "--weights-dtype", "Q4_K_M", "--ubatch", "4096"]
    rc, res, err = _run(base + ["--batch", "4096", "--json"], capsys)
    assert rc == 0, err
    assert res["overhead"]["compute_buffer"] == 1_056_964_608
    assert " -ub 4096 -b 4096" in res["command"]
    rc, res, err = _run(base + ["--json"], capsys)
    assert res["overhead"]["compute_buffer"] == 528_482_304 and " -b " not in res["command"]
    rc, out, err = _run(base + ["-b", "4096"], capsys)
    assert rc == 2 and "llama.cpp's -b is --batch N here" in err


# Every llama.cpp row of bench_llm whose -ub is above llama-server's default -b 2048 carries the -b its log or command
# names, so that no score rests on the default (without it the 8192-context -b/-ub 8192 P100 row's OOM reads as a fit).
# Breaking it: a row's "batch" key out of llm_measured.json.
def test_bench_rows_above_the_default_batch_carry_theirs():
    rows = [r for r in json.loads(DATA.read_text())["rows"]
            if r["runtime"] == "llama.cpp" and (r["input"].get("ubatch") or 0) > 2048]
    assert len(rows) == 16
    assert all(r["input"].get("batch", 0) >= r["input"]["ubatch"] for r in rows), [
        r["id"] for r in rows if r["input"].get("batch", 0) < r["input"]["ubatch"]]


# Breaking it: micro_batch without its ik branch (the cap at the -c given, 1100, for ik too).
def test_ik_llama_pads_the_context_before_the_caps():
    from gpu_garden.memory.llm.runtimes.llamacpp import micro_batch
    ik, main = {"ubatch": 8192, "batch": 8192, "ik": True}, {"ubatch": 8192, "batch": 8192, "ik": False}
    assert micro_batch(dict(ik, flash=True), 1100) == 1280 and micro_batch(dict(ik, flash=False), 1100) == 1120
    assert micro_batch(dict(main, flash=True), 1100) == micro_batch(dict(main, flash=False), 1100) == 1100
    assert micro_batch(dict(ik, flash=True), 1000) == 1024          # rev19 D1's example
    assert micro_batch(dict(ik, flash=True, batch=8), 4096) == 16    # GGML_KQ_MASK_PAD
    assert micro_batch(dict(ik, flash=True, ubatch=512), 1100) == 512
    assert micro_batch(dict(main, flash=True, batch=8), 4096) == 8

    def cb(fa):
        return llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), "llama.cpp", ctx=1100, parallel=1, flash_attn=fa,
                        ngl=99, runtime_version="ik_llama.cpp 3738 (fa90a986)", vram=24 * GiB, weights_dtype="Q4_K_M",
                        ubatch=8192, batch=8192)["overhead"]["compute_buffer"]
    assert cb(True) == 796_917_760 and cb(False) == 697_303_040
