"""fix6: review rev6's triage findings, with hand-written inputs modelled on the review's reproducers and the expected values
worked out by hand.

B3. jaxlib before ~0.4.14 vendored XLA under external/org_tensorflow/tensorflow/compiler/xla/...: those paths are JAX's build
    logging, not TensorFlow's own words, so XLA's new-constant refusal with only them stays JAX's.
B1. nvidia-smi's compute-apps table after a failure: the failing process's own figure ("this process has N memory in use",
    else PyTorch's reserved memory) is taken off the rows' sum (a server that logs an OOM and keeps serving is still listed),
    and only a table within SMI_APPS_SPAN lines after the failure, before the next failure, counts.
B2. A later line's stage (round 114's repeat) is read only after the failure's own line and chain, only where the failure's
    own preceding lines name no stage (they are its request's context), and the nearest such line."""
import pytest

from support.triage_event import SMI_APPS_HEADER, TORCH_OOM_2250, top
from gpu_garden.memory.triage.fact_patterns import FACTS
from gpu_garden.memory.triage.processes import SMI_APPS_SPAN

TF_OWN = dict(FACTS)["tf_own"]
OOM = 'DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")'


# --- B3. org_tensorflow/ paths inside a JAX build ----------------------------------------------------------------------
OLD_JAXLIB = """2023-05-01 10:00:00.000000: W external/org_tensorflow/tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:1234] could not query device memory
2023-05-01 10:00:01.000000: E external/org_tensorflow/tensorflow/compiler/xla/service/gpu/gpu_executable.cc:200] INTERNAL: Failed to allocate 268435456 bytes for new constant
"""


def test_vendored_xla_paths_are_not_tensorflows_words():
    _, _, ev = top(OLD_JAXLIB)
    assert ev["runtime"] == "jax"
    assert ev["numbers"]["requested"] == 268435456     # 256 MiB, as printed


@pytest.mark.parametrize("line, hit", [
    ("E external/org_tensorflow/tensorflow/compiler/xla/service/gpu/gpu_executable.cc:200] INTERNAL", False),
    ("W external\\org_tensorflow\\tensorflow\\tsl\\platform\\default\\port.cc:1] x", False),
    ("I tensorflow/compiler/xla/service/service.cc:168] XLA service", True),     # TensorFlow's own tree
    ("2024 I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] Created device", True),
])
def test_tf_own_skips_org_tensorflow(line, hit):
    assert bool(TF_OWN.search(line)) is hit


# --- B1. the compute-apps table listing the failing process itself -------------------------------------------------------
TORCH_OOM = TORCH_OOM_2250
SMI = SMI_APPS_HEADER


def test_table_listing_only_this_process_is_not_another_program():
    # 23040 MiB = 22.50 GiB, this process's own figure: nothing is left for another program
    cause, conf, _ = top(TORCH_OOM + SMI + "4242, /usr/bin/python3, 23040 MiB\n")
    assert cause == "activations"
    assert "other-process" not in conf or conf["other-process"] < conf["activations"]


def test_table_with_another_program_beside_this_one_still_reads_it():
    # 23040 + 6144 MiB listed, less this process's 23040 MiB: 6 GiB held by the other server, past 1.5 GiB
    cause, _, _ = top(TORCH_OOM + SMI + "4242, /usr/bin/python3, 23040 MiB\n5151, /opt/srv/bin/other-server, 6144 MiB\n")
    assert cause == "other-process"


APPS = """loaded model (48 layers)
Error: {oom}
{gap}pid, process_name, used_gpu_memory [MiB]
5151, /opt/srv/bin/other-server, 12000 MiB
"""


def test_table_far_after_the_failure_is_not_read():
    near = top(APPS.format(oom=OOM, gap="step\n" * (SMI_APPS_SPAN - 2)))[0]
    far = top(APPS.format(oom=OOM, gap="step\n" * (SMI_APPS_SPAN + 5)))[0]
    assert near == "other-process"
    assert far != "other-process"


# --- B2. a later, different request's stage ------------------------------------------------------------------------------
TWO_REQUESTS = """INFO server: starting
ERROR request 1: prefill forward pass failed
Caused by:
    {oom}
INFO request 2 admitted
ERROR request 2: cache alloc failed: {oom}
""".format(oom=OOM)


def test_later_requests_stage_is_not_this_failures():
    cause, _, _ = top(TWO_REQUESTS)
    assert cause != "kv-cache"


