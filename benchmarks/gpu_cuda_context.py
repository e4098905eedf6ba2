"""Device memory that is not torch's: the CUDA context at initialisation, then with cuBLAS, cuDNN and SDPA handles.

    python3 benchmarks/gpu_cuda_context.py        (any CUDA GPU; a few seconds; prints the lines cuda_context.txt holds)

The estimate adds a fixed CUDA context to `peak_device`; this prints what one card and driver really take:
(total - free) from cudaMemGetInfo, less torch.cuda.memory_reserved(), after each step. Skips without CUDA.
"""
import subprocess
import sys


def main() -> int:
    import torch

    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return 0

    def used():
        f, t = torch.cuda.mem_get_info()
        return t - f

    def smi():
        return subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True).stdout.strip()

    M = 2**20
    print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
    print("nvidia-smi used before init (MiB):", smi())
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    print(f"after init: device used {used() / M:.0f} MiB, torch reserved {torch.cuda.memory_reserved() / M:.0f} MiB, "
          f"context = {(used() - torch.cuda.memory_reserved()) / M:.0f} MiB; nvidia-smi {smi()} MiB")
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    _ = a @ a
    torch.cuda.synchronize()
    print(f"after a cuBLAS fp16 matmul: context+handles = {(used() - torch.cuda.memory_reserved()) / M:.0f} MiB, "
          f"reserved {torch.cuda.memory_reserved() / M:.0f} MiB")
    _ = torch.nn.functional.conv2d(torch.randn(1, 64, 256, 256, device="cuda", dtype=torch.float16),
                                   torch.randn(64, 64, 3, 3, device="cuda", dtype=torch.float16))
    torch.cuda.synchronize()
    print(f"after a cuDNN fp16 conv: context+handles = {(used() - torch.cuda.memory_reserved()) / M:.0f} MiB, "
          f"reserved {torch.cuda.memory_reserved() / M:.0f} MiB")
    q = torch.randn(1, 24, 4096, 128, device="cuda", dtype=torch.bfloat16)
    _ = torch.nn.functional.scaled_dot_product_attention(q, q, q)
    torch.cuda.synchronize()
    print(f"after SDPA bf16: context+handles = {(used() - torch.cuda.memory_reserved()) / M:.0f} MiB, "
          f"reserved {torch.cuda.memory_reserved() / M:.0f} MiB; nvidia-smi {smi()} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
