"""GGUF: the architecture from its metadata and the exact tensor table (read by estimate/headers.py)."""
import math
import os
import re

from ..errors import UserError
from ..estimate.headers import read_gguf_metadata, tensor_bytes
from .spec import FFN, FULL, LINEAR, MAMBA, SLIDING, LLMSpec


def load_gguf(path: str) -> LLMSpec:
    """Architecture from the GGUF metadata, exact weight bytes from its tensor table (every shard's, for a split file)."""
    meta, tensors = read_gguf(path)
    count = int(meta.pop("split.count", 0) or 0)
    if count > 1:
        tensors = _shard_tensors(path, int(meta.pop("split.no", 0) or 0), count, tensors)
    return from_gguf_metadata(meta, tensors, name=os.path.basename(path))


# llama.cpp's split GGUF (gguf-split, llama_split_path; the gguf package's split writer): <name>-%05d-of-%05d.gguf, each
# shard with split.no and split.count, the metadata in the first and the tensor table divided among them
SPLIT_NAME = re.compile(r"(.+)-(\d{5})-of-(\d{5})\.gguf")
ATTN_TENSOR = re.compile(r"blk\.(\d+)\.attn_\w+\.(weight|bias)")
INTERVAL_ARCHS = ("qwen3next", "qwen35", "qwen35moe")  # layer kinds from full_attention_interval (load_gguf)

# config model_type -> the GGUF architecture (general.architecture) Ollama and llama.cpp name; a GGUF's own spec
# carries that name as spec.arch already. Gates on an architecture family read it through gguf_arch (rev20 S1)
GGUF_ARCH = {"gemma3_text": "gemma3", "gemma3n_text": "gemma3n", "mllama_text_model": "mllama", "qwen2_5_vl": "qwen25vl",
             "gpt_oss": "gptoss", "gpt-oss": "gptoss", "qwen3_moe": "qwen3moe", "qwen3_vl": "qwen3vl",
             "qwen3_vl_moe": "qwen3vlmoe", "llama4_text": "llama4", "deepseek_v2": "deepseek2", "deepseek_v3": "deepseek2",
             "qwen3_next": "qwen3next", "gemma4_text": "gemma4", "qwen3_5": "qwen35", "qwen3_5_text": "qwen35",
             "qwen3_5_moe": "qwen35moe", "qwen3_5_moe_text": "qwen35moe", "lfm2_moe": "lfm2moe",
             "glm4_moe_lite": "glm4moelite", "glm4_moe": "glm4moe", "glm": "chatglm", "nemotron-nas": "deci"}


def gguf_arch(spec) -> str:
    """The architecture name a GGUF carries (Mistral 3.1/3.2 describe their text model as "mistral")."""
    if (spec.vision or {}).get("model_type") == "pixtral":
        return "mistral3"
    return GGUF_ARCH.get(spec.arch, spec.arch)


def _shard_tensors(path, no, count, tensors) -> dict:
    """The first shard's tensors and those of the other shards beside it: the whole model's table."""
    m = SPLIT_NAME.fullmatch(os.path.basename(path))
    if not m or int(m.group(3)) != count:
        raise UserError(f"{path}: one of {count} split GGUF files (split.count), not named <name>-0000k-of-{count:05d}.gguf "
                        "as llama.cpp names them, so its other shards cannot be found")
    if no != 0:
        raise UserError(f"{path}: shard {no + 1} of {count} of a split GGUF; give the first "
                        f"({m.group(1)}-00001-of-{count:05d}.gguf), which holds the metadata")
    tensors = dict(tensors)
    for k in range(2, count + 1):
        other = os.path.join(os.path.dirname(path), f"{os.path.basename(m.group(1))}-{k:05d}-of-{count:05d}.gguf")
        if not os.path.isfile(other):
            raise UserError(f"{path}: shard {os.path.basename(other)} of this split GGUF is missing (kv adds up every "
                            "shard's tensors)")
        tensors.update(read_gguf(other)[1])
    return tensors