NEAREST = """[server] listening on http://127.0.0.1:8000
[batch] failed ({oom}); single requests serve
HTTP Error 400: Bad Request {{"error":"cache alloc failed: {oom}"}}
HTTP Error 400: Bad Request {{"error":"prefill forward pass failed: {oom}"}}
""".format(oom=OOM)


def test_nearest_repeat_names_the_stage():
    # the first repeat names the cache's allocation; the last, a prefill: the nearest one is read
    assert top(NEAREST)[0] == "kv-cache"


# --- B4. gRPC's RESOURCE_EXHAUSTED with bytes mid-line --------------------------------------------------------------------
def test_grpc_message_size_opens_no_incident():
    from gpu_garden.memory.triage import engine
    assert not engine.triage_text("E0101 rpc failed: RESOURCE_EXHAUSTED: ... 26214400 bytes over the max message size\n")["found"]


@pytest.mark.parametrize("line, req", [
    ("RESOURCE_EXHAUSTED ... 53616328704 bytes\n", 53616328704),              # the bytes end the line: XLA's, as before
    ("f raised XlaRuntimeError: RESOURCE_EXHAUSTED \u2026 23887872256 bytes.\n", 23887872256),
])
def test_elided_xla_status_still_read(line, req):
    _, _, ev = top(line)
    assert ev["kind"] == "xla.oom" and ev["numbers"]["requested"] == req


# --- B6. CuPy's class on a bare-figure line -------------------------------------------------------------------------------
def test_cupy_class_with_bare_figure_stays_cupy():
    _, _, ev = top("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1024 bytes\n")
    assert (ev["kind"], ev["runtime"]) == ("cupy.oom", "cupy")
    assert ev["numbers"]["requested"] == 1024


# --- B7. MONAI Label's planner figure, by line ---------------------------------------------------------------------------
PLANNER = "[INFO] (monailabel.utils.others.planner:71) - Available GPU memory: {{0: {mb}}} in MB\n"
TORCH_OLD = ("[ERROR] (ignite.engine.engine.SupervisedTrainer:853) - Current run is terminating due to exception: CUDA out of "
             "memory. Tried to allocate {req}.00 MiB (GPU 0; 6.00 GiB total capacity; 4.50 GiB already allocated; 0 bytes "
             "free; 4.80 GiB reserved in total by PyTorch)\n")
MiB = 1 << 20


def test_planner_figure_of_each_failures_own_stretch():
    # two server starts, each measuring before its failure: each failure reads its own (the last one no longer wins)
    from gpu_garden.memory.triage import engine
    text = (PLANNER.format(mb=3000) + "training\n" * 3 + TORCH_OLD.format(req=64) + "restart\n" * 30
            + PLANNER.format(mb=1000) + "training\n" * 3 + TORCH_OLD.format(req=96))
    evs = [e for e in engine.triage_text(text)["events"] if e["kind"] == "torch.cuda"]
    assert [(e["numbers"]["requested"], e["numbers"].get("available")) for e in evs] == [(64 * MiB, 3000 * MiB), (96 * MiB, 1000 * MiB)]


def test_planner_quoted_after_the_error_is_still_read():
    # a paste quoting the server's start-up lines after its error (no failure after it): that figure, as round 113 read it
    _, _, ev = top(TORCH_OLD.format(req=64) + "monailabel start_server --app apps/radiology\n" + PLANNER.format(mb=2100))
    assert ev["numbers"]["available"] == 2100 * MiB


# --- S4. exactly half the tiny card: the weights row stands aside as the activations row takes it ---------------------------
def test_tiny_card_request_of_exactly_half_is_activations():
    # 1.00 GiB of 2.00 GiB is 50 %, which the activations row reads (>=); 100 MiB held is 4.9 %, under a tenth
    text = ("Predicting...\nRuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; 2.00 GiB total capacity; "
            "100.00 MiB already allocated; 1.20 GiB free; 110.00 MiB reserved in total by PyTorch)\n")
    cause, conf, _ = top(text)
    assert cause == "activations"
    assert conf.get("weights-exceed-vram", 0) < conf["activations"]


# --- S3. the BFC warning's bare allocator name, by its own group ----------------------------------------------------------
@pytest.mark.parametrize("line, dev", [
    ("GPU_3_bfc ran out of memory trying to allocate 5.66 GiB\n", "cuda"),
    ("cpu_0_bfc ran out of memory trying to allocate 5.66 GiB\n", "cpu"),
])
def test_bare_bfc_name_names_the_device(line, dev):
    from gpu_garden.memory.triage.xla_runtimes import bfc
    ev = bfc(line)
    assert ev["device_kind"] == dev and ev["numbers"]["requested"] == round(5.66 * (1 << 30))
