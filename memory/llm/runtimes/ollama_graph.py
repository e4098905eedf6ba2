"""Ollama's graph estimate (fs/ggml/ggml.go GraphSize; llm/ggml.go before 0.6): the (graph full, graph partial)
formulas of the architectures it names, by version, which the llama runner's placement charges (runtimes/ollama.py
evaluate picks one; fallback_graph there covers the architectures GraphSize does not name)."""

from ...units import MiB
from ..cache import KV_BYTES, OLLAMA_ESTIMATE_BYTES
from . import at_least, parse_version

# gpt-oss's graph in Ollama's estimate (fs/ggml GraphSize, case "gptoss"): heads / KV heads x kvT / 6 x a factor,
# kvT the all-layer cache at num_ctx x numParallel priced as for full attention: full 4 and partial 8 (0.11.0-
# 0.11.2), both 4 (0.11.3-0.11.4: ollama fcec04bf4 "gptoss: fix memory calc", first tagged v0.11.3-rc0; gpt-oss:20b
# at 8192 on 0.11.3 and 3.6 GiB places 1 of 25 layers, required.full 14.9 GiB, ollama#11769), both 2 (0.11.5 on:
# the case sets the partial graph only and llm/memory.go takes
# full = partial); with flash attention from 0.11.11 the partial graph is (4 x numParallel + cells / 1024 + 110)
# MiB. gpt-oss:20b at 8192 cells on 0.11.2: 8 x 384 MiB x 4 / 6 = 2.0 GiB full, 4.0 GiB partial (ollama#11711);
# gpt-oss:120b at 75000 on 0.11.5: 8 x 5.15 GiB x 2 / 6 = 13.7 GiB (ollama#11982).
GPTOSS_GRAPH = ((0, 11, 5), parse_version("0.11.3-rc0"))  # the 0.11.3 release candidates carry fcec04bf4
GPTOSS_FLASH_GRAPH = (0, 11, 11)
# GraphSize (fs/ggml/ggml.go, the same list from 0.3 to 0.12) sizes the graph of the architectures it names; for any
# other it returns nothing and llm/memory.go takes `GQA() x the whole cache / 6` for the partial graph and the full one
# alike (qwen3, qwen3moe, phi3, mistral3, qwen25vl, granite, ...): mistral-small3.1:24b at num_ctx 131072 prints
# graph.full = graph.partial = 13.3 GiB = 32 / 8 heads x 20 GiB of cache / 6 (ollama/ollama#10615, 0.6.8). From 0.12
# Ollama measures its own engine's allocation instead (MEASURED).
GRAPH_SIZE_ARCHS = ("llama", "mistral", "mixtral", "mllama", "llama4", "gemma", "gemma2", "gemma3", "gemma3_text",
                    "gemma3n", "gemma3n_text", "cohere", "command-r", "qwen2", "phi", "phi2", "stablelm", "deepseek_v2",
                    "deepseek_v3", "deepseek2", "chatglm", "gpt_oss", "gptoss", "gpt-oss")


# Gemma's graph in Ollama's estimate (fs/ggml GraphSize, case "gemma", "gemma2", "gemma3", the same from 0.6.2 to
# 0.11.6), with context = num_ctx x parallel and batch = min(context, 512), whatever the weights' type:
#   full    = max(4 b (E + V), 4 b (2 + ctx + ctx H + 2 E + 2 hK H))
#   partial = max(4 E b + E V 105/128 + 4 V b, 4 b (2 E + 1 + 2 hK H + ctx + ctx H) + 32 hK ctx + E hK H 9/16)
# gemma3:27b prints graph.partial 1.6 GiB (ollama#9818) and gemma3:4b 1.0 GiB (ollama#10765); over several GPUs
# every GPU is charged the partial graph, so an fp16 output tensor no longer inflates it (ollama#11162). Applied for
# a stated version before 0.12 only (from 0.12 Ollama measures its engine's allocation)
GEMMA_GRAPH_ARCHS = ("gemma", "gemma2", "gemma3", "gemma3_text")


