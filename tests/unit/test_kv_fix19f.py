"""fix19f: vLLM's (and SGLang's) "below compute capability 8.0" rule reads cards.COMPUTE_CAPABILITY, the table Ollama's
flash-attention rule reads, instead of a name pattern of its own (the former runtimes/vllm.PRE_AMPERE)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# Real names as nvidia-smi prints them, with NVIDIA's compute capability (CUDA GPU table). Every card the former
# PRE_AMPERE pattern named is here: its behaviour must not change.
@pytest.mark.parametrize("gpu, cc", [
    ("Tesla V100-SXM2-32GB", (7, 0)),
    ("Tesla V100-PCIE-16GB", (7, 0)),
    ("NVIDIA TITAN V", (7, 0)),
    ("Tesla T4", (7, 5)),
    ("Quadro RTX 8000", (7, 5)),
    ("Quadro RTX 4000", (7, 5)),
    ("NVIDIA TITAN RTX", (7, 5)),
    ("NVIDIA GeForce RTX 2060 SUPER", (7, 5)),
    ("NVIDIA GeForce RTX 2070", (7, 5)),
    ("NVIDIA GeForce RTX 2080 Ti", (7, 5)),
    ("NVIDIA GeForce GTX 1650", (7, 5)),
    ("NVIDIA GeForce GTX 1660 Ti", (7, 5)),
    ("Tesla P100-PCIE-16GB", (6, 0)),
    ("Tesla P40", (6, 1)),
    ("Tesla P4", (6, 1)),
    ("NVIDIA GeForce GTX 1050 Ti", (6, 1)),
    ("NVIDIA GeForce GTX 1080 Ti", (6, 1)),
    ("GeForce GTX TITAN", (3, 5)),          # GK110; not GM200's "GeForce GTX TITAN X" (5.2)
    ("GeForce GTX TITAN Black", (3, 5)),
    ("GeForce GTX TITAN X", (5, 2)),
    ("Tesla K80", (3, 7)),
])
def test_pre_ampere_cards_by_compute_capability(gpu, cc):
    from gpu_garden.memory.llm import cards
    from gpu_garden.memory.llm.runtimes import sglang as SG
    from gpu_garden.memory.llm.runtimes import vllm as V
    assert cards.compute_capability(gpu) == cc
    assert V.pre_ampere(gpu) is True
    assert SG.awq_experts_dense(gpu) is True


@pytest.mark.parametrize("gpu", ["NVIDIA GeForce RTX 3090", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3",
                                 "NVIDIA GeForce RTX 2050", "NVIDIA L4", "NVIDIA RTX A6000", "NVIDIA GeForce RTX 4090",
                                 "", None])
def test_ampere_and_newer_or_unnamed_are_not_pre_ampere(gpu):
    from gpu_garden.memory.llm.runtimes import vllm as V
    assert V.pre_ampere(gpu) is False


# Every "gpu" text of benchmarks/data/llm_measured.json that is below 8.0, by the start of the text: the 30 the former
# PRE_AMPERE pattern matched (unchanged) and the three pre-Volta cards it missed (K80, M60, Quadro P1000), which the
# compute-capability table names. All others (382 distinct texts when written) are not.
PRE_AMPERE_DATA = (
    "2x NVIDIA GeForce RTX 2080 Ti 22 GB", "2x NVIDIA Quadro RTX 6000 24 GB", "2x RTX 2080 Ti 22 GB",
    "2x Tesla T4 15 GB", "2x Tesla V100 32 GB", "3 GPUs (V100 32 GB", "3 GPUs: 2x NVIDIA GeForce RTX 4090 24 GB + Tesla V100",
    "CUDA0 = NVIDIA GeForce RTX 2060", "NVIDIA GeForce GTX 1070 Ti 8 GB (Pascal) through the Vulkan backend, Windows 11 Pro",
    "NVIDIA GeForce GTX 1070 Ti 8 GB (Pascal) through the Vulkan backend, Windows 11, driver",
    "NVIDIA GeForce GTX 1650 4 GB (Turing, compute 7.5), Windows, driver 610.88, 3296",
    "NVIDIA GeForce GTX 1650 4 GB (Turing, compute 7.5), Windows, driver 610.88, 3801",
    "NVIDIA GeForce GTX 1650 Ti Mobile", "NVIDIA GeForce GTX 1660 Ti 6 GB", "NVIDIA GeForce RTX 2060 6 GB",
    "NVIDIA GeForce RTX 2080 8 GB", "NVIDIA GeForce RTX 3060 12 GB (the file's heading", "NVIDIA Tesla T4 (compute 7.5: 'FA2 is only supported on devices with compute capability >= 8'; XFormers",
    "NVIDIA Tesla T4 16 GB (Ollama", "NVIDIA Tesla V100-SXM2-32GB", "RTX 2060 12 GB", "RTX 2080 Ti, 9.9 GiB",
    "Tesla T4 (Colab)", "Tesla T4 (compute 7.5), Colab", "Tesla T4 (compute 7.5; 'Total VRAM", "Tesla T4 (compute 7.5; Ollama: total 15.0 GiB, 'gpu memory' available 14.1",
    "Tesla T4 15 GB", "Tesla T4 16 GB (Google Colab)", "Tesla V100-SXM2-32GB (31.7", "the file names both an RTX 3060",
    # below Volta, missed by the former pattern
    "2x Tesla K80", "NVIDIA Quadro P1000", "Tesla M60",
    # batch 50 (vllm-healthmaps, vLLM 0.19.1 on a Colab T4)
    "NVIDIA Tesla T4 16 GB (compute 7.5; the OOM",
    # batch 51 (ollama-cs6501 0.15.2 on a T4; ghghang2's llama.cpp T4 rows share batch 45's text)
    "Tesla T4 (compute 7.5; Ollama: total 15.0 GiB, 'gpu memory' available 14.3",
    "NVIDIA GeForce GTX 1660 SUPER 6 GB (TU116)",  # batch 51 (Turing, 7.5, through Vulkan)
    # batch 58 (vllm-mrefaat, vLLM 0.17.1 on an AWS T4: eager GPTQ and AWQ runs)
    "NVIDIA Tesla T4 15 GB (AWS Deep Learning AMI, driver 580.126.09;",
    "NVIDIA Tesla T4 15 GB (AWS Deep Learning AMI, driver 580.126.09)",
    # batch 59 (sergeykit: Ollama 0.32.14 and vLLM 0.27.1 on a GTX 1650 SUPER, Turing 7.5)
    "NVIDIA GeForce GTX 1650 SUPER (4 GB, Turing sm_75)", "NVIDIA GeForce GTX 1650 SUPER (4 GB, sm_75)",
    # batch 60 (zjpzhao: vLLM 0.11.0 on a T4, the same repository as batch 45's XFormers row)
    "NVIDIA Tesla T4 (compute 7.5: 'FA2 is only supported on devices with compute capability >= 8'), vLLM",
    # batch 62 (ghghang2/repo: llama.cpp b8193 on a T4)
    "NVIDIA Tesla T4 16 GB (compute 7.5), Colab-style",
    # batch 63 (ghghang2/v1.6: llama.cpp b8193-b8854 on a T4)
    "Tesla T4 16 GB (compute 7.5; 'Total VRAM: 14912 MiB'",
    # batch 67 (ghghang2/v1.3: llama.cpp b7772 on a T4)
    "Tesla T4 16 GB (compute 7.5), Colab-style",
    # batch 82 (xbill9/gemma4-dev: vLLM 0.29.0 on a GCE T4; aither-project: vLLM 0.27.1 TP2 on two 22 GB Turing cards)
    "NVIDIA Tesla T4 16 GB (SM 7.5, 15360 MiB, driver 615.71.09", "2x Turing sm_75 cards of ~22 GB",
    # batch 83 (miminashi/llm-server-ops: llama.cpp b8829 / b8893 on 4x Tesla P100, Pascal 6.0), one text per setting
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 28",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 36 blocks kept",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8893 ('build_info: b8893-6217b4958'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 14 blocks kept in CPU RAM by -ot and --tensor-split 11,12",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8893 ('build_info: b8893-6217b4958'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 14 blocks kept in CPU RAM by -ot and --tensor-split 11,14",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8893 ('build_info: b8893-6217b4958'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 24",
    # batch 105 (miminashi/llm-server-ops again, the same host and builds: settings batch 83 did not cover)
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 24",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 30",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 36 blocks (plus",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 14 threads; MoE expert tensors of 18",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 14 blocks kept in CPU RAM by -ot and --tensor-split 11,12,13,14",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 18 blocks kept in CPU RAM by -ot and --tensor-split 13,11",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8893 ('build_info: b8893-6217b4958'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 18 blocks kept in CPU RAM by -ot and --tensor-split 11,12",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8893 ('build_info: b8893-6217b4958'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 18 blocks kept in CPU RAM by -ot and --tensor-split 11,14",
    # batch 109 (miminashi/llm-server-ops: settings batches 83 and 105 did not cover)
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 32 threads; MoE expert tensors of 42 blocks kept in CPU RAM by -ot",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 14 blocks kept in CPU RAM by -ot and --tensor-split 11,12,14,13",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8829 ('build_info: b8829-6990e2f1f'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 18 blocks kept in CPU RAM by -ot, no --tensor-split",
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8893 ('build_info: b8893-6217b4958'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 16 blocks kept in CPU RAM by -ot and --tensor-split 11,12,13,14",
    # (the ...-32k-ub2048-ot36 row's text, which named the summary it was not read from, is batch 83's 36-block text since
    # round 104 made its startup log the row's url)
    "4x NVIDIA Tesla P100-PCIE-16GB (compute capability 6.0, 'VRAM: 16269 MiB' each, '16013 MiB free' each at load)"
    " in host t120h-p100; llama.cpp CUDA build b8893 ('build_info: b8893-6217b4958'), llama-server under numactl --cpunodebind=1 --membind=1, 40 threads; MoE expert tensors of 20 blocks kept in CPU RAM by -ot and --tensor-split 11,14,14,11",
    # batch 91 (ThiagoJGK/gibd: Ollama on a Kaggle T4)
    "NVIDIA Tesla T4 (compute capability 7.5) in a Kaggle notebook",
    # batch 100 (ik_llama.cpp #397 and #398, two Turing T4s)
    "2x Tesla T4 16 GB (compute capability 7.5), --split-mode row",
    "2x Tesla T4 16 GB (compute capability 7.5), layer split",
    # batch 102 (llama.cpp #10050 on a Turing RTX 2080; the 1Cat vLLM fork on four Volta V100s)
    "one NVIDIA GeForce RTX 2080 8 GB (compute capability 7.5", "4x Tesla V100 32 GB (SM70;",
    # batch 123 (vllm#5248: vLLM 0.4.x, tensor parallel 2 on two Turing T4s)
    "2x NVIDIA Tesla T4 16 GB (the comment",
)


def test_every_measured_gpu_text_against_the_table():
    from gpu_garden.memory.llm.runtimes import vllm as V
    names = sorted(set(re.findall(r'"gpu": "([^"]*)"', (ROOT / "benchmarks/data/llm_measured.json").read_text())))
    assert len(names) >= 380
    for prefix in PRE_AMPERE_DATA:
        assert sum(n.startswith(prefix) for n in names) == 1, prefix
    wrong = [n for n in names if V.pre_ampere(n) is not any(n.startswith(p) for p in PRE_AMPERE_DATA)]
    assert wrong == []
