"""kv-accuracy round 76 (task ellm54): rows kv refused as unknown models although their architecture is one kv models
(regression rows, refused rather than scored at first sight). Four descriptions are built in from copies of their
config.json (Nanbeige4.1-3B, Olmo-3-7B, Qwen3-VL-2B, and Qwen3-VL-Embedding-2B read as Qwen3-VL-2B), and Ollama's
command-r:35b-v0.1-* tags name the built-in Command-R-v01. Every expected figure is worked here by hand from the config
fields or from the line the runtime printed; each test fails with its description or table entry removed."""
import json
import sys
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

MiB = 2**20


def _row(rid):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from llm_common import DATA
    return next(r for r in json.loads(DATA.read_text())["rows"] if r["id"] == rid)


def test_nanbeige41_3b_is_a_llama_decoder_of_32_layers_4_kv_heads():
    s = llm.describe(model="Nanbeige/Nanbeige4.1-3B")
    assert s.name == "Nanbeige4.1-3B" and s.n_layers == 32 and s.n_kv_heads == 4 and s.head_dim_k == 128
    assert s.max_ctx == 262144
    # untied: 2 x 166144 x 2560 + 32 x (q/o 2560 x 2560 x 2, k/v 2560 x 512 x 2, MLP 3 x 2560 x 10496, 2 norms) + norm
    layer = 2 * 2560 * 2560 + 2 * 2560 * 512 + 3 * 2560 * 10496 + 2 * 2560
    assert s.params == 2 * 166144 * 2560 + 32 * layer + 2560 == 3_933_637_120


def test_nanbeige41_3b_vllm_tokens_from_the_printed_kv_memory():
    # vLLM 0.11.2 (augmented-mcqa Nanbeige_Nanbeige4_1-3B_6286317.out): 'Available KV cache memory: 33.64 GiB',
    # 'GPU KV cache size: 551,216 tokens': 65,536 bytes a token = 32 layers x 2 x 4 KV heads x 128 x 2 bytes
    r = llm.plan(llm.describe(model="Nanbeige/Nanbeige4.1-3B"), "vllm", ctx=262144, weights_dtype="bf16",
                 vram=48 * GiB, gpu_name="NVIDIA RTX A6000", runtime_version="0.11.2")
    assert r["kv_per_token"] == 32 * 2 * 4 * 128 * 2 == 65536
    assert abs(33.64 * GiB / r["kv_per_token"] - 551_216) < 16 * 0.005 * GiB / 65536 + 16


def test_olmo3_7b_has_three_sliding_layers_to_one_full_and_mha():
    s = llm.describe(model="allenai/Olmo-3-7B-Instruct")
    assert s.name == "Olmo-3-7B" and not s.generic  # olmo3 in spec.KNOWN_ARCHS: its layer_types read, no generic note
    assert s.layer_kinds == (["sliding"] * 3 + ["full"]) * 8 and s.sliding_window == 4096
    assert s.n_kv_heads == 32 and s.head_dim_k == 128 and s.max_ctx == 65536
    # 7,298,011,136 on the model page, less the q_norm / k_norm weights kv does not count for olmo3 (32 x 2 x 4096)
    assert s.params == 7_298_011_136 - 32 * 2 * 4096


def test_olmo3_7b_vllm_tokens_from_the_printed_kv_memory():
    # vLLM 0.11.2 (augmented-mcqa allenai_Olmo-3-7B-Instruct_6286319.out): 'Available KV cache memory: 28.02 GiB',
    # 'GPU KV cache size: 57,376 tokens' = 28.02 GiB / (32 layers x 2 x 32 x 128 x 2 = 524,288 bytes), whole blocks of 16
    r = llm.plan(llm.describe(model="allenai/Olmo-3-7B-Instruct"), "vllm", ctx=32768, weights_dtype="bf16",
                 vram=48 * GiB, gpu_name="NVIDIA RTX A6000", runtime_version="0.11.2")
    assert r["kv_per_token"] == 524_288
    assert int(28.02 * GiB // 524_288) // 16 * 16 == 57_376


def test_qwen3_vl_embedding_2b_reads_as_qwen3_vl_2b():
    s = llm.describe(model="Qwen/Qwen3-VL-Embedding-2B")
    assert s.name == "Qwen3-VL-2B" and s.n_layers == 28 and s.n_kv_heads == 8 and s.head_dim_k == 128
    assert s.vision["depth"] == 24 and s.vision["out_hidden_size"] == 2048
    # tied: 151936 x 2048 + 28 x (q/o 2048 x 2048 x 2, k/v 2048 x 1024 x 2, MLP 3 x 2048 x 6144, 2 norms of 2048,
    # q/k norms of 128) + the final norm
    layer = 2 * 2048 * 2048 + 2 * 2048 * 1024 + 3 * 2048 * 6144 + 2 * 2048 + 2 * 128
    assert s.params == 151936 * 2048 + 28 * layer + 2048 == 1_720_574_976
    # vLLM 0.11.0 (zjpzhao/vllm-qwen3vl-cu118-t4 verify_qwen3vl_cutlass.log): 8.21 GiB for 76,848 tokens,
    # 114,688 bytes a token = 28 x 2 x 8 x 128 x 2
    assert round(76_848 * 28 * 2 * 8 * 128 * 2 / GiB, 2) == 8.21


def test_ollama_command_r_v01_tag_is_the_built_in_command_r_v01():
    s = llm.describe(model="command-r:35b-v0.1-q4_0")
    assert s.name == "Command-R-v01" and s.quant == "Q4_0" and s.ollama
    assert s.n_layers == 40 and s.n_kv_heads == 64  # 'n_head_kv = 64', 'n_layer = 40' in the run's log
    # 'KV self size = 2560.00 MiB' at n_ctx 2048: 40 x 2 x 64 x 128 x 2 bytes x 2048 cells
    assert 40 * 2 * 64 * 128 * 2 * 2048 == 2560 * MiB
    with pytest.raises(UserError, match="only command-r:35b-v0.1-<quant> is read"):
        llm.describe(model="command-r:35b")  # a bare size tag: which build the library's default was is not read


def test_the_g29_command_r_rows_name_the_v01_tag_the_log_loads():
    # ollama-serve.log at e9bb54b0: general.name = c4ai-command-r-v01, general.file_type = 2 ('model ftype = Q4_0')
    for rid in ("ollama-g29-commandr-35b-q4_0-l4-2k-37of41", "ollama-g29-commandr-35b-q4_0-l4-2k-36of41-after-swap"):
        assert _row(rid)["input"]["model"] == "command-r:35b-v0.1-q4_0"