def gemma_graph(spec, cells: int, batch: int = 512) -> tuple:
    """(graph full, graph partial) bytes of Ollama's estimate for a Gemma model."""
    E, H, hk, V = spec.hidden, spec.n_heads, spec.head_dim_k, spec.vocab
    b = min(cells, batch)
    full = max(4 * b * (E + V), 4 * b * (2 + cells + cells * H + 2 * E + 2 * hk * H))
    partial = max(4 * E * b + E * V * 105 // 128 + 4 * V * b,
                  4 * b * (2 * E + 1 + 2 * hk * H + cells + cells * H) + 4 * hk * cells * 8 + E * hk * H * 9 // 16)
    return int(full), int(partial)


# GraphSize's case "llama" (fs/ggml/ggml.go; llm/ggml.go before 0.6), the dense form (Mixtral's expert tensors take
# other branches), with context = num_ctx x parallel, batch = min(context, 512), E the embedding, H heads, hK the
# head dimension, Hkv the KV heads, V the vocabulary:
#   full    = max(4 b (1 + 4 E + ctx (1 + H)), 4 b (E + V))          (the second term from 0.3.10, LLAMA_GRAPH_VOCAB)
#   partial = 4 b E + max(4 b (1 + E + max(ctx, E)) + E^2 9/16 + 4 ctx (b H + hK Hkv), 4 b (E + V) + E V 105/128)
# the same text from 0.3.10 to 0.22.1. llama3.1:70b at 8192 on 0.13.5 prints compute graph 1.1 GiB (partial
# 1.113 GiB), codestral:22b at 32768 on 0.22.1 3.1 GiB (full 3.11, partial 3.23: the layout charges each GPU the
# larger) with flash attention on (ollama-ticketllm, malgen rows). llama.cpp's converter writes Mistral's dense models
# as "llama" too (Codestral-22B, Mistral-7B).
LLAMA_GRAPH_ARCHS = ("llama", "mistral")
LLAMA_GRAPH_VOCAB = (0, 3, 10)


def llama_graph(spec, cells: int, batch: int = 512, version=None) -> tuple:
    """(graph full, graph partial) bytes of Ollama's estimate for a dense llama-architecture model."""
    E, H, hk, hkv, V = spec.hidden, spec.n_heads, spec.head_dim_k, spec.n_kv_heads, spec.vocab
    b = min(cells, batch)
    full = 4 * b * (1 + 4 * E + cells * (1 + H))
    if version is None or at_least(version, *LLAMA_GRAPH_VOCAB):
        full = max(full, 4 * b * (E + V))
    partial = 4 * b * E + max(4 * b * (1 + E + max(cells, E)) + E * E * 9 // 16 + 4 * cells * (b * H + hk * hkv),
                              4 * b * (E + V) + E * V * 105 // 128)
    return int(full), int(partial)


# GraphSize's case "chatglm" (fs/ggml/ggml.go; llm/ggml.go before 0.6), the same text from v0.2.2 to v0.24.0, with its
# attn_qkv.bias branch (every GLM config kv reads sets add_qkv_bias / attention_bias: a bias of (H + 2 Hkv) hK values):
#   full    = max(4 b (E + V), 4 b (2 + 2 E + ctx + ctx H + hK H + qkv_bias))
#   partial = max(4 b (E + V) + E V 105/128, 4 b (1 + 2 E + hK H + ctx + ctx H) + 8 hK ctx + 4 qkv_bias)
# GLM-4-9B's GGUF (Ollama's glm4 and codegeex4 libraries) is "chatglm": codegeex4 at 32768 on 0.17.0 prints compute
# graph 2.1 GiB (full = 4 x 512 x 1,098,242 B = 2.095 GiB), where heads / KV heads x the cache / 6 gave 3.33 (yyc3 row)
CHATGLM_GRAPH_ARCHS = ("chatglm",)


def chatglm_graph(spec, cells: int, batch: int = 512) -> tuple:
    """(graph full, graph partial) bytes of Ollama's estimate for a ChatGLM / GLM-4-9B model."""
    E, H, hk, V = spec.hidden, spec.n_heads, spec.head_dim_k, spec.vocab
    b, bias = min(cells, batch), (spec.n_heads + 2 * spec.n_kv_heads) * spec.head_dim_k
    full = max(4 * b * (E + V), 4 * b * (2 + 2 * E + cells + cells * H + hk * H + bias))
    partial = max(4 * b * (E + V) + E * V * 105 // 128,
                  4 * b * (1 + 2 * E + hk * H + cells + cells * H) + 8 * hk * cells + 4 * bias)
    return int(full), int(partial)


def gptoss_graph(spec, cells, kv, version, flash, parallel=1) -> tuple:
    """(graph full, graph partial) bytes of Ollama's estimate for a gpt-oss model."""
    per = OLLAMA_ESTIMATE_BYTES.get(kv, KV_BYTES[kv])
    kv_t = spec.n_layers * cells * (spec.head_dim_k + spec.head_dim_v) * spec.n_kv_heads * per
    gqa = spec.n_heads // max(spec.n_kv_heads, 1)
    if version is None or at_least(version, *GPTOSS_GRAPH[0]):
        full = partial = 2 * gqa * kv_t / 6
        if flash and (version is None or at_least(version, *GPTOSS_FLASH_GRAPH)):
            # fs/ggml: (4 x numParallel + context>>10 + 110) MiB, context being num_ctx x numParallel (the cells)
            partial = (4 * parallel + cells // 1024 + 110) * MiB
            full = partial
    elif at_least(version, *GPTOSS_GRAPH[1]):
        full = partial = 4 * gqa * kv_t / 6
    else:
        full = 4 * gqa * kv_t / 6
        partial = 2 * full
    return int(full), int(partial)
