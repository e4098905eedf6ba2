"""The guides and the rules table: guides parse, every cause has its own guide on every runtime (never the
generic checklist), every rule row names a known cause; guides carry the floor's commands,
set both allocator variable names, and never recommend expandable segments where PyTorch ignores them."""
import re

import pytest

from gpu_garden.memory.triage import guides
from gpu_garden.memory.triage import engine as triage
from gpu_garden.memory.triage.engine import CAUSES

RUNTIMES = ("comfyui", "pytorch", "vllm", "llama.cpp", "ollama")
ALL = guides.load_all()
IGNORED = [  # where expandable_segments does nothing
    {"os": "windows", "backend": "cuda", "allocator": "native", "expandable_segments": False},
    {"os": "linux", "backend": "rocm", "allocator": "native", "expandable_segments": False},
    {"os": "linux", "backend": "cuda", "allocator": "cudaMallocAsync", "expandable_segments": False},
]


def all_commands(g):
    return "\n".join(c["text"] for c in g["commands"])


def test_every_guide_parses_with_front_matter_and_labelled_commands():
    assert len(ALL) >= 30
    for gid, g in ALL.items():
        assert g["title"] and g["markdown"].strip(), gid
        assert g["causes"] or g["runtimes"] == ["faq"], gid
        assert set(g["causes"]) <= set(CAUSES), gid
        rendered = guides.render(g, {})
        for c in rendered["commands"]:
            assert c["label"] and c["text"].strip(), (gid, c)


PLATFORMS = [{"os": "linux", "backend": "cuda", "allocator": "native", "expandable_segments": True},
             {"os": "windows", "backend": "cuda", "allocator": "cudaMallocAsync", "expandable_segments": False},
             {"os": "darwin", "backend": "mps", "allocator": None, "expandable_segments": False},
             {"os": "linux", "backend": "rocm", "allocator": "native", "expandable_segments": False},
             {}]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("cause", CAUSES)
def test_every_cause_has_its_own_guide_on_every_runtime(cause, runtime):
    # the generic checklist (`other`) is the guide of the cause "other" only, never a silent fallback
    for env in PLATFORMS:
        g = guides.select(cause, runtime, env)
        assert g and g["markdown"].strip(), (cause, runtime, env)
        assert cause in g["causes"], (cause, runtime, env, g["id"])
        if cause != "other":
            assert g["id"] != "other", (cause, runtime, env)


def test_the_generic_guide_is_for_other_only():
    assert ALL["other"]["causes"] == ["other"]


def test_every_rule_names_a_known_cause_and_every_cause_has_rules():
    from gpu_garden.memory.triage import rules
    assert rules.CAUSES is CAUSES
    for r in rules.RULES:
        assert r.cause in CAUSES or r.cause == rules.LEADER, r
        assert r.weight > 0 and callable(r.when), r
        assert callable(r.evidence) or (isinstance(r.evidence, str) and r.evidence.strip()), r
    fallbacks = [i for i, r in enumerate(rules.RULES) if r.cause == rules.LEADER]
    # grouped by cause, in CAUSES order, then the fallbacks
    body = rules.RULES[:fallbacks[0]]
    order = [CAUSES.index(r.cause) for r in body]
    assert order == sorted(order), "rows are grouped by cause in CAUSES order"
    assert {r.cause for r in body} == set(CAUSES), "every cause has at least one row"
    # a `first` group is a run of adjacent rows of one cause
    groups = {}
    for i, r in enumerate(rules.RULES):
        if r.first:
            groups.setdefault((r.cause, r.first), []).append(i)
    for key, idx in groups.items():
        assert idx == list(range(idx[0], idx[-1] + 1)), key


def test_both_allocator_variable_names_whenever_one_is_set():
    for gid, g in ALL.items():
        text = g["markdown"]
        for m in re.finditer(r"PYTORCH_CUDA_ALLOC_CONF=(\S+)", text):
            if "```" in text[:m.start()] and text[:m.start()].count("```") % 2 == 1:      # inside a code block
                assert f"PYTORCH_ALLOC_CONF={m.group(1)}" in text, (gid, m.group(0))


