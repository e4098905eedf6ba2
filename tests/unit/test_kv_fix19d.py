"""fix19d: the second code review's kv findings (ollama/ollama sources read at the tags named in each test)."""
from support.cli_run import run as _run

Q05 = ["kv", "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--runtime", "ollama"]


# 1. Ollama >= 0.30 passes num_batch to llama-server as -b and -ub (llm/llama_server.go at v0.30.7): --ubatch is read
# there; the older estimate keeps 512 and says so.
def test_ollama_ubatch_is_read_from_030(capsys):
    rc, res, err = _run(Q05 + ["--runtime-version", "0.30.7", "--vram", "8", "--ctx", "8192", "--ubatch", "256",
                               "--json"], capsys)
    assert rc == 0, err
    rc2, auto, _ = _run(Q05 + ["--runtime-version", "0.30.7", "--vram", "8", "--ctx", "8192", "--json"], capsys)
    # 8192 tokens: the scheduler's own batch is 1024; 256 asked gives a compute buffer a quarter of its size or less
    assert res["overhead"]["compute_buffer"] * 3 < auto["overhead"]["compute_buffer"]
    assert {"kind": "param", "name": "num_batch", "value": "256"} in [
        {k: f[k] for k in ("kind", "name", "value")} for f in res["flags"]]
    rc, old, err = _run(Q05 + ["--runtime-version", "0.29.0", "--vram", "8", "--ubatch", "256", "--json"], capsys)
    assert rc == 0 and any(n.startswith("num_batch 256: read for Ollama 0.30 and later") for n in old["notes"])
