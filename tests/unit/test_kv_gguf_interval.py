"""rev11 B1: a Qwen3-Next / Qwen3.5 GGUF as llama.cpp's converter writes it (convert_hf_to_gguf.py: head_count_kv one
number for every layer, full_attention_interval apart) is typed by the interval, as llama.cpp's loader types it
(llama-model.cpp at 69d8e4be, LLM_ARCH_QWEN3NEXT / QWEN35 / QWEN35MOE: recurrent_layer_arr[i] = (i + 1) % interval != 0,
interval 4 when the key is absent). Before the change every layer read as full attention: 4x the KV layers."""
import pytest

from gpu_garden.memory.llm.spec import FULL, MAMBA


def _gguf(path, arch, interval=None, layers=8):
    gguf = pytest.importorskip("gguf")
    import numpy as np
    w = gguf.GGUFWriter(str(path), arch)
    for add, v in ((w.add_block_count, layers), (w.add_context_length, 32768), (w.add_embedding_length, 256),
                   (w.add_feed_forward_length, 512), (w.add_head_count, 4), (w.add_head_count_kv, 2),
                   (w.add_key_length, 64), (w.add_value_length, 64), (w.add_vocab_size, 1000), (w.add_file_type, 1)):
        add(v)
    w.add_uint32(f"{arch}.ssm.state_size", 128)  # the DeltaNet state keys the converter writes (llama.cpp reads them)
    if interval is not None:
        w.add_uint32(f"{arch}.full_attention_interval", interval)
    w.add_tensor("token_embd.weight", np.zeros((1000, 256), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return str(path)


@pytest.mark.parametrize("arch", ["qwen3next", "qwen35", "qwen35moe"])
def test_the_interval_types_the_layers(tmp_path, arch):
    from gpu_garden.memory.llm import spec as llm_spec
    s = llm_spec.load_gguf(_gguf(tmp_path / "a.gguf", arch, interval=4))
    # layers 3 and 7 ((i + 1) % 4 == 0) keep a KV cache; the other six are recurrent (ssm.state_size given: MAMBA)
    assert s.layer_kinds == [MAMBA, MAMBA, MAMBA, FULL, MAMBA, MAMBA, MAMBA, FULL]
    # 2 layers x 2 KV heads x (64 + 64) = 512 K and V values a token, not 8 x 256 = 2048
    assert sum(1 for k in s.layer_kinds if k == FULL) * s.kv_elems_per_token_layer() == 512


def test_the_interval_defaults_to_four_and_other_values_are_read(tmp_path):
    from gpu_garden.memory.llm import spec as llm_spec
    assert llm_spec.load_gguf(_gguf(tmp_path / "d.gguf", "qwen35")).layer_kinds.count(FULL) == 2        # 8 / 4
    assert llm_spec.load_gguf(_gguf(tmp_path / "two.gguf", "qwen35", interval=2)).layer_kinds.count(FULL) == 4


def test_other_architectures_keep_every_layer(tmp_path):
    from gpu_garden.memory.llm import spec as llm_spec
    s = llm_spec.load_gguf(_gguf(tmp_path / "l.gguf", "llama", interval=4))  # the key means nothing for llama
    assert s.layer_kinds == [FULL] * 8
