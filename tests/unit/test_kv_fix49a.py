"""fix49a: review rev23's findings on kvo49's `gpu-garden kv` changes (pipeline-parallel verdict, printed command).
B1 a 'weights alone' verdict names the stage holding the most weights, not the deciding (least pool) stage;
B2 an Unsloth UD- type keeps its prefix in the printed -hf / hf.co name; B3 -hf loads the repo's projector unless
--no-mmproj (common/arg.cpp, the -hf help); B4 kv's own build names (Q4_K_M_QKV16) never reach the run line;
S1 the "with the flags" KV is the deciding stage's; S2 Ollama pulls a Hub repo only by its hf.co/ name; S3 the name
to run is the Modelfile's FROM beside its PARAMETER lines, 'an IQ4_XS'; S4 docs: which worker a refusal names;
D5 --json gives the deciding stage's pool."""
import json
from pathlib import Path

from gpu_garden.memory import cli
from gpu_garden.memory.llm import run_model as RM

QWEN32 = ["kv", "--model", "Qwen/Qwen3-32B", "--pipeline-parallel-size", "2", "--pp-layer-partition", "20,44"]
BART = "bartowski/Qwen2.5-7B-Instruct-GGUF"
UNS = "unsloth/Qwen3-8B-GGUF"


def _text(argv, capsys):
    rc = cli.main(argv)
    return rc, capsys.readouterr().out


def _json(argv, capsys):
    cli.main(argv + ["--json"])
    return json.loads(capsys.readouterr().out)


# B1. Gemma-3-1B (google/gemma-3-1b-it config.json): hidden 1152, 4 q heads x 256 (q 1024), 1 KV head x 256, MLP 6912,
# vocab 262144, tied. One layer: q 1152 x 1024 + k, v 1152 x 256 each + o 1024 x 1152 + MLP 3 x 1152 x 6912 + four
# norms of 1152 + q/k norms of 256 = 26,842,112 values. Stage 0 (14 layers + the embedding 262144 x 1152) in bf16:
# 2 x (375,789,568 + 301,989,888) = 1,355,558,912 B + the table's 32 MiB of rotary tables = 1,389,113,344 B = 1.29 GiB.
# Stage 1 (12 layers + its own copy of the tied head + the final norm): 2 x (322,109,184 + 301,989,888 + 1152) + 32 MiB
# = 1,281,754,880 B = 1.19 GiB. The share is 0.92 x 1 GiB = 942.08 MiB: both stages' weights exceed it, and stage 1
# is left the least pool (the sampler), so the deciding stage is not the heaviest.
def test_weights_alone_verdict_names_the_stage_with_the_most_weights(capsys):
    argv = ["kv", "--model", "google/gemma-3-1b-it", "--pipeline-parallel-size", "2", "--pp-layer-partition", "14,12",
            "--vram", "1", "--ctx", "4096"]
    rc, text = _text(argv, capsys)
    assert rc == 1
    # before: "weights alone 1.19 GiB on the largest pipeline stage (stage 1 of 2, 12 layers + the head)"
    assert ("on 1.00 GiB: does NOT fit: weights alone 1.29 GiB on the pipeline stage with the most weights (stage 0 of "
            "2, 14 layers + the embedding) > vLLM's share 942.08 MiB of 1.00 GiB") in text
    assert "Weights alone (1.29 GiB on the pipeline stage with the most: stage 0 of 2, 14 layers + the embedding)" in text
    assert "the verdict is the deciding stage's, the one left the least KV pool (stage 1 of 2, 12 layers + the head)" in text
    assert "1.19 GiB" not in text.split("\nnote:")[0].split("\non 1.00 GiB")[1]


# S1. Qwen3-32B: 8 KV heads x 128, k and v, fp8 = 2048 B a token a layer; stage 1 holds 44 layers: 44 x 2048 x 32768 =
# 2,952,790,016 B = 2.75 GiB (stage 0's 20 layers: 1.25 GiB, what the line gave). TP 2 halves the heads: 44 x 1024 x
# 16384 = 738,197,504 B = 704.00 MiB (stage 0: 320.00 MiB)
def test_with_the_flags_line_gives_the_deciding_stage_kv(capsys):
    _, text = _text(QWEN32 + ["--vram", "48", "--ctx", "32768"], capsys)
    assert "(KV 2.75 GiB on stage 1 of 2, 44 layers + the head)\n" in text  # before: "(KV 1.25 GiB)"
    _, text = _text(QWEN32 + ["--tensor-parallel-size", "2", "--vram", "24", "--ctx", "16384"], capsys)
    assert "(KV 704.00 MiB on stage 1 of 2, 44 layers + the head)\n" in text  # before: "(KV 320.00 MiB)"


# S4. vllm_refusal.py: before 0.12 and from 0.16 each worker is checked in turn and the first short of memory raises
def test_docs_say_which_worker_a_refusal_names():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "kv.md").read_text(encoding="utf-8")
    assert "A start refusal prints the smallest stage's memory" not in doc
    assert "the first worker short of memory" in doc


# D5. Qwen3-32B at 20,44 on 24 GiB: stage 1's weights 44,474,971,008 B (test_kv_kvo49) against a share of 0.92 x 24 GiB
# = 23,707,921,367 B leave a pool below -20,767,049,641 B; rank 0's pool is positive
def test_json_gives_the_deciding_stage_pool(capsys):
    r = _json(QWEN32 + ["--vram", "24", "--ctx", "4096"], capsys)
    assert r["fits"] is False and r["kv_capacity_bytes"] > 0  # the table's, rank 0's
    assert r["pp_deciding_stage"] == 1
    assert r["pp_deciding_kv_capacity_bytes"] < -20_767_049_641  # before: no such key


# B6. vLLM 0.12-0.15 check one request of the whole model (64 layers) against each stage's pool: at fp8 22,016 tokens
# are 64 x 2048 x 22016 = 2,885,681,152 B = 2.69 GiB. At the share 0.94 stage 1's pool is 2.23 GiB (too small, the
# reviewer's run); 0.95 adds 0.01 x 48 GiB = 491.52 MiB, 2.71 GiB: the suggested share is 0.95, and the flags fit
def test_pipeline_flags_hold_the_whole_model_check_of_vllm_0_13(capsys):
    argv = QWEN32 + ["--vram", "48", "--runtime-version", "0.13.0"]
    r = _json(argv + ["--ctx", "32768"], capsys)
    assert r["command"].endswith("--max-model-len 22016 --pipeline-parallel-size 2 --kv-cache-dtype fp8 "
                                 "--gpu-memory-utilization 0.95")  # before: 0.94, which vLLM 0.13 refuses
    rc, text = _text(argv + ["--ctx", "22016", "--kv-dtype", "fp8", "--gpu-memory-utilization", "0.95"], capsys)
    assert rc == 0 and "on 48.00 GiB (vLLM share 45.60 GiB): fits\n" in text
    rc, text = _text(argv + ["--ctx", "22016", "--kv-dtype", "fp8", "--gpu-memory-utilization", "0.94"], capsys)
    assert rc == 1 and "needs 2.69 GiB of KV cache, more than the available 2.23 GiB" in text
