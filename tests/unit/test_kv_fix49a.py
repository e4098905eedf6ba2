"""fix49a: review rev23's findings on kvo49's `gpu-garden kv` changes (pipeline-parallel verdict, printed command).
B1 a 'weights alone' verdict names the stage holding the most weights, not the deciding (least pool) stage;
B2 an Unsloth UD- type keeps its prefix in the printed -hf / hf.co name; B3 -hf loads the repo's projector unless
--no-mmproj (common/arg.cpp, the -hf help); B4 kv's own build names (Q4_K_M_QKV16) never reach the run line;
S1 the "with the flags" KV is the deciding stage's; S2 Ollama pulls a Hub repo only by its hf.co/ name; S3 the name
to run is the Modelfile's FROM beside its PARAMETER lines, 'an IQ4_XS'; S4 docs: which worker a refusal names;
D5 --json gives the deciding stage's pool."""
from pathlib import Path

from support.cli_run import json_out, text, unwrap
from gpu_garden.memory.llm import run_model as RM


def _text(argv, capsys):
    """kv's text with term.py's wrapping undone (support.cli_run.unwrap): these pin whole lines."""
    rc, out = text(argv, capsys)
    return rc, unwrap(out)


QWEN32 = ["kv", "--model", "Qwen/Qwen3-32B", "--pipeline-parallel-size", "2", "--pp-layer-partition", "20,44"]
BART = "bartowski/Qwen2.5-7B-Instruct-GGUF"
UNS = "unsloth/Qwen3-8B-GGUF"



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


# B2. Unsloth names its files and tags UD-Q4_K_XL; kv kept the prefix for a tag and dropped it for --weights-dtype
def test_unsloth_ud_prefix_kept_in_the_printed_name(capsys):
    r = json_out(["kv", "--model", f"{UNS}:Q8_0", "--runtime", "llama.cpp", "--weights-dtype", "UD-Q4_K_XL"], capsys)
    assert r["command"].startswith(f"llama-server -hf {UNS}:UD-Q4_K_XL -c ")  # before: :Q4_K_XL
    r = json_out(["kv", "--model", f"{UNS}:Q8_0", "--runtime", "ollama", "--weights-dtype", "UD-Q4_K_XL"], capsys)
    assert r["model_to_run"]["command"] == f"ollama run hf.co/{UNS}:UD-Q4_K_XL"
    # the same file named without its prefix over a UD- tag: the tag is kept (the comparison strips UD-)
    r = json_out(["kv", "--model", f"{UNS}:UD-Q4_K_XL", "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_XL"], capsys)
    assert r["command"].startswith(f"llama-server -hf {UNS}:UD-Q4_K_XL -c ")


# B3. llama.cpp's -hf help (common/arg.cpp): "mmproj is also downloaded automatically if available. to disable, add
# --no-mmproj". Gemma-3-4B's figures leave the projector out unless --mmproj prices it.
def test_hf_pull_keeps_the_projector_off_or_loads_the_priced_one(capsys):
    base = ["kv", "--model", "ggml-org/gemma-3-4b-it-GGUF:Q4_K_M", "--runtime", "llama.cpp", "--vram", "6", "--ctx", "8192"]
    r = json_out(base, capsys)
    assert r["command"].endswith(" --no-mmproj")  # before: the projector loaded beside a verdict without it
    r = json_out(base + ["--mmproj"], capsys)
    assert "--mmproj" not in r["command"] and "--no-mmproj" not in r["command"]  # before: "--mmproj MMPROJ.gguf" too
    assert r["command"].startswith("llama-server -hf ggml-org/gemma-3-4b-it-GGUF:Q4_K_M -c 8192 ")
    r = json_out(["kv", "--model", f"{UNS}:Q8_0", "--runtime", "llama.cpp"], capsys)
    assert "mmproj" not in r["command"]  # a text model: no projector to keep off


