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