def _keep(key, arch) -> bool:
    """general.* and the architecture's keys (everything until general.architecture is read), a split file's split.*
    keys, and the vocabulary (its length); not the tokenizer's other tables."""
    return (key == "tokenizer.ggml.tokens" or key.startswith("split.") or not key.startswith("tokenizer.")
            and (arch is None or key.startswith(("general.", arch + "."))))


def read_gguf(path) -> tuple:
    """(metadata, tensors): GGUF key -> value for general.* and architecture keys (tokenizer.ggml.tokens becomes
    tokenizer.ggml.vocab_len), and tensor name -> (bytes, GGML type name, elements), from the pack's one GGUF
    reader (estimate/headers.py: bounds-checked, from a memory map, no optional package)."""
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError:
        magic = b"GGUF"  # the reader says what is wrong with the path
    if magic != b"GGUF":
        raise UserError(f"{path}: not a GGUF file (no GGUF magic)")
    meta, table = read_gguf_metadata(path, _keep)
    tokens = meta.pop("tokenizer.ggml.tokens", None)
    if tokens is not None:
        meta["tokenizer.ggml.vocab_len"] = tokens if isinstance(tokens, int) else len(tokens)
    return meta, {name: (tensor_bytes(dtype, shape), dtype, math.prod(shape)) for name, (dtype, shape) in table.items()}


_GGUF_FTYPE = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
               12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
               19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
               26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16",
               36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4"}


