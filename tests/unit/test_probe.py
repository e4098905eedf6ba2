import json

import pytest

from gpu_garden.memory.budget import probe
from support.pack import run_python
from gpu_garden.memory.budget.probe import CudaBackend, MpsBackend, Nvml, XpuBackend, parse_visible_devices, snapshot

from fake_gpu import (GiB, MiB, AmdSmiLibraryException, FakeAmdGpu, FakeAmdSmi, FakeCuda, FakeHost, FakeMps, FakeNvmlGpu,
                      FakePynvml, FakeXpu, NVMLError_DriverNotLoaded,
                      NVMLError_LibRmVersionMismatch, NVMLError_NotSupported, StaticNvml, cuda_props)

ME, OTHER, DESKTOP = 4242, 777, 1300
UUID_A = "GPU-6a5c2f1e-0d8b-4f0e-9d3c-1b2a3c4d5e6f"
UUID_B = "GPU-b81f2e7a-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
DEVICE_KEYS = {"index", "name", "backend", "total", "free", "torch_allocated", "torch_reserved", "reserved_unallocated",
               "this_process_other", "other_processes", "models", "notes"}


def two_gpus():
    """NVML order (PCI bus): a 4090 at bus 0x01, a 3060 at bus 0x41."""
    return [
        FakeNvmlGpu(UUID_A, "NVIDIA GeForce RTX 4090", (0, 0x01, 0), 24 * GiB, 10 * GiB,
                    procs=[(ME, 12 * GiB + 600 * MiB), (OTHER, 1 * GiB)], graphics=[(DESKTOP, 400 * MiB)]),
        FakeNvmlGpu(UUID_B, "NVIDIA GeForce RTX 3060", (0, 0x41, 0), 12 * GiB, 11 * GiB, procs=[(OTHER, 500 * MiB)]),
    ]


def torch_4090(allocated=10 * GiB, reserved=12 * GiB):
    # torch formats the CUDA uuid without the "GPU-" prefix
    return {"props": cuda_props("NVIDIA GeForce RTX 4090", UUID_A[4:], 24 * GiB, (0, 0x01, 0)),
            "allocated": allocated, "reserved": reserved, "free": 10 * GiB}


def check_schema(snap):
    json.dumps(snap)  # plain JSON
    assert set(snap) >= {"devices", "host_ram", "sampled_at"}
    assert isinstance(snap["sampled_at"], float)
    assert set(snap["host_ram"]) == {"total", "available"}
    for d in snap["devices"]:
        assert set(d) >= DEVICE_KEYS
        for k in probe.NUMBERS:
            assert d[k] is None or (isinstance(d[k], int) and d[k] >= 0), (k, d[k])
        for m in d["models"]:
            assert isinstance(m["name"], str) and isinstance(m["bytes"], int) and "device" not in m
        assert all(isinstance(n, str) for n in d["notes"])


def test_cuda_with_torch_and_nvml_splits_memory_by_owner():
    nv = FakePynvml(two_gpus())
    cuda = FakeCuda([torch_4090()])
    models = [{"name": "SDXL (SDXL)", "device": "cuda:0", "bytes": 5 * GiB, "total_bytes": 5 * GiB, "partial": False},
              {"name": "SDXLClipModel", "device": "cuda", "bytes": 1 * GiB, "total_bytes": 2 * GiB, "partial": True}]
    snap = snapshot(models, backends=[CudaBackend(cuda, StaticNvml(nv), env={}, pid=ME)], host=FakeHost())
    check_schema(snap)
    (d,) = snap["devices"]
    assert (d["index"], d["name"], d["backend"], d["device"]) == (0, "NVIDIA GeForce RTX 4090", "cuda", "cuda:0")
    assert d["total"] == 24 * GiB and d["free"] == 10 * GiB
    assert d["torch_allocated"] == 10 * GiB and d["torch_reserved"] == 12 * GiB
    assert d["reserved_unallocated"] == 2 * GiB
    assert d["this_process_other"] == 600 * MiB  # NVML's figure for this pid minus what PyTorch reserved
    assert d["other_processes"] == 1 * GiB + 400 * MiB  # compute + graphics (desktop) processes
    assert [(m["name"], m["bytes"], m["partial"]) for m in d["models"]] == [
        ("SDXL (SDXL)", 5 * GiB, False), ("SDXLClipModel", 1 * GiB, True)]
    assert snap["host_ram"] == {"total": 32 * GiB, "available": 20 * GiB}
    assert "synchronize" not in cuda.calls and "mem_get_info" not in cuda.calls


