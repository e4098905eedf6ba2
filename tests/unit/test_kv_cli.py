"""The kv subcommand's pipeline-parallel flags and its KV cache default, through the CLI (figures from batch 23's
vLLM 0.19.0 H100 logs, llm-d-planner accuracy/results/v0.19.0/logs; see test_llm_batch23.py)."""
import json

import pytest

from gpu_garden.memory import cli

GiB = 1 << 30
H100 = ["--vram", "79.19", "--gpu-memory-utilization", "0.95", "--gpu-name", "NVIDIA H100 80GB HBM3",
        "--runtime-version", "0.19.0", "--ctx", "8192", "--json"]
LLAMA = ["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct"]


def _run(argv, capsys):
    rc = cli.main(argv)
    out = capsys.readouterr().out
    return rc, json.loads(out)


def test_pipeline_parallel_size_reaches_the_plan(capsys):
    # meta-llama-llama-3-1-8b---h100-80gb--tp1pp2dp1--8192.log: rank 0 'Model loading took 7.51 GiB', 1,075,312 tokens
    # (the whole model, without the flag: 14.96 GiB and 481,232 tokens)
    rc, r = _run(LLAMA + H100 + ["--pipeline-parallel-size", "2"], capsys)
    assert rc == 0
    assert len(r["pp_stages"]) == 2
    assert r["weights"] / GiB == pytest.approx(7.51, rel=0.015)
    assert r["kv_capacity_tokens"] == pytest.approx(1075312, rel=0.005)


def test_pp_layer_partition_moves_layers_to_stage_0(capsys):
    # 20 + 12 layers instead of vLLM's 16 + 16: stage 0 holds four more of Llama-3.1-8B's decoder layers, each
    # 4096 x (4096 + 1024 + 1024 + 4096) attention + 3 x 4096 x 14336 MLP + 2 x 4096 norm values in bf16
    _, even = _run(LLAMA + H100 + ["--pipeline-parallel-size", "2"], capsys)
    _, skew = _run(LLAMA + H100 + ["--pipeline-parallel-size", "2", "--pp-layer-partition", "20,12"], capsys)
    layer = 4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336 + 2 * 4096
    assert skew["weights"] - even["weights"] == pytest.approx(4 * layer * 2, rel=1e-5)
    assert [s["stage_layers"] for s in skew["pp_stages"]] == [20, 12]


@pytest.mark.parametrize("extra", [["--pipeline-parallel-size", "2", "--pp-layer-partition", "20,20"],
                                   ["--pp-layer-partition", "16,16"],
                                   ["--pipeline-parallel-size", "2", "--runtime", "ollama"]])
def test_bad_pipeline_flags_are_one_line_errors(extra, capsys):
    assert cli.main(LLAMA + ["--ctx", "8192", "--vram", "80"] + extra) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_kv_dtype_default_follows_the_model_dtype_in_vllm(capsys):
    # meta-llama-llama-3--h100-80gb--tp1pp1dp1--8192-dtf32.log (--dtype float32, --kv-cache-dtype auto): fp32 cache
    _, r = _run(LLAMA + H100 + ["--weights-dtype", "fp32"], capsys)
    assert r["kv_dtype"] == "f32"
    _, r16 = _run(LLAMA + H100 + ["--weights-dtype", "fp32", "--kv-dtype", "f16"], capsys)
    assert r16["kv_dtype"] == "f16"
    assert r["kv_per_token"] == 32 * 8 * 128 * 2 * 4   # 32 layers x 8 KV heads x 128 x (K, V) x 4 bytes
    assert r16["kv_per_token"] == 32 * 8 * 128 * 2 * 2


def test_kv_dtype_default_elsewhere_is_f16(capsys):
    _, r = _run(LLAMA + ["--vram", "24", "--ctx", "8192", "--json"], capsys)                 # bf16 model, vLLM auto
    assert r["kv_dtype"] == "f16"
    _, r = _run(LLAMA + ["--vram", "24", "--ctx", "8192", "--json", "--runtime", "llama.cpp", "--weights-dtype", "fp32"],
                capsys)
    assert r["kv_dtype"] == "f16"                                                            # llama.cpp -ctk f16