# B4. phi4-reasoning:14b is the library's Q4_K_M build with attn_qkv kept in F16 (kv names it Q4_K_M_QKV16)
def test_library_build_variant_name_never_printed(capsys):
    rc, text = _text(["kv", "--model", "phi4-reasoning:14b", "--weights-dtype", "q4_K_M"], capsys)
    assert "QKV16" not in text  # before: "loads the library's Q4_K_M_QKV16 build ...; run its Q4_K_M tag"
    assert ("\n  FROM phi4-reasoning:14b  (the library's Q4_K_M build, the type these figures are for, but sized as a "
            "plain Q4_K_M file: this build differs (its fused attn_qkv kept in F16); leave out --weights-dtype to size "
            "the build itself)") in text
    rc, text = _text(["kv", "--model", "mistral-small3.1:24b", "--weights-dtype", "q4_K_M"], capsys)
    assert "_MISTRAL3" not in text and "(its output tensor kept at the base type)" in text
    r = json_out(["kv", "--model", "phi4-reasoning:14b", "--weights-dtype", "q8_0"], capsys)
    assert r["model_to_run"]["why"].startswith("ollama run phi4-reasoning:14b loads the library's Q4_K_M build, not")


# S1. Qwen3-32B: 8 KV heads x 128, k and v, fp8 = 2048 B a token a layer; stage 1 holds 44 layers: 44 x 2048 x 32768 =
# 2,952,790,016 B = 2.75 GiB (stage 0's 20 layers: 1.25 GiB, what the line gave). TP 2 halves the heads: 44 x 1024 x
# 16384 = 738,197,504 B = 704.00 MiB (stage 0: 320.00 MiB)
def test_with_the_flags_line_gives_the_deciding_stage_kv(capsys):
    _, text = _text(QWEN32 + ["--vram", "48", "--ctx", "32768"], capsys)
    assert "(KV 2.75 GiB on stage 1 of 2, 44 layers + the head)\n" in text  # before: "(KV 1.25 GiB)"
    _, text = _text(QWEN32 + ["--tensor-parallel-size", "2", "--vram", "24", "--ctx", "16384"], capsys)
    assert "(KV 704.00 MiB on stage 1 of 2, 44 layers + the head)\n" in text  # before: "(KV 320.00 MiB)"


# S2 / S3. Ollama pulls a Hub GGUF as hf.co/USER/REPO[:TYPE] (huggingface/hub-docs docs/hub/ollama.md); `ollama run
# NAME` applies no PARAMETER line, which belongs in a Modelfile beside FROM NAME
def test_ollama_hub_name_needs_hf_co_and_is_the_modelfiles_from(capsys):
    argv = ["kv", "--model", f"{BART}:Q4_K_M", "--runtime", "ollama", "--weights-dtype", "q8_0", "--ctx", "8192"]
    r = json_out(argv, capsys)
    assert r["model_to_run"]["model"] == f"hf.co/{BART}:Q8_0"
    assert r["model_to_run"]["why"] == (f"the Q8_0 file these figures are for; Ollama pulls a Hub repo only as "
                                        f"hf.co/USER/REPO[:TYPE], not as {BART}:Q4_K_M")  # before: "... pulls the Q4_K_M file"
    _, text = _text(argv, capsys)
    assert (f"\n  FROM hf.co/{BART}:Q8_0  (the Q8_0 file these figures are for; Ollama pulls a Hub repo only as "
            f"hf.co/USER/REPO[:TYPE], not as {BART}:Q4_K_M)\n  PARAMETER num_ctx 8192\n  (the FROM and PARAMETER lines "
            f"are a Modelfile: `ollama create NAME -f Modelfile`, then `ollama run NAME`; `ollama run hf.co/{BART}:Q8_0` alone "
            "applies no PARAMETER line)\n") in text
    # no --weights-dtype: the name given still pulls nothing (before: no line at all)
    r = json_out(["kv", "--model", BART, "--runtime", "ollama"], capsys)
    assert r["model_to_run"]["command"] == f"ollama run hf.co/{BART}"
    assert "model_to_run" not in json_out(["kv", "--model", f"hf.co/{BART}", "--runtime", "ollama"], capsys)


def test_article_before_a_type():
    assert RM._a("IQ4_XS") == "an IQ4_XS" and RM._a("F16") == "an F16" and RM._a("MXFP4") == "an MXFP4"
    assert RM._a("Q8_0") == "a Q8_0" and RM._a("BF16") == "a BF16" and RM._a("UD-Q4_K_XL") == "a UD-Q4_K_XL"