def from_gguf_metadata(meta: dict, tensors: dict | None = None, name: str = "model.gguf") -> LLMSpec:
    """meta: GGUF key -> value; tensors: name -> (n_bytes, type name, n_elements). Separated from the reader for tests."""
    arch = meta.get("general.architecture")
    if not arch:
        raise UserError(f"{name}: GGUF has no general.architecture")

    def g(key, default=None):
        return meta.get(f"{arch}.{key}", default)

    L = g("block_count")
    d = g("embedding_length")
    H = g("attention.head_count")
    if not L or not d or not H:
        raise UserError(f"{name}: GGUF lacks {arch}.block_count / embedding_length / attention.head_count, which an "
                        f"LLM's GGUF carries (architecture '{arch}'); a diffusion model's GGUF (ComfyUI-GGUF) goes to "
                        f"gpu-garden estimate FILE")
    L = int(L)
    heads = H if isinstance(H, list) else [H] * L
    kv = g("attention.head_count_kv", heads)
    kv = kv if isinstance(kv, list) else [kv] * L
    if len(kv) != L or len(heads) != L:
        raise UserError(f"{name}: per-layer head counts do not match {L} layers")
    Hmax = max(int(h) for h in heads)
    if Hmax <= 0:
        raise UserError(f"{name}: attention.head_count is zero")
    hd_k = int(g("attention.key_length") or d // Hmax)
    hd_v = int(g("attention.value_length") or hd_k)
    hd_k_swa = int(g("attention.key_length_swa") or hd_k)
    hd_v_swa = int(g("attention.value_length_swa") or hd_v)
    window = g("attention.sliding_window")
    kinds = []
    swa_pattern = g("attention.sliding_window_pattern")
    ffs = g("feed_forward_length", 0)
    ffs = ffs if isinstance(ffs, list) and len(ffs) == L else [0] * L
    # llama.cpp LLM_ARCH_QWEN3NEXT / QWEN35 / QWEN35MOE (llama-model.cpp, 69d8e4be lines 2776-2836): a layer is
    # recurrent unless (i + 1) % full_attention_interval == 0 (default 4); the converter writes head_count_kv as one
    # number for every layer, so the interval, not a zero head count, tells the DeltaNet layers
    interval = int(g("full_attention_interval") or 4) if arch in INTERVAL_ARCHS else 0
    if interval < 0:
        raise UserError(f"{name}: GGUF {arch}.full_attention_interval = {interval} is not a layer interval")
    for i in range(L):
        if arch.startswith("nemotron_h") and int(kv[i]) == 0 and int(ffs[i]):
            # llama.cpp LLM_ARCH_NEMOTRON_H: a layer is recurrent when n_head_kv and n_ff are both 0; an MLP/MoE layer
            # has n_ff > 0 and neither a KV cache nor a state
            kinds.append(FFN)
        elif arch == "deci" and int(kv[i]) == 0:
            # llama.cpp LLM_ARCH_DECI (convert_hf_to_gguf DeciModel): head_count_kv 0 is a block without attention
            # (head_count 0) or with a linear one (head_count > 0); neither keeps a cache or a state
            kinds.append(FFN)
        elif int(kv[i]) == 0 or int(heads[i]) == 0 or (interval and (i + 1) % interval):
            kinds.append(MAMBA if g("ssm.state_size") else LINEAR)
        elif window and isinstance(swa_pattern, list) and i < len(swa_pattern):
            kinds.append(SLIDING if swa_pattern[i] else FULL)
        elif window and arch in ("gemma2",):
            kinds.append(SLIDING if i % 2 == 0 else FULL)
        elif window and arch in ("gemma3", "gemma3n", "gemma4"):
            kinds.append(FULL if (i + 1) % 6 == 0 else SLIDING)
        elif window and arch in ("starcoder2", "cohere2"):
            kinds.append(SLIDING)
        else:
            kinds.append(FULL)
    per_layer = [int(kv[i]) * ((hd_k_swa + hd_v_swa) if kinds[i] == SLIDING else (hd_k + hd_v)) for i in range(L)]
    kv_nonzero = [int(x) for x in kv if int(x)]
    vocab = meta.get("tokenizer.ggml.tokens")
    V = len(vocab) if isinstance(vocab, list) else int(meta.get("tokenizer.ggml.vocab_len") or g("vocab_size") or 0)
    ff = g("feed_forward_length", 0)
    ff = max(ff) if isinstance(ff, list) else int(ff or 0)
    spec = LLMSpec(name=name, arch=arch, layer_kinds=kinds, hidden=int(d), n_heads=Hmax,
                   n_kv_heads=max(kv_nonzero) if kv_nonzero else 0, head_dim_k=hd_k, head_dim_v=hd_v,
                   vocab=V, intermediate=ff, max_ctx=int(g("context_length") or 0) or None,
                   sliding_window=int(window) if window and SLIDING in kinds else None)
    if len(set(e for e, k in zip(per_layer, kinds) if k in (FULL, SLIDING))) > 1:
        spec.layer_kv_elems = per_layer
    if g("attention.kv_lora_rank"):
        spec.kv_lora_rank = int(g("attention.kv_lora_rank"))
        spec.qk_rope_head_dim = int(g("rope.dimension_count") or 64)
        spec.n_kv_heads = 1
        spec.layer_kv_elems = None
    spec.n_experts = int(g("expert_count") or 0)
    spec.n_experts_per_tok = int(g("expert_used_count") or 0)
    spec.moe_intermediate = int(g("expert_feed_forward_length") or 0)
    ft = meta.get("general.file_type")
    spec.quant = _GGUF_FTYPE.get(int(ft)) if ft is not None else None
    spec.dtype = spec.quant or "gguf"
    if tensors:
        spec.weights_bytes = sum(t[0] for t in tensors.values())
        spec.weights_source, spec.gguf_sized = "GGUF tensor table", True
        spec.embed_bytes = tensors.get("token_embd.weight", (0,))[0]
        spec.tied = "output.weight" not in tensors
        spec.output_bytes = tensors.get("output.weight", (spec.embed_bytes,))[0]
        spec.params = sum(t[2] for t in tensors.values() if len(t) > 2) or None
        spec.linear_params = sum(t[2] for n, t in tensors.items() if len(t) > 2 and n.startswith("blk.") and n.endswith(".weight") and "norm" not in n) or None
    if tensors and spec.n_experts:  # what llama.cpp's --n-cpu-moe override matches, layer by layer (weights.EXPERT_TENSOR)
        from .weights import EXPERT_TENSOR
        per = [[0, 0] for _ in range(spec.n_layers)]
        for n, t in tensors.items():
            m = EXPERT_TENSOR.match(n)
            if m and int(m.group(1)) < spec.n_layers:
                per[int(m.group(1))][m.group(2) == "bias"] += t[0]
        spec.expert_file_bytes = tuple(tuple(x) for x in per) if any(w for w, _ in per) else ()
    if tensors:  # each layer's attn_* tensors and their exact bytes (what an -ot attention pattern keeps on the CPU)
        attn = [[] for _ in range(spec.n_layers)]
        for n, t in tensors.items():
            m = ATTN_TENSOR.fullmatch(n)
            if m and int(m.group(1)) < spec.n_layers:
                attn[int(m.group(1))].append((n, t[0]))
        spec.attn_file_bytes = tuple(tuple(x) for x in attn)
    _per_layer_inputs(spec, g, tensors, f"{arch}.")
    if not spec.attn_layers:
        raise UserError(f"{name}: no attention layers found (head_count_kv is zero everywhere)")
    if g("ssm.state_size") and MAMBA in kinds:
        # llama.cpp's f32 state a sequence keeps per recurrent layer (llama-hparams.cpp, whatever the arch):
        # n_embd_s = d_state x d_inner and n_embd_r = (d_conv - 1) x (d_inner + 2 x n_group x d_state), the conv rows
        # of x and of Mamba-2's B and C groups; n_group is 0 where the GGUF has no ssm.group_count (Mamba-1, Jamba)
        d_inner, d_state = int(g("ssm.inner_size") or 2 * d), int(g("ssm.state_size"))
        conv_rows = (int(g("ssm.conv_kernel") or 4) - 1) * (d_inner + 2 * int(g("ssm.group_count") or 0) * d_state)
        spec.recurrent_state_per_seq = kinds.count(MAMBA) * (d_state * d_inner + conv_rows) * 4
    return spec


# Gemma 4 E2B / E4B (and Gemma 3n): llama.cpp's LLM_KV_ATTENTION_SHARED_KV_LAYERS and LLM_KV_EMBEDDING_LENGTH_PER_LAYER,
# as Ollama's convert/convert_gemma4.go writes them, and the per-layer table's tensors (its names there)
PLE_TENSORS = ("per_layer_token_embd.weight", "per_layer_model_proj.weight", "per_layer_proj_norm.weight")


def _per_layer_inputs(spec: LLMSpec, g, tensors: dict | None, pre: str) -> None:
    """The last attention.shared_kv_layers layers keep no cache (gemma4_ple.mark_shared); the per-layer table and its
    projection are counted apart from the blocks (exact bytes from the tensor table, else parameters from the widths)."""
    from .gemma4_ple import PLE_VOCAB, mark_shared
    n, ple = g("attention.shared_kv_layers"), g("embedding_length_per_layer_input")
    for key, v in (("attention.shared_kv_layers", n), ("embedding_length_per_layer_input", ple)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 65536):
            raise UserError(f"{spec.name}: GGUF {pre}{key} = {v!r} is not a plausible count")
    if n:
        spec.layer_kv_elems = spec.layer_kv_elems or [spec.kv_elems_per_token_layer()] * spec.n_layers
        mark_shared(spec, n, f"GGUF {pre}attention.shared_kv_layers")
    if not ple:
        return
    L, spec.ple_width = spec.n_layers, ple
    found = [tensors[t] for t in PLE_TENSORS if tensors and t in tensors]
    if found and all(len(t) > 2 for t in found):
        spec.ple_params, spec.ple_bytes = sum(t[2] for t in found), sum(t[0] for t in found)
    else:
        spec.ple_params = PLE_VOCAB * L * ple + spec.hidden * L * ple + ple
    spec.notes.append(f"per-layer embedding table and projection: {spec.ple_params / 1e9:.2f} B parameters"
                      + (f", {spec.ple_bytes / 2**30:.2f} GiB in this file" if spec.ple_bytes else ""))