def test_every_spelling_of_the_default_follows_the_model_dtype(capsys):
    # "auto" (vLLM's own word) and "default" mean the same as leaving --kv-dtype out
    for word in ("auto", "default"):
        _, r = _run(LLAMA + H100 + ["--weights-dtype", "fp32", "--kv-dtype", word], capsys)
        assert r["kv_dtype"] == "f32"


QWEN_TP2 = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2"] + H100


def test_nccl_nvls_by_name_and_by_flag(capsys):
    # qwen-qwen2-5-7b-instruct--h100-80gb--tp2pp1dp1--8192.log: 'non-torch forward increase memory' 2.06-2.11 GiB at
    # TP 2 on H100 SXM (NCCL's NVLS buffers); NCCL's buffers alone are 0.25 (vllm#13061's TP worker)
    _, auto = _run(QWEN_TP2, capsys)
    assert 2.05 <= auto["overhead"]["non_torch"] / GiB <= 2.15
    assert any("--nccl-nvls off" in n for n in auto["notes"])
    _, off = _run(QWEN_TP2 + ["--nccl-nvls", "off"], capsys)
    assert off["overhead"]["non_torch"] / GiB == pytest.approx(0.25, abs=0.01)
    assert (off["kv_capacity_bytes"] - auto["kv_capacity_bytes"]) / GiB == pytest.approx(2.1 - 0.25, abs=0.02)
    _, a100 = _run(["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2", "--vram", "79.15",
                    "--gpu-name", "NVIDIA A100-SXM4-80GB", "--runtime-version", "0.19.0", "--ctx", "8192", "--json",
                    "--nccl-nvls", "on"], capsys)
    assert 2.05 <= a100["overhead"]["non_torch"] / GiB <= 2.15


def test_bad_nccl_nvls_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(QWEN_TP2 + ["--nccl-nvls", "maybe"])
    assert e.value.code == 2
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm import kv as llm
    with pytest.raises(UserError):
        llm.plan(llm.describe(model="Qwen2.5-7B"), "vllm", ctx=8192, tensor_parallel_size=2, nccl_nvls="maybe")


def test_tensor_split_is_parsed_once_by_the_plan(capsys):
    # the CLI hands llama.cpp's -ts string to the plan, which reads "3,1" and "3/1" alike and refuses a bad one with
    # its own message (argparse's type= said "invalid <lambda> value")
    base = LLAMA + ["--runtime", "llama.cpp", "--ctx", "8192", "--vram", "24", "--json"]
    _, comma = _run(base + ["--tensor-split", "3,1"], capsys)
    _, slash = _run(base + ["--tensor-split", "3/1"], capsys)
    assert comma["weights"] == slash["weights"] and comma["total"] == slash["total"]
    assert cli.main(base + ["--tensor-split", "3,x"]) == 2
    err = capsys.readouterr().err.strip()
    assert "-ts proportions" in err and "lambda" not in err and len(err.splitlines()) == 1


def test_pipeline_parallel_refusal_names_the_runtime(capsys):
    # SGLang has a --pp-size of its own: the message says kv does not model it, rather than calling the flag vLLM's
    assert cli.main(LLAMA + ["--ctx", "8192", "--vram", "80", "--runtime", "sglang", "--pipeline-parallel-size", "2"]) == 2
    err = capsys.readouterr().err
    assert "not sglang" in err and "--pp-size is not modelled" in err


@pytest.mark.parametrize("model, runtime", [("qwen3:8b", "ollama"), ("gemma3:12b", "ollama"),
                                            ("Qwen/Qwen3-8B", "vllm"), ("Qwen3-8B", "vllm")])
