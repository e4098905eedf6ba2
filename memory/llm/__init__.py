"""LLM memory: `spec` reads model specs (config.json, GGUF, bundled), `kv` computes weights, KV cache and the fits verdict."""
