"""Triage round 106 (task tune106: batches 549, 556 and 557 after first sight), written from the messages' own formats:
- PyTorch's message with its capacity sentence cut by the quoter's ellipsis right after "GPU N has" ("Tried to allocate N.
  GPU 0 has ... F is free."): the free figure is read, after PyTorch's type and from a line opening at the request.
- A vLLM frame quoted relative to its package ("at model_executor/layers/utils.py:98  default_unquantized_gemm") names vLLM,
  and PyTorch's cut message raised in such a layer's forward code reads activations (the pass's working tensors), not in a
  weight loader of the same module.
- Ollama's offload record placing no layer on the GPU while its own compute-graph estimate is over the GPU's available memory
  (layers.offload=0, memory.graph.full over memory.available) is a failure, activations; the same record with the graph
  under the memory, or with layers placed, is not; a record broken over lines after "msg=offload" is joined.
The sizes, paths, hosts and lines around them are made up in the messages' layout; the expected values are worked out by hand."""

from gpu_garden.memory.triage import other_patterns as OP
from gpu_garden.memory.triage import other_runtimes as ORT
from gpu_garden.memory.triage import runtime_markers as RM
from gpu_garden.memory.triage import torch_readers as TR
from gpu_garden.memory.triage.fact_patterns import FACTS

from support.triage_event import fired, kinds as _kinds, read as _read, top as _top  # (cause, kind, runtime, device kind, numbers)
from support.regex_time import assert_each_fast
from support.regex_time import cpu_limit, cpu_now

_GIB = 1024 ** 3
_MIB = 1024 ** 2


# --- the free figure after "GPU N has ..." ---

def test_free_after_gpu_has_ellipsis_is_read_after_the_type():
    _, kind, runtime, dev, nums = _read("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 312.00 MiB. "
                                        "GPU 1 has ... 20.50 MiB is free.\n")
    assert (kind, runtime, dev) == ("torch.cuda", "pytorch", "cuda")
    assert nums["requested"] == 312 * _MIB and nums["free"] == round(20.5 * _MIB)
    assert "total" not in nums


def test_free_after_gpu_has_ellipsis_is_read_on_the_next_line():
    _, kind, _, _, nums = _read("OutOfMemoryError: CUDA out of memory. Tried to allocate 80.00 MiB.\n"
                                "GPU 0 has \u2026 12.25 MiB is free.\n")
    assert kind == "torch.cuda"
    assert nums["requested"] == 80 * _MIB and nums["free"] == round(12.25 * _MIB)


def test_free_after_gpu_has_ellipsis_from_the_request():
    ev = TR._torch_no_prefix("Tried to allocate 96.00 MiB. GPU 2 has ... 7.00 MiB is free.")
    assert ev and ev["numbers"]["requested"] == 96 * _MIB and ev["numbers"]["free"] == 7 * _MIB


def test_gpu_has_without_ellipsis_adds_no_free_figure():
    # "has" followed by other words than the ellipsis: nothing elided, no free figure taken from later words
    assert TR._FREE_AFTER_REQ.match(". GPU 0 has 39.88 MiB is free.") is None


# --- vLLM's package-relative layer frame ---

_VLLM_AT = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB.\n"
            "GPU 0 has ... 18.00 MiB is free.\n"
            "  at model_executor/layers/{path}:{line}  {fn}\n")


def test_vllm_relative_layer_frame_names_vllm_and_reads_activations():
    cause, conf, ev = _top(_VLLM_AT.format(path="linear.py", line=512, fn="apply"))
    assert ev["runtime"] == "vllm" and ev["device_kind"] == "cuda"
    assert ev["numbers"]["requested"] == 224 * _MIB and ev["numbers"]["free"] == 18 * _MIB
    assert cause == "activations" and conf["activations"] > conf.get("other", 0)


def test_vllm_relative_weight_loader_frame_is_not_a_pass():
    cause, conf, ev = _top(_VLLM_AT.format(path="linear.py", line=1180, fn="weight_loader"))
    assert ev["runtime"] == "vllm"
    # the load's own function: the pass row stays out, and nothing else reads the cut message here
    assert cause == "other" and "activations" not in fired(ev)      # (alt1) only rules_runner_up's other reading


def test_vllm_marker_reads_only_the_package_relative_path():
    rx = [r for r in RM.RUNTIME_MARKERS if r[1] == ("model_executor/",)][0][2]
    import re
    m = re.compile(rx)
    assert m.search("  at model_executor/layers/utils.py:98  default_unquantized_gemm")
    assert m.search('"model_executor/models/llama.py", line 3')
    # a full path (vllm/..., or SGLang's srt/model_executor/) and a method's attribute are not this row's
    assert not m.search('File "/usr/lib/python3/site-packages/sglang/srt/model_executor/model_runner.py", line 9')
    assert not m.search("self.model_executor.determine_num_available_blocks()")
    fact = dict(FACTS)["vllm_layer_at"]
    assert fact.search("  at model_executor/layers/utils.py:98  default_unquantized_gemm").group(1) == "default_unquantized_gemm"


# --- Ollama's offload record ---