def test_cuda_visible_devices_maps_torch_index_to_nvml_by_uuid():
    # CUDA_VISIBLE_DEVICES=1: torch's cuda:0 is NVML's device 1 (the 3060)
    gpus = two_gpus()
    nv = FakePynvml(gpus)
    dev = {"props": cuda_props("NVIDIA GeForce RTX 3060", UUID_B[4:], 12 * GiB, (0, 0x41, 0)),
           "allocated": 1 * GiB, "reserved": 1 * GiB, "free": 0}
    gpus[1].procs.append((ME, 1 * GiB + 300 * MiB))
    snap = snapshot(backends=[CudaBackend(FakeCuda([dev]), StaticNvml(nv), env={"CUDA_VISIBLE_DEVICES": "1"}, pid=ME)],
                    host=FakeHost())
    (d,) = snap["devices"]
    assert d["name"] == "NVIDIA GeForce RTX 3060" and d["total"] == 12 * GiB and d["free"] == 11 * GiB
    assert d["this_process_other"] == 300 * MiB and d["other_processes"] == 500 * MiB


def test_torch_matches_by_pci_address_when_uuid_missing():
    nv = FakePynvml(two_gpus())
    dev = torch_4090()
    dev["props"].uuid = None
    dev["props"].name = "torch name"
    snap = snapshot(backends=[CudaBackend(FakeCuda([dev]), StaticNvml(nv), env={}, pid=ME)], host=FakeHost())
    assert snap["devices"][0]["total"] == 24 * GiB and snap["devices"][0]["other_processes"] == 1 * GiB + 400 * MiB