def test_runtime_defaults_to_ollama_for_an_ollama_tag(model, runtime, capsys):
    """An Ollama library tag names Ollama's Q4_K_M build: without --runtime it is planned for Ollama, not as a
    `vllm serve` of a GGUF quant; a repo id or built-in name keeps vLLM."""
    _, r = _run(["kv", "--model", model, "--vram", "24", "--json"], capsys)
    assert r["runtime"] == runtime


def test_explicit_runtime_wins_over_the_tag(capsys):
    _, r = _run(["kv", "--model", "qwen3:8b", "--runtime", "vllm", "--vram", "24", "--json"], capsys)
    assert r["runtime"] == "vllm"


def test_lora_flags_reach_the_plan(capsys):
    # vLLM --enable-lora sizes max_loras slots of rank x (input + output) per projection at load. Qwen3-4B per layer:
    # q 2560+4096, k/v 2560+1024 each, o 4096+2560, gate/up/down 2560+9728 each = 57344 values per rank; 36 layers, bf16
    base = ["kv", "--model", "Qwen3-4B", "--ctx", "8192", "--runtime", "vllm", "--runtime-version", "0.10.0", "--json"]
    _, plain = _run(base, capsys)
    _, lora = _run(base + ["--max-lora-rank", "16", "--max-loras", "4"], capsys)
    assert lora["weights"] - plain["weights"] == 57344 * 16 * 4 * 36 * 2
    assert "--enable-lora --max-lora-rank 16 --max-loras 4" in lora["command"]


def test_quant_skip_flag_keeps_the_named_modules_in_16_bits(capsys):
    # Unsloth's Qwen3-4B-2507 bnb-4bit with the llm_int8_skip_modules its log prints and ART's rank 8: vLLM printed
    # "Model loading took 3.4153 GiB" (every matmul in 4 bits: 2.53)
    skip = ("embed_tokens,embedding,lm_head,multi_modal_projector,merger,modality_projection,model.layers.6.self_attn,"
            "model.layers.0.self_attn,model.layers.35.mlp,model.layers.34.mlp,model.layers.3.self_attn,model.layers.5.mlp,"
            "model.layers.3.mlp,model.layers.6.mlp,model.layers.1.mlp,model.layers.2.mlp")
    _, r = _run(["kv", "--model", "unsloth/qwen3-4b-instruct-2507-unsloth-bnb-4bit", "--runtime", "vllm", "--ctx", "8192",
                 "--weights-dtype", "bnb-4bit", "--runtime-version", "0.8.5", "--vllm-entrypoint", "unsloth",
                 "--max-lora-rank", "8", "--quant-skip", skip, "--json"], capsys)
    assert r["weights"] / GiB == pytest.approx(3.4153, rel=0.01)


def test_mtp_tokens_flag_reaches_the_plan(capsys):
    # sostrowsk/dgx-spark-local-llm qwen38-int4.log (vLLM 0.25.1, W4A16, MTP 3, vision tower loaded): 'Model loading
    # took 18.5 GiB memory'; without the MTP module in the weights kv would give 17.32 GiB (-6.4 %). (Until round 58
    # this held syv-ai/qwen38-27b-rtx3090#39's 1.56 GiB pool, a run of single-user/start_qwen.sh, which passes
    # --language-model-only: see test_llm_batch27 and kv-accuracy round 58.)
    base = ["kv", "--model", "Qwen/Qwen3.8-27B", "--runtime", "vllm", "--ctx", "262144", "--weights-dtype", "w4a16",
            "--vram", "121.63", "--gpu-memory-utilization", "0.85", "--max-num-seqs", "32", "--gpu-name", "NVIDIA GB10",
            "--runtime-version", "0.25.1", "--json"]
    _, r = _run(base + ["--mtp-tokens", "3"], capsys)
    assert r["weights"] / GiB == pytest.approx(18.5, rel=0.03)
    assert '"num_speculative_tokens":3' in r["command"]