def test_library_tag_hub_advice_reads_an_f16_file(capsys):
    r = json_out(["kv", "--model", "qwen2.5:7b", "--weights-dtype", "f16"], capsys)
    assert r["model_to_run"]["why"].endswith("or an F16 file from the Hub: ollama run hf.co/USER/REPO-GGUF:F16")


# S4. vllm_refusal.py: before 0.12 and from 0.16 each worker is checked in turn and the first short of memory raises
def test_docs_say_which_worker_a_refusal_names():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "kv.md").read_text(encoding="utf-8")
    assert "A start refusal prints the smallest stage's memory" not in doc
    assert "the first worker short of memory" in doc


# D5. Qwen3-32B at 20,44 on 24 GiB: stage 1's weights 44,474,971,008 B (test_kv_kvo49) against a share of 0.92 x 24 GiB
# = 23,707,921,367 B leave a pool below -20,767,049,641 B; rank 0's pool is positive
def test_json_gives_the_deciding_stage_pool(capsys):
    r = json_out(QWEN32 + ["--vram", "24", "--ctx", "4096"], capsys)
    assert r["fits"] is False and r["kv_capacity_bytes"] > 0  # the table's, rank 0's
    assert r["pp_deciding_stage"] == 1
    assert r["pp_deciding_kv_capacity_bytes"] < -20_767_049_641  # before: no such key


# B5. vLLM's GGUF docs (docs/features/quantization/gguf.md): `vllm serve unsloth/Qwen3-0.6B-GGUF:Q4_K_M --tokenizer
# Qwen/Qwen3-0.6B`; a GGUF repo alone has no config.json ("No supported config format found")
def test_gguf_repo_on_vllm_is_served_as_repo_type_with_the_base_tokenizer(capsys):
    r = json_out(["kv", "--model", f"{BART}:Q8_0", "--runtime", "vllm"], capsys)
    # before: "vllm serve MODEL" and no note, the figures sized for the Q8_0 file
    assert r["command"].startswith(f"vllm serve {BART}:Q8_0 --tokenizer Qwen/Qwen2.5-7B-Instruct --max-model-len ")
    assert any(n.startswith(f"'{BART}:Q8_0' is a GGUF repo, with no config.json for vLLM to read") for n in r["notes"])
    r = json_out(["kv", "--model", BART, "--runtime", "vllm"], capsys)
    assert r["command"].startswith(f"vllm serve {BART}:Q4_K_M --tokenizer ")  # before: "vllm serve {BART}" (no config)
    r = json_out(["kv", "--model", BART, "--runtime", "sglang"], capsys)
    assert "--model-path MODEL " in r["command"]  # before: --model-path {BART}
    assert any("no config.json for SGLang to read" in n for n in r["notes"])


# B6. vLLM 0.12-0.15 check one request of the whole model (64 layers) against each stage's pool: at fp8 22,016 tokens
# are 64 x 2048 x 22016 = 2,885,681,152 B = 2.69 GiB. At the share 0.94 stage 1's pool is 2.23 GiB (too small, the
# reviewer's run); 0.95 adds 0.01 x 48 GiB = 491.52 MiB, 2.71 GiB: the suggested share is 0.95, and the flags fit
def test_pipeline_flags_hold_the_whole_model_check_of_vllm_0_13(capsys):
    argv = QWEN32 + ["--vram", "48", "--runtime-version", "0.13.0"]
    r = json_out(argv + ["--ctx", "32768"], capsys)
    assert r["command"].endswith("--max-model-len 22016 --pipeline-parallel-size 2 --kv-cache-dtype fp8 "
                                 "--gpu-memory-utilization 0.95")  # before: 0.94, which vLLM 0.13 refuses
    rc, text = _text(argv + ["--ctx", "22016", "--kv-dtype", "fp8", "--gpu-memory-utilization", "0.95"], capsys)
    assert rc == 0 and "on 48.00 GiB (vLLM share 45.60 GiB): fits\n" in text
    rc, text = _text(argv + ["--ctx", "22016", "--kv-dtype", "fp8", "--gpu-memory-utilization", "0.94"], capsys)
    assert rc == 1 and "needs 2.69 GiB of KV cache, more than the available 2.23 GiB" in text
