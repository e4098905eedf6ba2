"""Ollama's placement over several GPUs (llm/memory.go EstimateGPULayers, 0.3-0.11): every GPU with room is charged
the reserve, a layer as buffer and the graph (GPU 0 also the projector), the layers go round-robin and a GPU that
cannot take the next one leaves the list, so on GPUs of equal free memory the layers placed are the sum of each
GPU's whole layers. Printed layer counts from the threads named; the one-GPU figure kv gave before is beside each."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import ollama as OL

GiB = 1 << 30


def test_layers_are_the_sum_of_each_gpus_room():
    assert OL.multi_gpu_layers(10.0, 10.0, 1.0, 3, 100) == 30
    assert OL.multi_gpu_layers(8.5, 10.0, 1.0, 3, 100) == 28      # GPU 0 also holds the projector
    assert OL.multi_gpu_layers(10.0, 10.0, 1.0, 3, 25) == 25      # no more than the model's layers
    # the output layer needs one GPU with room left after its round-robin share (13 + 12 layers on two GPUs)
    assert OL.output_fits(14.0, 14.0, 1.0, 2, 25, 1.5)
    assert not OL.output_fits(13.5, 13.5, 1.0, 2, 25, 1.5)


def test_qwen3_235b_over_five_3090s():
    # ollama/ollama#10810 (0.7.0): layers.offload=65, layers.split=13,13,13,13,13 on 5 x 23.2 GiB (one GPU: 14)
    s = llm.describe(model="qwen3:235b")
    r = llm.plan(s, "ollama", ctx=4096, vram=23.2 * GiB, num_gpus=5, runtime_version="0.7.0")
    assert 60 <= r["gpu_layers_used"] <= 72 and not r["fits_as_requested"]


def test_deepseek_r1_671b_over_two_a100_40gb():
    # ollama/ollama#9170 (0.5.11): layers.offload=13 of 62 over two A100 40 GB at num_ctx 8192 (one GPU: 7)
    s = llm.describe(model="deepseek-r1:671b")
    r = llm.plan(s, "ollama", ctx=8192, vram=39.5 * GiB, num_gpus=2, runtime_version="0.5.11")
    assert 11 <= r["gpu_layers_used"] <= 15
