"""fix35 items 2-3: review29's listed, unmended consistency nits in kv.

Item 2 (review29 item 8): check_parallelism refused a tensor_parallel_size above 1 by a hand-written runtime list
("--tensor-parallel-size is vLLM's and SGLang's") beside plan_checks.READ_BY, the table data_parallel_size's refusal
reads since 183208e4. Now tensor_parallel_size has its READ_BY row (vLLM, SGLang); 1 (one GPU) is what every runtime
runs and stays accepted everywhere (ONE_FOR_ALL), as before. Which values each runtime accepts and refuses is pinned
here as it was before the change (checked on the parent commit): only the refusal's wording for llama.cpp / Ollama
changed (the table's "does not read" message).

Item 3 (review29 item 11): Ollama's per-GPU reserve (MinimumMemory) was the overhead line "cuda_context" on Metal too,
printed "cuda context" (512 MiB, or 0 B in 0.12.4-0.12.6), where ggml-metal holds no CUDA context. Now the line is
named by backend where the reserve is computed (ollama.reserve_line): "metal_reserve" on Metal, "cuda_context" off it;
the bytes and the totals are as before."""
import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import plan_checks as PC
from gpu_garden.memory.llm import report
from gpu_garden.memory.llm.runtimes import ollama as OL

GiB = 1 << 30
MODEL = "Qwen/Qwen3-30B-A3B"   # 4 KV heads: TP 8 replicates them; 32 query heads, 48 layers
# (value, runtimes that accept it): the behaviour before this change, per runtime
TP_CASES = [
    (None, {"vllm", "sglang", "llama.cpp", "ollama"}),
    (1, {"vllm", "sglang", "llama.cpp", "ollama"}),
    (True, {"vllm", "sglang", "llama.cpp", "ollama"}),   # an int to Python; read as 1 before and after
    (2, {"vllm", "sglang"}),
    (4, {"vllm", "sglang"}),
    (32, {"vllm", "sglang"}),
    (64, set()),   # ux48: more GPUs than its 32 attention heads (vLLM: "must be divisible by tensor parallel size")
    (0, set()), (-1, set()), (65, set()), (1.0, set()), (2.0, set()), ("2", set()), (False, set()),
]


@pytest.mark.parametrize("value, accepted", TP_CASES, ids=[repr(v) for v, _ in TP_CASES])
def test_each_runtime_accepts_and_refuses_tensor_parallel_size_as_before(value, accepted):
    s = llm.describe(model=MODEL)
    for runtime in ("vllm", "sglang", "llama.cpp", "ollama"):
        knobs = {} if value is None else {"tensor_parallel_size": value}
        if runtime in accepted:
            res = llm.plan(s, runtime, ctx=8192, vram=80 * GiB, **knobs)
            assert res["tensor_parallel_size"] == (value or 1), runtime
        else:
            with pytest.raises(UserError, match="tensor.parallel.size"):
                llm.plan(s, runtime, ctx=8192, vram=80 * GiB, **knobs)


@pytest.mark.parametrize("runtime, tp, ok", [
    ("vllm", "2", True), ("sglang", "4", True), ("llama.cpp", "1", True), ("ollama", "1", True),
    ("llama.cpp", "2", False), ("ollama", "4", False), ("vllm", "0", False), ("llama.cpp", "0", False),
])
def test_the_cli_accepts_and_refuses_the_option_as_before(runtime, tp, ok, capsys):
    rc = cli.main(["kv", "--model", MODEL, "--runtime", runtime, "--ctx", "8192", "--vram", "80",
                   "--tensor-parallel-size", tp, "--json"])
    err = capsys.readouterr().err
    assert (rc == 0) == ok, err
    if not ok:
        assert "tensor-parallel-size" in err


def test_tensor_parallel_runtimes_come_from_read_by(monkeypatch):
    # the hand list ("vllm", "sglang") in check_parallelism is gone: the row is the one list (narrowed here, the
    # refusal follows it; with the hand list back, SGLang's TP 2 would still be accepted)
    row = next(r for r in PC.READ_BY if r[0] == "tensor_parallel_size")
    assert row[1:] == ("tensor_parallel_size", ("vllm", "sglang"))
    s = llm.describe(model=MODEL)
    assert llm.plan(s, "sglang", ctx=8192, vram=80 * GiB, tensor_parallel_size=2)["tensor_parallel_size"] == 2
    monkeypatch.setattr(PC, "READ_BY", tuple(r for r in PC.READ_BY if r is not row) + ((row[0], row[1], ("vllm",)),))
    with pytest.raises(UserError, match=r"^sglang does not read tensor_parallel_size \(--tensor-parallel-size, vllm only\)"):
        llm.plan(s, "sglang", ctx=8192, vram=80 * GiB, tensor_parallel_size=2)
    assert llm.plan(s, "sglang", ctx=8192, vram=80 * GiB, tensor_parallel_size=1)["tensor_parallel_size"] == 1


MiB = 1 << 20


@pytest.mark.parametrize("version, size", [("0.12.3", 512 * MiB), ("0.12.5", 0), ("0.12.7", 512 * MiB), ("0.29.0", 512 * MiB)])
def test_ollama_names_its_metal_reserve_by_backend(version, size):
    # METAL_MINIMUM's rows (512 MiB, none in 0.12.4-0.12.6, 512 again from 0.12.7-rc0), read in ollama.py
    s = llm.describe(model="qwen3:8b")
    metal = llm.plan(s, "ollama", ctx=8192, vram=24 * GiB, runtime_version=version, gpu_name="Apple M2 Pro")
    cuda = llm.plan(s, "ollama", ctx=8192, vram=24 * GiB, runtime_version=version, gpu_name="NVIDIA GeForce RTX 4090")
    assert "cuda_context" not in metal["overhead"] and metal["overhead"]["metal_reserve"] == size
    assert cuda["overhead"]["cuda_context"] == 457 * MiB and "metal_reserve" not in cuda["overhead"]
    lines = report.format_plan(metal).splitlines()
    assert not any(line.strip().startswith("cuda context") for line in lines)
    row = next(line for line in lines if line.strip().startswith("metal reserve"))
    assert row.endswith("Ollama's per-GPU minimum reserve on Metal (no CUDA context there)")
    assert OL.reserve_line(OL.parse_version(version), True) == ("metal_reserve", size)
    assert OL.reserve_line(OL.parse_version(version), False) == ("cuda_context", 457 * MiB)
