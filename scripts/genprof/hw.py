"""GPU hardware table used to size kernels and fill device properties.

Numbers are public datasheet figures (dense peak TFLOP/s, HBM bandwidth, PCIe) rounded; they only
need to be plausible, not exact. Unknown GPU names fall back to a profile derived from --cc.
"""

GiB = 1024 ** 3


class GPU:
    __slots__ = ("name", "cc", "sms", "mem", "fp32", "tf32", "tc16", "bw", "pcie", "nvlink",
                 "l2", "chip", "clock_hz", "smem_sm", "smem_optin", "max_thr_sm", "bus")

    def __init__(self, name, cc, sms, mem, fp32, tf32, tc16, bw, pcie, nvlink, l2, chip, clock_mhz,
                 smem_sm, smem_optin, max_thr_sm=2048):
        self.name = name
        self.cc = cc                  # (major, minor)
        self.sms = sms
        self.mem = mem                # bytes
        self.fp32 = fp32 * 1e12       # FLOP/s, SIMT FP32
        self.tf32 = tf32 * 1e12       # FLOP/s, TF32 Tensor Core (== fp32 when none)
        self.tc16 = tc16 * 1e12       # FLOP/s, FP16/BF16 Tensor Core
        self.bw = bw * 1e9            # B/s device memory
        self.pcie = pcie * 1e9        # B/s pinned host<->device
        self.nvlink = nvlink * 1e9    # B/s NCCL bus bandwidth per GPU
        self.l2 = l2
        self.chip = chip
        self.clock_hz = clock_mhz * 1000000
        self.smem_sm = smem_sm
        self.smem_optin = smem_optin
        self.max_thr_sm = max_thr_sm
        self.bus = "0000:07:00.0"

    @property
    def arch(self):
        """Kernel-name family: volta, turing, ampere, ada, hopper, blackwell."""
        major, minor = self.cc
        if major < 7:
            return "pascal"
        if major == 7:
            return "volta" if minor < 5 else "turing"
        if major == 8:
            return "ampere" if minor in (0, 6, 7) else "ada"
        if major == 9:
            return "hopper"
        return "blackwell"

    def props(self, dev_id):
        """Kineto deviceProperties entry (2022+ key names)."""
        return {
            "id": dev_id, "name": self.name, "totalGlobalMem": self.mem,
            "computeMajor": self.cc[0], "computeMinor": self.cc[1],
            "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": self.max_thr_sm,
            "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
            "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": self.smem_sm,
            "numSms": self.sms, "sharedMemPerBlockOptin": self.smem_optin,
        }


_TABLE = [
    #   name                          cc      sms  mem(GiB)  fp32  tf32  tc16  bw(GB/s) pcie nvlink  L2(MiB) chip  MHz  smem/SM smem optin
    ("Tesla V100-SXM2-32GB",        (7, 0),  80, 32,  15.7, 15.7,  125, 900,  11, 130,  6,  "GV100", 1530, 98304, 98304),
    ("Tesla T4",                    (7, 5),  40, 15,   8.1,  8.1,   65, 320,  11,  10,  4,  "TU104", 1590, 65536, 65536, 1024),
    ("NVIDIA A100-SXM4-40GB",       (8, 0), 108, 40,  19.5,  156,  312, 1555, 24, 230, 40,  "GA100", 1410, 167936, 166912),
    ("NVIDIA A100-SXM4-80GB",       (8, 0), 108, 80,  19.5,  156,  312, 2039, 24, 230, 40,  "GA100", 1410, 167936, 166912),
    ("NVIDIA A100 80GB PCIe",       (8, 0), 108, 80,  19.5,  156,  312, 1935, 24,  22, 40,  "GA100", 1410, 167936, 166912),
    ("NVIDIA GeForce RTX 3090",     (8, 6),  82, 24,  35.6, 35.6,   71, 936,  22,  20,  6,  "GA102", 1695, 102400, 101376, 1536),
    ("NVIDIA L4",                   (8, 9),  58, 22,  30.3, 60.0,  121, 300,  22,  20, 48,  "AD104", 2040, 102400, 101376, 1536),
    ("NVIDIA H100 80GB HBM3",       (9, 0), 132, 80,  67.0,  495,  989, 3350, 50, 360, 50,  "GH100", 1980, 233472, 232448),
    ("NVIDIA H200",                 (9, 0), 132, 141, 67.0,  495,  989, 4800, 50, 360, 50,  "GH100", 1980, 233472, 232448),
    ("NVIDIA B200",                 (10, 0), 148, 179, 80.0, 1100, 2250, 8000, 55, 720, 126, "GB100", 1965, 233472, 232448),
]

GPUS = {row[0]: row for row in _TABLE}

_BY_CC = {(7, 0): "Tesla V100-SXM2-32GB", (7, 5): "Tesla T4", (8, 0): "NVIDIA A100-SXM4-80GB",
          (8, 6): "NVIDIA GeForce RTX 3090", (8, 9): "NVIDIA L4", (9, 0): "NVIDIA H100 80GB HBM3",
          (10, 0): "NVIDIA B200"}


def _make(row, name=None, cc=None):
    n, c, sms, mem, fp32, tf32, tc16, bw, pcie, nvl, l2, chip, mhz, smem, optin = row[:15]
    thr = row[15] if len(row) > 15 else 2048
    return GPU(name or n, cc or c, sms, int(mem * GiB * 0.985) // 2097152 * 2097152, fp32, tf32, tc16,
               bw, pcie, nvl, l2 * 1048576, chip, mhz, smem, optin, thr)


def lookup(name=None, cc=None):
    """Return a GPU for a name (exact or case-insensitive substring) and/or a compute capability."""
    if cc is not None and isinstance(cc, str):
        major, _, minor = cc.partition(".")
        cc = (int(major), int(minor or 0))
    row = None
    if name:
        row = GPUS.get(name)
        if row is None:
            low = name.lower()
            for k, r in GPUS.items():
                if low in k.lower() or k.lower() in low:
                    row = r
                    break
    if row is None:
        key = cc or (8, 0)
        if key not in _BY_CC:
            # nearest known capability at or below the requested one
            cands = sorted(k for k in _BY_CC if k <= key) or sorted(_BY_CC)
            key = cands[-1]
        row = GPUS[_BY_CC[key]]
    return _make(row, name=name or None, cc=cc)
