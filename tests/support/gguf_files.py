"""Sparse GGUF files written from a bundled layout: real tensor infos, tensor data left as a hole."""
from pathlib import Path


def sparse_gguf_from_layout(path: Path, layout: str = "flux_flux1-dev", pad_to: int | None = None) -> tuple[Path, int]:
    """Quantize a layout the way city96's files are (Q8_0, BF16 where rows are not whole 32-blocks) and write
    the header only; the data stays a hole. With pad_to, a padding tensor brings the file to that size.
    Returns (path, bytes of tensor data). Needs the gguf package and numpy."""
    import gguf
    import numpy as np

    from gpu_garden.memory.estimate import headers
    from gpu_garden.memory.estimate import layouts

    w = gguf.GGUFWriter(str(path), "flux")
    total = 0
    for name, t in layouts.load(layout)["tensors"].items():
        q = "Q8_0" if len(t["shape"]) >= 2 and t["shape"][-1] % 32 == 0 else "BF16"
        n = headers.tensor_bytes(q, t["shape"])
        w.add_tensor_info(name, t["shape"], np.float16, n, raw_dtype=gguf.GGMLQuantizationType[q])
        total += n
    if pad_to is not None:
        w.add_tensor_info("pad.weight", [pad_to - total], np.int8, pad_to - total, raw_dtype=gguf.GGMLQuantizationType.I8)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    with open(path, "r+b") as f:
        f.truncate(f.seek(0, 2) + (pad_to if pad_to is not None else total) + 4096)
    return Path(path), total


def quantized_writer(path, arch: str, hparams):
    """A GGUFWriter for `arch` with `hparams` ((writer method name, value) pairs) and put(name, qtype, shape), which adds
    a zero tensor of that llama.cpp type (shape as llama.cpp prints it reversed: rows..., then the row length).
    Returns (writer, put); close_written(writer) writes and closes it. Needs the gguf package and numpy."""
    import math

    import gguf
    import numpy as np

    w = gguf.GGUFWriter(str(path), arch)
    for name, v in hparams:
        getattr(w, name)(v)

    def put(name, qtype, shape):
        qt = gguf.GGMLQuantizationType[qtype]
        block, size = gguf.GGML_QUANT_SIZES[qt]
        raw = (*shape[:-1], shape[-1] // block * size)
        w.add_tensor(name, np.zeros(math.prod(raw), dtype=np.uint8), raw_shape=raw, raw_dtype=qt)
    return w, put


def close_written(w) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def tiny_llama_q8(f):
    """A 2-block llama GGUF (n_embd 256, 4 heads, 2 KV heads, Q8_0 tensors) written to f: what a user's LLM file looks like."""
    w, put = quantized_writer(f, "llama", (("add_block_count", 2), ("add_context_length", 4096), ("add_embedding_length", 256),
                                           ("add_feed_forward_length", 512), ("add_head_count", 4), ("add_head_count_kv", 2),
                                           ("add_vocab_size", 1000), ("add_file_type", 7)))
    put("token_embd.weight", "Q8_0", (1000, 256))
    for i in range(2):
        for n, rows in (("q", 256), ("k", 128), ("v", 128), ("output", 256)):
            put(f"blk.{i}.attn_{n}.weight", "Q8_0", (rows, 256))
    close_written(w)
    return f