@pytest.mark.parametrize("env", IGNORED, ids=["windows", "rocm", "cudaMallocAsync"])
def test_never_expandable_segments_where_ignored(env):
    for cause in CAUSES:
        for runtime in ("comfyui", "pytorch"):
            g = guides.select(cause, runtime, env)
            assert "expandable_segments:True" not in all_commands(g), (cause, runtime, g["id"])


def test_the_floor():
    text = "\n".join(g["markdown"] for g in ALL.values())
    for s in ["OLLAMA_NUM_PARALLEL=1", "OLLAMA_MAX_LOADED_MODELS=1", "OLLAMA_KV_CACHE_TYPE=q8_0",
              # llama.cpp: -c is the log's context (the activations guide) or what fits (kv-cache), never a fixed 8192
              # (fix68f) -fa in the form of the log's build: {{fa}} (advice.params; "-fa on" where no build is printed)
              "llama-server -m MODEL.gguf -ngl 99 -c {{n_ctx}} -b 512 -ub 256 {{fa}} -ctk q8_0 -ctv q8_0",
              "llama-server -m MODEL.gguf -ngl 99 -c {{ctx}} -b 512 -ub 256 {{fa}} -ctk q8_0 -ctv q8_0",
              "vllm serve MODEL --dtype auto --kv-cache-dtype fp8 --max-model-len 8192 --max-num-seqs 8 --enforce-eager",
              "--reserve-vram", "--disable-smart-memory", "--cache-none", "--disable-cuda-malloc", "--lowvram", "VAEDecodeTiled"]:
        assert s in text, s
    assert "reserved by PyTorch but unallocated" in ALL["faq-reserved-unallocated"]["title"]
    assert "empty_cache" in ALL["faq-empty-cache"]["title"]
    mech = ALL["comfyui-fragmentation"]["markdown"]
    assert "20-512 MiB" in mech and "expandable_segments:True" in mech


def test_numbers_from_the_log_fill_the_commands():
    log = ("ValueError: To serve at least one request with the model's max seq len (131072), (16.00 GiB KV cache is needed, "
           "which is larger than the available KV cache memory (5.23 GiB). Based on the available memory, the estimated "
           "maximum model length is 42816.")
    g = triage.triage_text(log)["events"][-1]["guide"]
    assert "--max-model-len 42752" in all_commands(g)
    log = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.64 GiB of "
           "which 300.00 MiB is free. Process 4242 has 6.00 GiB memory in use. Including non-PyTorch memory, this process has "
           "17.30 GiB memory in use. Of the allocated memory 16.80 GiB is allocated by PyTorch, and 120.00 MiB is reserved by "
           "PyTorch but unallocated.\nGot an OOM, unloading all loaded models.")
    ev = triage.triage_text(log, {"platform": "windows"})["events"][-1]
    assert ev["causes"][0]["id"] == "other-process"
    cmds = all_commands(ev["guide"])
    # (fix66c) Windows with no install shown: a manual install's line, and a note on the portable build's and Desktop's
    assert "python main.py --reserve-vram 6.5" in cmds and "python_embeded" in ev["guide"]["markdown"]
    log = ("ValueError: Free memory on device (59.32/79.15 GiB) on startup is less than desired GPU memory utilization "
           "(0.9, 71.24 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.")
    assert "--gpu-memory-utilization 0.72" in all_commands(triage.triage_text(log)["events"][-1]["guide"])


def test_vae_guide_actions_follow_the_latent():
    msg = "torch.OutOfMemoryError: Allocation on device "
    small = triage.triage_text(msg, {"node_type": "VAEDecode"})["events"][-1]["guide"]["actions"][0]
    big = triage.triage_text(msg, {"node_type": "VAEDecode", "latent": {"width": 1280, "height": 720, "frames": 81}})
    big = big["events"][-1]["guide"]["actions"][0]
    assert small["widgets"] == {"tile_size": 512, "overlap": 64, "temporal_size": 64, "temporal_overlap": 8}
    assert big["widgets"]["tile_size"] == 256 and big["widgets"]["temporal_size"] == 32


def test_no_placeholder_is_left_unfilled():
    for gid, g in ALL.items():
        r = guides.render(g, {})
        assert "{{" not in r["markdown"] and "{{" not in r["title"], gid
        assert "{{" not in str(r.get("actions", "")), gid