_OFFLOAD = ('time=2025-09-01T10:00:00.000Z level=INFO source=server.go:175 msg=offload library={lib} layers.requested=-1 '
            'layers.model=33 layers.offload={off} layers.split="" memory.available="[{avail}]" memory.gpu_overhead="0 B" '
            'memory.required.full="14.2 GiB" memory.required.partial="0 B" memory.required.kv="4.0 GiB" '
            'memory.required.allocations="[0 B]" memory.weights.total="6.1 GiB" memory.graph.full="{graph}" '
            'memory.graph.partial="{graph}"\n')


def test_ollama_graph_over_available_reads_activations():
    cause, kind, runtime, dev, nums = _read(_OFFLOAD.format(lib="cuda", off=0, avail="23.5 GiB", graph="24.5 GiB"))
    assert (cause, kind, runtime, dev) == ("activations", "ollama.graph_over", "ollama", "cuda")
    assert nums["required"] == round(24.5 * _GIB) and nums["available"] == round(23.5 * _GIB)


def test_ollama_graph_over_every_gpu_of_a_list():
    ev = ORT.ollama_graph_over(_OFFLOAD.format(lib="rocm", off=0, avail="11.8 GiB 15.6 GiB", graph="16.0 GiB"))
    assert ev and ev["device_kind"] == "rocm" and ev["numbers"]["available"] == round(15.6 * _GIB)
    # under the largest GPU's memory: a plan, not a failure
    assert ORT.ollama_graph_over(_OFFLOAD.format(lib="rocm", off=0, avail="11.8 GiB 15.6 GiB", graph="12.0 GiB")) is None


def test_ollama_record_that_fits_or_places_layers_is_no_event():
    assert "ollama.graph_over" not in _kinds(_OFFLOAD.format(lib="cuda", off=0, avail="23.5 GiB", graph="2.0 GiB"))
    assert "ollama.graph_over" not in _kinds(_OFFLOAD.format(lib="cuda", off=30, avail="23.5 GiB", graph="24.5 GiB"))
    assert "ollama.graph_over" not in _kinds(_OFFLOAD.format(lib="cuda", off=10, avail="23.5 GiB", graph="24.5 GiB"))


def test_ollama_record_broken_after_msg_offload_is_joined():
    text = ('Sep 01 10:00:00 box ollama[812]: time=2025-09-01T10:00:00.000Z level=INFO source=server.go:175 msg=offload\n'
            ' library=rocm layers.requested=-1 layers.model=33 layers.offload=0 layers.split="" memory.available="[47.6 GiB]"\n'
            ' memory.gpu_overhead="0 B" memory.required.full="14.2 GiB" memory.required.partial="0 B" memory.required.kv="4.0 GiB"\n'
            ' memory.weights.total="6.1 GiB" memory.graph.full="48.0 GiB" memory.graph.partial="48.0 GiB"\n')
    cause, kind, runtime, dev, nums = _read(text)
    assert (cause, kind, runtime, dev) == ("activations", "ollama.graph_over", "ollama", "rocm")
    assert nums["required"] == 48 * _GIB and nums["available"] == round(47.6 * _GIB)


# --- linear time ---

def test_round_106_patterns_stay_linear():
    mb = 1 << 20
    marker = __import__("re").compile([r for r in RM.RUNTIME_MARKERS if r[1] == ("model_executor/",)][0][2])
    fact = dict(FACTS)["vllm_layer_at"]
    cases = [
        (TR._FREE_AFTER_REQ.match, (". GPU 0 has" + " " * mb + "x", ". GPU 0 has ... " + "9" * mb, ". GPU " + "0" * mb)),
        (TR._LEAD_CUT.match, ("Tried to allocate 1.00 MiB. GPU 0 has" + " " * mb, "Tried to allocate " + "9" * mb)),
        (TR._torch_no_prefix, ("Tried to allocate 1.00 MiB. GPU 0 has ... " + "9" * mb, "Tried to allocate 1.00 MiB. GPU 0 has " * (mb // 38))),
        (marker.search, ("model_executor/layers/" + "a" * mb, " model_executor/layers/" * (mb // 23), "model_executor/" * (mb // 15))),
        (fact.search, ("model_executor/layers/" + "a/" * (mb // 2) + ".py", " model_executor/layers/x.py" + " " * mb,
                       " model_executor/layers/x.py:1" * (mb // 29))),
        (OP.OLLAMA_GRAPH_FULL.search, ('memory.graph.full="' + "9" * mb, 'memory.graph.full="' * (mb // 19))),
        (OP.OLLAMA_AVAILABLE.search, ('memory.available="[' + "9" * mb, 'memory.available="[' * (mb // 19))),
        (OP.OLLAMA_SIZES.findall, ("9" * mb, "9." * (mb // 2), "1.5 " * (mb // 4))),
        (ORT.ollama_graph_over, ("msg=offload layers.offload=0 memory.graph.full=" + '"' + "9" * mb,
                                 'msg=offload layers.offload=0 memory.graph.full="1 GiB" memory.available="[' + "9 " * (mb // 2))),
    ]
    assert_each_fast(cases)
    t = cpu_now()
    _kinds("level=INFO source=server.go:175 msg=offload\n" * (mb // 44))
    assert cpu_now() - t < cpu_limit(10.0)