def test_nvml_only_never_touches_torch_cuda_before_init():
    nv = FakePynvml(two_gpus())
    cuda = FakeCuda([torch_4090()], initialized=False)
    env = {"CUDA_VISIBLE_DEVICES": "GPU-b81f", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    snap = snapshot(backends=[CudaBackend(cuda, StaticNvml(nv), env=env, pid=99)], host=FakeHost())
    check_schema(snap)
    assert [c for c in cuda.calls] == []  # no device_count, no stats: nothing that initializes CUDA
    (d,) = snap["devices"]
    assert d["name"] == "NVIDIA GeForce RTX 3060" and d["index"] == 0 and d["device"] == "cuda:0"
    assert d["torch_allocated"] is None and d["torch_reserved"] is None and d["reserved_unallocated"] is None
    assert d["other_processes"] == 500 * MiB  # this process holds nothing: every listed process is another


def test_nvml_only_without_torch_lists_visible_gpus_in_order():
    nv = FakePynvml(two_gpus())
    snap = snapshot(backends=[CudaBackend(None, StaticNvml(nv), env={"CUDA_VISIBLE_DEVICES": "1,0"}, pid=99)],
                    host=FakeHost())
    names = [d["name"] for d in snap["devices"]]
    assert names == ["NVIDIA GeForce RTX 3060", "NVIDIA GeForce RTX 4090"]
    assert [d["index"] for d in snap["devices"]] == [0, 1]
    assert any("CUDA_DEVICE_ORDER=PCI_BUS_ID" in n for n in snap["notes"])  # mixed GPUs, default CUDA order


@pytest.mark.parametrize("error, text", [
    (NVMLError_DriverNotLoaded(), "Driver Not Loaded"),
    (NVMLError_LibRmVersionMismatch(), "NVML/RM version mismatch"),
])
def test_nvml_failure_with_torch_gives_partial_snapshot(error, text):
    nv = FakePynvml(two_gpus(), init_error=error)
    holder = Nvml(module=nv)
    snap = snapshot(backends=[CudaBackend(FakeCuda([torch_4090()]), holder, env={}, pid=ME)], host=FakeHost())
    check_schema(snap)
    (d,) = snap["devices"]
    assert d["torch_allocated"] == 10 * GiB and d["reserved_unallocated"] == 2 * GiB
    # PyTorch holds memory there, so a context exists and cudaMemGetInfo is safe
    assert d["total"] == 24 * GiB and d["free"] == 10 * GiB
    assert d["other_processes"] is None and d["this_process_other"] is None
    assert any(text in n and type(error).__name__ in n for n in snap["notes"]), snap["notes"]


def test_nvml_failure_without_torch_falls_back_to_host_ram_with_reason():
    holder = Nvml(module=FakePynvml([], init_error=NVMLError_LibRmVersionMismatch()))
    snap = snapshot(backends=[CudaBackend(None, holder, env={}, pid=1)], host=FakeHost())
    check_schema(snap)
    (d,) = snap["devices"]
    assert d["backend"] == "cpu" and d["total"] == 32 * GiB and d["free"] == 20 * GiB
    assert any("NVMLError_LibRmVersionMismatch" in n for n in d["notes"])


def test_nvml_failure_is_remembered_not_retried_every_snapshot():
    nv = FakePynvml([], init_error=NVMLError_DriverNotLoaded())
    holder = Nvml(module=nv, retry_s=60)
    for _ in range(5):
        snapshot(backends=[CudaBackend(None, holder, env={}, pid=1)], host=FakeHost())
    assert nv.init_calls == 1


def test_no_context_on_untouched_device_when_nvml_missing():
    # device 1 has no PyTorch memory: mem_get_info would create a context there (FakeCuda raises if asked)
    dev1 = {"props": cuda_props("NVIDIA GeForce RTX 3060", UUID_B[4:], 12 * GiB), "allocated": 0, "reserved": 0, "free": 0}
    snap = snapshot(backends=[CudaBackend(FakeCuda([torch_4090(), dev1]), StaticNvml(error="NVML not available: x"),
                                          env={}, pid=ME)], host=FakeHost())
    d0, d1 = snap["devices"]
    assert d0["free"] == 10 * GiB
    assert d1["total"] == 12 * GiB and d1["free"] is None  # from device properties only


def test_unknown_per_process_usage_is_null_not_zero():
    gpus = two_gpus()
    gpus[0].procs = [(ME, None), (OTHER, None)]  # Windows WDDM: NVML_VALUE_NOT_AVAILABLE -> None
    snap = snapshot(backends=[CudaBackend(FakeCuda([torch_4090()]), StaticNvml(FakePynvml(gpus)), env={}, pid=ME)],
                    host=FakeHost())
    d = snap["devices"][0]
    assert d["other_processes"] is None and d["this_process_other"] is None
    assert any("per-process" in n for n in d["notes"])


def test_container_pid_namespace_leaves_split_unknown():
    gpus = two_gpus()
    gpus[0].procs = [(91234, 12 * GiB + 600 * MiB), (OTHER, 1 * GiB)]  # host pids, none is ours
    gpus[0].graphics = []
    snap = snapshot(backends=[CudaBackend(FakeCuda([torch_4090()]), StaticNvml(FakePynvml(gpus)), env={}, pid=ME)],
                    host=FakeHost())
    d = snap["devices"][0]
    assert d["other_processes"] is None and d["this_process_other"] is None
    assert d["total"] == 24 * GiB and d["torch_reserved"] == 12 * GiB
    assert any("pid namespace" in n for n in d["notes"])


def test_process_list_not_supported_keeps_memory_numbers():
    nv = FakePynvml(two_gpus(), process_error=NVMLError_NotSupported())
    snap = snapshot(backends=[CudaBackend(FakeCuda([torch_4090()]), StaticNvml(nv), env={}, pid=ME)], host=FakeHost())
    d = snap["devices"][0]
    assert d["free"] == 10 * GiB and d["other_processes"] is None
    assert any("NVMLError_NotSupported: Not Supported" in n for n in d["notes"])


def test_cuda_malloc_async_is_named():
    snap = snapshot(backends=[CudaBackend(FakeCuda([torch_4090()], allocator="cudaMallocAsync"),
                                          StaticNvml(FakePynvml(two_gpus())), env={}, pid=ME)], host=FakeHost())
    assert any("cudaMallocAsync" in n for n in snap["devices"][0]["notes"])


def rx7900():
    return {"props": cuda_props("AMD Radeon RX 7900 XTX", "58f1a2b3c4d5e6f7", 24 * GiB, (0, 0x43, 0)), "allocated": 3 * GiB,
            "reserved": 4 * GiB, "free": 15 * GiB}


def test_rocm_with_torch_only():
    b = CudaBackend(FakeCuda([rx7900()]), StaticNvml(error="AMD SMI not available: x"), hip=True, env={}, pid=ME)
    snap = snapshot([{"name": "Flux", "device": "cuda:0", "bytes": 3 * GiB}], backends=[b], host=FakeHost())
    (d,) = snap["devices"]
    assert (d["backend"], d["total"], d["free"], d["reserved_unallocated"]) == ("rocm", 24 * GiB, 15 * GiB, 1 * GiB)
    assert d["models"][0]["name"] == "Flux" and d["other_processes"] is None
    assert any("without amdsmi" in n for n in d["notes"])


def amd_gpus(hip_ids=(1, 0)):
    # amdsmi order differs from HIP's: the iGPU-less workstation with a W7900 first on the bus
    return [FakeAmdGpu("AMD Radeon PRO W7900", "0000:03:00.0", hip_ids[0], 49136, 2048, procs=[(OTHER, 1 * GiB)]),
            FakeAmdGpu("AMD Radeon RX 7900 XTX", "0000:43:00.0", hip_ids[1], 24560, 4915,
                       procs=[(ME, 4 * GiB + 600 * MiB), (OTHER, 200 * MiB)])]


@pytest.mark.parametrize("legacy", [False, True], ids=["rocm6.1+", "rocm6.0-handles"])
def test_rocm_with_torch_and_amdsmi_matches_by_pci(legacy):
    smi = FakeAmdSmi(amd_gpus(), legacy_process_handles=legacy)
    b = CudaBackend(FakeCuda([rx7900()]), StaticNvml(smi), hip=True, env={}, pid=ME)
    (d,) = snapshot(backends=[b], host=FakeHost())["devices"]
    assert d["name"] == "AMD Radeon RX 7900 XTX" and d["backend"] == "rocm"
    assert d["total"] == 24560 * MiB and d["free"] == (24560 - 4915) * MiB  # amdsmi reports MiB
    assert d["this_process_other"] == 600 * MiB and d["other_processes"] == 200 * MiB


def test_amdsmi_without_torch_orders_by_hip_id_and_honours_hip_visible_devices():
    smi = FakeAmdSmi(amd_gpus())
    b = CudaBackend(None, StaticNvml(smi), hip=True, env={"HIP_VISIBLE_DEVICES": "1"}, pid=99)
    (d,) = snapshot(backends=[b], host=FakeHost())["devices"]
    assert d["name"] == "AMD Radeon PRO W7900" and d["index"] == 0  # hip_id 1
    assert d["other_processes"] == 1 * GiB and d["torch_allocated"] is None
    names = [d["name"] for d in snapshot(backends=[CudaBackend(None, StaticNvml(smi), hip=True, env={}, pid=99)],
                                         host=FakeHost())["devices"]]
    assert names == ["AMD Radeon RX 7900 XTX", "AMD Radeon PRO W7900"]


def test_amdsmi_init_failure_is_a_note():
    holder = probe.AmdSmi(module=FakeAmdSmi([], init_error=AmdSmiLibraryException(34, "AMDSMI_STATUS_DRIVER_NOT_LOADED")))
    snap = snapshot(backends=[CudaBackend(FakeCuda([], initialized=False), holder, hip=True, env={}, pid=ME)],
                    host=FakeHost())
    assert snap["devices"][0]["backend"] == "cpu"
    assert any("AMD SMI not available: AmdSmiLibraryException" in n and "DRIVER_NOT_LOADED" in n for n in snap["notes"])


def test_mps_unified_memory():
    # M2 Pro 32 GB: recommendedMaxWorkingSetSize ~ 21.3 GiB
    mps = FakeMps(allocated=6 * GiB, driver=8 * GiB + 512 * MiB, recommended=22906503168)
    snap = snapshot([{"name": "SD15", "device": "mps", "bytes": 2 * GiB}], backends=[MpsBackend(mps, FakeHost())],
                    host=FakeHost())
    check_schema(snap)
    (d,) = snap["devices"]
    assert (d["backend"], d["device"], d["total"]) == ("mps", "mps", 22906503168)
    assert d["torch_allocated"] == 6 * GiB and d["torch_reserved"] == 8 * GiB + 512 * MiB
    assert d["reserved_unallocated"] == 2 * GiB + 512 * MiB
    assert d["free"] == 22906503168 - (8 * GiB + 512 * MiB)  # below host available (20 GiB)
    assert d["models"][0]["bytes"] == 2 * GiB and d["other_processes"] is None


def test_mps_free_capped_by_host_ram():
    mps = FakeMps(allocated=0, driver=1 * GiB, recommended=22906503168)
    d = snapshot(backends=[MpsBackend(mps, FakeHost(available=4 * GiB))], host=FakeHost())["devices"][0]
    assert d["free"] == 4 * GiB


def test_mps_failure_is_a_note():
    mps = FakeMps(0, 0, 0, fail=RuntimeError("MPS backend out of memory"))
    d = snapshot(backends=[MpsBackend(mps, FakeHost())], host=FakeHost())["devices"][0]
    assert d["torch_allocated"] is None and any("RuntimeError" in n for n in d["notes"])


def test_xpu():
    xpu = FakeXpu([{"name": "Intel(R) Arc(TM) A770 Graphics", "total": 16 * GiB, "free": 9 * GiB,
                    "allocated": 5 * GiB, "reserved": 6 * GiB}])
    d = snapshot(backends=[XpuBackend(xpu)], host=FakeHost())["devices"][0]
    assert (d["backend"], d["device"], d["free"], d["reserved_unallocated"]) == ("xpu", "xpu:0", 9 * GiB, 1 * GiB)
    xpu.sysman = False
    d = snapshot(backends=[XpuBackend(xpu)], host=FakeHost())["devices"][0]
    assert d["total"] == 16 * GiB and d["free"] is None and any("ZES_ENABLE_SYSMAN" in n for n in d["notes"])
    assert snapshot(backends=[XpuBackend(FakeXpu([], initialized=False))], host=FakeHost())["devices"][0]["backend"] == "cpu"


def test_a_backend_that_raises_never_breaks_the_snapshot():
    class Broken:
        name = "cuda"

        def devices(self):
            raise OSError("libcuda.so.1: cannot open shared object file")

    snap = snapshot(backends=[Broken()], host=FakeHost())
    check_schema(snap)
    assert snap["devices"][0]["backend"] == "cpu"
    assert "cuda backend failed: OSError: libcuda.so.1" in snap["devices"][0]["notes"][1]


def test_host_failure_is_a_note():
    class NoHost(FakeHost):
        def ram(self):
            raise PermissionError("/proc/meminfo")

    snap = snapshot(backends=[], host=NoHost())
    check_schema(snap)
    assert snap["host_ram"] == {"total": None, "available": None}


def test_cpu_only_lists_models_on_cpu():
    snap = snapshot([{"name": "BaseModel", "device": "cpu", "bytes": 2 * GiB, "partial": False},
                     {"name": "elsewhere", "device": "cuda:3", "bytes": 1}], backends=[], host=FakeHost())
    (d,) = snap["devices"]
    assert d["backend"] == "cpu" and d["name"] == "CPU (host RAM)"
    assert [m["name"] for m in d["models"]] == ["BaseModel"]
    assert d["torch_allocated"] is None  # PyTorch does not track CPU tensors
    assert d["this_process_other"] == 1 * GiB  # resident 3 GiB minus the 2 GiB model
    assert d["other_processes"] == 32 * GiB - 20 * GiB - 3 * GiB


def test_gpu_plus_models_on_cpu_adds_host_device():
    b = CudaBackend(FakeCuda([torch_4090()]), StaticNvml(FakePynvml(two_gpus())), env={}, pid=ME)
    snap = snapshot([{"name": "T5 (text encoder on CPU)", "device": "cpu", "bytes": 9 * GiB}], backends=[b], host=FakeHost())
    assert [d["backend"] for d in snap["devices"]] == ["cuda", "cpu"]
    assert snap["devices"][1]["models"][0]["name"] == "T5 (text encoder on CPU)"


@pytest.mark.parametrize("value, expected", [
    (None, None), ("", []), ("0,1", [0, 1]), ("1", [1]), ("2,-1,3", [2]), ("0,0", []), ("1gpu2,3", [1, 3]),
    ("GPU-b81f,GPU-6a5c", ["GPU-b81f", "GPU-6a5c"]), ("GPU-b81f,1", ["GPU-b81f"]), ("MIG-1234", ["MIG-1234"]),
])
def test_parse_visible_devices_like_cuda(value, expected):
    assert parse_visible_devices(value) == expected


def test_free_bytes_and_table():
    b = CudaBackend(FakeCuda([torch_4090()]), StaticNvml(FakePynvml(two_gpus())), env={}, pid=ME)
    snap = snapshot([{"name": "SDXL", "device": "cuda:0", "bytes": 5 * GiB, "partial": True}], backends=[b], host=FakeHost())
    assert probe.free_bytes(snap) == 10 * GiB
    text = probe.format_table(snap)
    assert "NVIDIA GeForce RTX 4090" in text and "model SDXL: 5.00 GiB (partially loaded)" in text
    assert "10.00" in text and "24.00" in text
    assert probe.free_bytes({"devices": [{"free": None}]}) == 0


def _cli(*args):
    code = ("from gpu_garden.memory.cli import main\n"
            f"rc = main({list(args)!r})\n"
            "assert 'torch' not in sys.modules, 'the probe imported torch'\n"
            "sys.exit(rc)\n")
    return run_python(code, timeout=60)


def test_cli_budget_json_on_this_machine():
    r = _cli("budget", "--json")
    assert r.returncode == 0, r.stderr
    snap = json.loads(r.stdout)
    check_schema(snap)
    assert snap["devices"] and snap["host_ram"]["total"] > 0


def test_cli_budget_table_and_bad_watch():
    r = _cli("budget")
    assert r.returncode == 0, r.stderr
    assert "GPU Garden memory budget" in r.stdout and "host RAM:" in r.stdout
    r = _cli("budget", "--watch", "0")
    assert r.returncode == 2 and "--watch needs a positive number" in r.stderr


def test_demo_section_is_text():
    assert "GPU Garden memory budget" in probe.demo_section()


def test_free_bytes_prefers_the_named_device():
    snap = {"devices": [{"device": "cuda:0", "free": 5}, {"device": "cuda:1", "free": 7}, {"device": "cpu", "free": 9}]}
    assert probe.free_bytes(snap, "cuda:1") == 7 and probe.free_bytes(snap, "cuda") == 5
    assert probe.free_bytes(snap) == 5  # no device named: the first (the CLI's view)


def test_free_bytes_of_a_device_the_probe_does_not_measure_is_unknown_not_another_cards():
    """The VRAM Budget node on DirectML (privateuseone:0) beside an NVIDIA card handed downstream the NVIDIA
    card's free memory; now 0, the node's "unknown" (an INT output cannot carry None)."""
    snap = {"devices": [{"device": "cuda:0", "free": 5}, {"device": "cpu", "free": 9}]}
    assert probe.free_bytes(snap, "privateuseone:0") == 0 and probe.free_bytes(snap, "mps") == 0
    assert probe.free_bytes(snap, "cuda:0") == 5


@pytest.mark.parametrize("watch", [float("inf"), 1e300, float("nan"), -1.0])
def test_watch_out_of_range_is_a_usage_error_before_any_output(watch, capsys):
    """`--watch inf` printed one snapshot, then time.sleep(inf) raised OverflowError with a traceback."""
    import types

    from gpu_garden.memory.errors import UserError

    with pytest.raises(UserError, match="--watch"):
        probe.run_cli(types.SimpleNamespace(watch=watch, json=False))
    assert capsys.readouterr().out == ""
