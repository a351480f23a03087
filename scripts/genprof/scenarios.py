"""Hand-scripted Kineto traces for cases the step simulator does not model (gen_profile.py --scenario).

Each scenario is a short, exactly timed event list, so tests can check figures by hand:

  startup             PyTorch training whose capture opens with CUDA context creation: a 300 ms
                      cudaFree before the first kernel (43% of the window), then 8 steps of 50 ms in
                      which two GEMMs (30 + 9 ms) and a 1 ms SGD update keep the GPU busy 80%.
  inference_preprocess  with_stack=True inference (no backward, no optimizer) in which every 40 ms
                      step spends 27 ms in Python video decoding/resizing before a 10 ms forward
                      (three kernels: 6 + 3 + 1 ms):
                      kernels busy 25%, the host time is only in python_function frames.
  hpc_alloc_churn     a CUDA program with no framework op: a 250 ms cudaFree creates the context,
                      then 10 iterations each allocate 20 buffers (150 us cudaMalloc), run 3 kernels
                      of 2 ms and free the buffers (200 us cudaFree) with a cudaDeviceSynchronize.

Times are written as integer microseconds plus a fraction, from a fixed origin; output is a
pure function of the scenario name.
"""

import gzip
import json

T0_US = 1_000_000.0  # origin of every scenario (µs)
PID, TID = 4242, 4242
DEVICE = {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 84609597440, "computeMajor": 8,
          "computeMinor": 0, "numSms": 108}


class Trace:
    def __init__(self):
        self.events = []
        self.corr = 1000
        self.ext = 1

    def x(self, cat, name, ts_us, dur_us, args=None, pid=PID, tid=TID):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": round(T0_US + ts_us, 3),
             "dur": round(dur_us, 3)}
        if args:
            e["args"] = args
        self.events.append(e)

    def launch(self, api, ts_us, dur_us, kernel, k_start_us, k_dur_us, cat="kernel"):
        """A runtime call and the GPU work it correlates to (on device 0, stream 7)."""
        self.corr += 1
        self.x("cuda_runtime", api, ts_us, dur_us, {"correlation": self.corr, "External id": self.ext})
        self.x(cat, kernel, k_start_us, k_dur_us,
               {"device": 0, "stream": 7, "correlation": self.corr, "External id": self.ext}, pid=0, tid=7)

    def runtime(self, api, ts_us, dur_us):
        self.corr += 1
        self.x("cuda_runtime", api, ts_us, dur_us, {"correlation": self.corr, "External id": self.ext})

    def op(self, name, ts_us, dur_us):
        self.ext += 1
        self.x("cpu_op", name, ts_us, dur_us, {"External id": self.ext})

    def dump(self, path, end_us):
        self.events.sort(key=lambda e: (e["ts"], -e["dur"], e["name"]))
        doc = {"schemaVersion": 1, "deviceProperties": [DEVICE], "displayTimeUnit": "ms",
               "traceEvents": self.events + [
                   {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
                    "ts": T0_US, "dur": end_us}]}
        text = json.dumps(doc, indent=1, sort_keys=False) + "\n"
        if path.endswith(".gz"):
            with open(path, "wb") as f:
                with gzip.GzipFile(filename="", fileobj=f, mode="wb", mtime=0) as g:
                    g.write(text.encode())
        else:
            with open(path, "w") as f:
                f.write(text)
        return len(self.events) + 1


GEMM = "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_kernel"


SGD_KERNEL = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, std::array<char*, 3ul> >(int, at::native::AddFunctor<float>, std::array<char*, 3ul>)"
SOFTMAX_KERNEL = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)"


def startup(t):
    # Context creation: the first CUDA call of the process (inside the first op) takes 300 ms.
    t.op("aten::empty", 100, 300_200)
    t.runtime("cudaFree", 200, 300_000)
    start = 301_000
    for i in range(8):
        s = start + i * 50_000
        t.x("user_annotation", "ProfilerStep#%d" % (i + 1), s, 50_000)
        t.op("aten::mm", s + 100, 500)
        t.launch("cudaLaunchKernel", s + 200, 20, GEMM, s + 1_000, 30_000)
        t.op("autograd::engine::evaluate_function: MmBackward0", s + 700, 400)
        t.launch("cudaLaunchKernel", s + 800, 20, GEMM, s + 31_000, 9_000)
        t.x("user_annotation", "Optimizer.step#SGD.step", s + 1_200, 300)
        t.op("aten::add_", s + 1_250, 100)
        t.launch("cudaLaunchKernel", s + 1_300, 20, SGD_KERNEL, s + 40_000, 1_000)
    return start + 8 * 50_000 + 1_000


def inference_preprocess(t):
    # with_stack=True: the whole run under <module>/main, each step = Python preprocessing of a video
    # clip (27 ms, GPU idle) then a forward under torch.no_grad (kernels: 10 ms in all).
    steps, step_us = 8, 40_000
    end = 2_000 + steps * step_us + 1_000
    t.x("python_function", "infer.py(40): <module>", 0, end - 10)
    t.x("python_function", "infer.py(31): main", 10, end - 30)
    for i in range(steps):
        s = 2_000 + i * step_us
        t.x("user_annotation", "ProfilerStep#%d" % (i + 1), s, step_us)
        t.x("python_function", "infer.py(18): preprocess", s + 50, 27_000)
        t.x("python_function", "torchvision/io/video.py(283): read_video", s + 60, 20_000)
        t.x("python_function", "torchvision/transforms/functional.py(467): resize", s + 20_100, 6_900)
        t.x("python_function", "nn.Module: ResNet_0", s + 27_100, 12_000)
        t.op("aten::conv2d", s + 27_200, 300)
        t.launch("cudaLaunchKernel", s + 27_300, 15, GEMM, s + 28_000, 6_000)
        t.op("aten::linear", s + 27_600, 300)
        t.launch("cudaLaunchKernel", s + 27_700, 15, GEMM, s + 34_000, 3_000)
        t.op("aten::softmax", s + 27_950, 100)
        t.launch("cudaLaunchKernel", s + 28_000, 15, SOFTMAX_KERNEL, s + 37_000, 1_000)
    return end


def hpc_alloc_churn(t):
    t.runtime("cudaFree", 100, 250_000)  # context creation: the first call of the process
    t.runtime("cudaGetDeviceProperties", 250_200, 50)
    s = 251_000
    for i in range(10):
        for j in range(20):
            t.runtime("cudaMalloc", s, 150)
            s += 160
        t.launch("cudaMemcpy", s, 120, "Memcpy HtoD (Pageable -> Device)", s + 10, 100, cat="gpu_memcpy")
        s += 130
        for k in range(3):  # three launches queue three 2 ms kernels that run back to back
            t.launch("cudaLaunchKernel", s + 20 * k, 10, "stencil_update(double*, const double*, int)",
                     s + 20 + 2_000 * k, 2_000)
        t.runtime("cudaDeviceSynchronize", s + 60, 5_965)  # returns when the last kernel ends (+6,020 + 5)
        s += 6_030
        for j in range(20):
            t.runtime("cudaFree", s, 200)
            s += 210
    return s + 1_000


SCENARIOS = {"startup": startup, "inference_preprocess": inference_preprocess, "hpc_alloc_churn": hpc_alloc_churn}


def write(name, path):
    t = Trace()
    end = SCENARIOS[name](t)
    return t.dump(path, end)
