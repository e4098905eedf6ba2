"""Session 18, task fix18c: the kv findings of review18b. Each test failed on the commit before its mend (the commit
names the deliberate break that makes it fail again). Expected values from vLLM's source as cited at each test."""
from gpu_garden.memory.llm.runtimes import vllm_overheads as VO

GiB, MiB = 1 << 30, 1 << 20


def test_v0_capture_list_stops_at_256_before_0_6():
    # vllm/worker/model_runner.py: 0.4.3 and 0.5.5 (PyPI sdists) capture _BATCH_SIZES_TO_CAPTURE = [1, 2, 4] +
    # [8 * i for i in range(1, 33)] (up to 256 sequences); 0.6.0, 0.6.3 and 0.6.4 build range(1, 1025) and capture up
    # to _get_max_graph_batch_size(max_num_seqs)
    s = {"max_batched": 8192, "enforce_eager": False, "v1": False, "max_seqs": 512}
    assert VO.capture_size(dict(s, version=(0, 4, 3))) == 256
    assert VO.capture_size(dict(s, version=(0, 5, 5))) == 256
    assert VO.capture_size(dict(s, version=(0, 6, 0))) == 512
    assert VO.capture_size(dict(s, version=(0, 6, 3))) == 512
    # so 512 sequences on 0.4.3 hold the default list's 0.5 GiB of graphs, not twice that
    assert VO.graph_memory(dict(s, version=(0, 4, 3))) == 512 * MiB
    assert VO.graph_memory(dict(s, version=(0, 6, 3))) == 1024 * MiB
    # below 256 both capture up to max_num_seqs' padded size
    assert VO.capture_size(dict(s, version=(0, 4, 3), max_seqs=100)) == 104


def test_mamba_ssm_cache_dtype_values_are_refused_before_the_vllm_that_accepts_them():
    # review18b #9: vllm/config/cache.py MambaDType in the PyPI sdists: 0.10.0 has no --mamba-ssm-cache-dtype;
    # 0.10.1, 0.11.0 and 0.12.0 Literal["auto", "float32"]; 0.13.0, 0.14.0, 0.17.1, 0.20.0 and 0.21.0 add "float16";
    # 0.22.0 and 0.24.0 add "bfloat16"
    import pytest
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm import kv as llm
    s = llm.describe(model="Qwen/Qwen3.5-27B")
    for value, refused, accepted in (("float16", "0.12.0", "0.13.0"), ("bfloat16", "0.21.0", "0.22.0"),
                                     ("float32", "0.10.0", "0.10.1")):
        with pytest.raises(UserError, match=f"--mamba-ssm-cache-dtype {value}.*vLLM {accepted}"):
            llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, mamba_ssm_cache_dtype=value, runtime_version=refused)
        assert llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, mamba_ssm_cache_dtype=value, runtime_version=accepted)
    # no version given: the newest, which takes every value
    assert llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, mamba_ssm_cache_dtype="bfloat16")
    # auto is the default of every version that has the flag
    assert llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, mamba_ssm_cache_dtype="auto", runtime_version="0.10.1")
