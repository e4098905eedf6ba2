"""Session 18, regC: leak, other-process, host-ram and kv-cache rows mended on the unseen corpus (batches 1-62, a
regression set). Each log is modelled on the named public thread (machine lines and numbers as reported, paths and
prose rewritten); each test fails when its row goes or is turned the other way."""
from support.triage_event import last_event as _ev

# raullenchai/Rapid-MLX#2836 (a long-lived server: the decode output chain never materialised, live buffer handles grow)
RAPID_MLX_COUNT = ("$ rapid-mlx serve some-org/Qwen-MoE-4bit --host 127.0.0.1 --port 8002 --enable-prefix-cache --max-num-seqs 4\n"
                   "ERROR:rapid_mlx.scheduler:Error in batch generation step: [metal::malloc] Resource limit (499000) exceeded.\n"
                   "RuntimeError: [metal::malloc] Resource limit (499000) exceeded.\n")


def test_mlx_buffer_count_is_arrays_kept_alive():
    res, ev = _ev(RAPID_MLX_COUNT)
    assert ev["runtime"] == "mlx" and ev["numbers"] == {"buffer_count_limit": 499000}
    assert res["cause"] == "leak"
    assert ev["guide"]["id"] == "mlx"          # the guide that says mx.eval / mx.set_cache_limit
    assert "count, not bytes" in " ".join(ev["causes"][0]["evidence"])
