"""Upscale model tables for tests (the ups63/ups64 unit tests, the web test of the pixel upscale row): hand-made with
the real shapes of RRDBNet (23 blocks, 64 features, growth 32; ESRGAN's old keys as 4x-UltraSharp has them) and
SRVGGNetCompact (realesr-general-x4v3: 64 features, 32 convs). {name: (dtype, shape)}, for a sparse .safetensors header
(write) or torch.save of zeros."""
from .safetensors_files import sparse_safetensors

# RRDBNet x4, 23 blocks, nf 64, gc 32, by hand:
#   conv_first 3->64 3x3: 64*3*9 + 64 = 1,792
#   one RDB: conv1 64->32 18,464; conv2 96->32 27,680; conv3 128->32 36,896; conv4 160->32 46,112; conv5 192->64 110,656
#            = 239,808; one RRDB = 3 RDBs = 719,424; 23 RRDBs = 16,546,752
#   trunk, upconv1, upconv2, HRconv 64->64: 4 x 36,928 = 147,712
#   conv_last 64->3: 3*64*9 + 3 = 1,731                      total 16,697,987 values; fp32 (as spandrel holds it) x4
RRDB_VALUES = 1_792 + 16_546_752 + 147_712 + 1_731
RRDB_FP32 = 66_791_948
RDB = ((32, 64), (32, 96), (32, 128), (32, 160), (64, 192))


def rrdb_old(dtype="F16"):
    """ESRGAN's old keys (4x-UltraSharp, NMKD): model.0, model.1.sub.N.RDBr.convc.0, model.1.sub.23, model.3/6 (the two
    upsampling convs), model.8, model.10: get_seq_len("model") = 11, log2(scale) = (11 - 5) // 3 = 2."""
    t = {"model.0.weight": (dtype, [64, 3, 3, 3]), "model.0.bias": (dtype, [64])}
    for i in range(23):
        for r in (1, 2, 3):
            for c, (o, n) in enumerate(RDB, 1):
                t[f"model.1.sub.{i}.RDB{r}.conv{c}.0.weight"] = (dtype, [o, n, 3, 3])
                t[f"model.1.sub.{i}.RDB{r}.conv{c}.0.bias"] = (dtype, [o])
    for k in ("model.1.sub.23", "model.3", "model.6", "model.8"):
        t[k + ".weight"], t[k + ".bias"] = (dtype, [64, 64, 3, 3]), (dtype, [64])
    t["model.10.weight"], t["model.10.bias"] = (dtype, [3, 64, 3, 3]), (dtype, [3])
    return t


def compact(dtype="F32"):
    """realesr-general-x4v3: body.0 conv 3->64 (1,792), 33 PReLUs (33 x 64 = 2,112), 32 convs 64->64 (32 x 36,928 =
    1,181,696), body.66 conv 64->48 = 3 x 4^2 (27,696): 1,213,296 values, scale 4."""
    t = {"body.0.weight": (dtype, [64, 3, 3, 3]), "body.0.bias": (dtype, [64])}
    for i in range(1, 66, 2):
        t[f"body.{i}.weight"] = (dtype, [64])
        if i + 1 < 66:
            t[f"body.{i + 1}.weight"], t[f"body.{i + 1}.bias"] = (dtype, [64, 64, 3, 3]), (dtype, [64])
    t["body.66.weight"], t["body.66.bias"] = (dtype, [48, 64, 3, 3]), (dtype, [48])
    return t


def write(table, path):
    """A sparse .safetensors file of the table (its header, a hole as long as its data)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sparse_safetensors(path, table)
    return path
