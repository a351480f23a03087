"""Hand-scripted Kineto traces of CUDA graph replays and torch.compile regions (gen_profile.py graphs NAME).

Exactly timed like genprof/scenarios.py, so tests can check the attribution by hand:

  cuda_graph_captured   ProfilerStep#0 captures a graph (cudaStreamBeginCapture .. EndCapture,
                        cudaGraphInstantiate) from four ops that each record one cudaLaunchKernel
                        (aten::addmm, aten::relu, aten::addmm, aten::_softmax) and run no kernel;
                        ProfilerStep#1..#8 replay it with one cudaGraphLaunch each: four kernels
                        sharing the launch's correlation id (GEMM 20 us, relu 5 us, GEMM 20 us,
                        softmax 8 us = 53 us of GPU time per replay).
  cuda_graph_replayed   the capture happened before the profiler started: 30 steps, each a 12 us
                        cudaGraphLaunch replaying eight 3 us kernels, then 60 us of host work. Every
                        replayed kernel is shorter than its launch call and each replay starts on an
                        idle GPU, so a detector blind to graphs would call it launch-bound.
  eager_launch_bound    the same work without a graph, under record_function('## decode_step ##'):
                        30 steps of eight ops, each launching a 3 us kernel with a 10 us call after
                        12 us of framework overhead, so the GPU waits for every launch.
  cuda_graph_nodes      (an Nsight Systems export, write it to a .sqlite path) the same four captured ops
                        under emit_nvtx, the third launched on a side stream (cudaStreamWaitEvent fork),
                        with node tracing: CUDA_GRAPH_EVENTS records nodes 1..4 created at the four
                        captured launches and their clones 11..14 made by cudaGraphInstantiate; six
                        cudaGraphLaunch replays run the clones, the side-stream GEMM (node 13) next to
                        the first (node 11), so replay order (11, 13, 12, 14) is not capture order:
                        only the node ids tell which op each kernel came from.
  compile_graph_break   torch.compile with a graph break: each of 4 steps runs
                        'Torch-Compiled Region: 0/0' (triton_poi_ 6 us, an extern aten::mm GEMM
                        30 us, triton_red_ 9 us), eager aten::nonzero (its kernel 4 us and a
                        cudaMemcpyAsync back to the host), then 'Torch-Compiled Region: 1/0'
                        (triton_per_ 7 us, triton_tem_fused_mm 25 us, triton_poi_fused_convolution_relu 5 us).
  compile_python_break  torch.compile with a graph break that runs only Python (a print between two
                        halves of forward): each of 4 steps calls the compiled model on two micro-batches,
                        'Torch-Compiled Region: 0/0' (triton_poi_ 6 us, triton_red_ 9 us), 70 us of Python
                        with no op but Dynamo's cache lookup, then 'Torch-Compiled Region: 1/0' (triton_per_
                        7 us, triton_tem_ 25 us): two breaks per step (before each 1/0); the second 0/0 is a
                        new call of frame 0, not a break.
"""

import functools

from genprof import hw, nsys
from genprof.scenarios import GEMM, SOFTMAX_KERNEL, Trace

RELU = ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar"
        "(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()"
        "() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, "
        "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
        "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::"
        "{lambda(float)#1}, std::array<char*, 2ul>)")
SMALL = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, std::array<char*, 3ul> >(int, at::native::AddFunctor<float>, std::array<char*, 3ul>)"
NONZERO = "void at::native::(anonymous namespace)::write_indices<long>(long*, int, long)"


def graph_launch(t, ts_us, dur_us, kernels, first_start_us):
    """One cudaGraphLaunch and the kernels it replays back to back (all share its correlation id)."""
    t.corr += 1
    t.x("cuda_runtime", "cudaGraphLaunch", ts_us, dur_us, {"correlation": t.corr, "External id": t.ext})
    s = first_start_us
    for name, dur in kernels:
        t.x("kernel", name, s, dur, {"device": 0, "stream": 7, "correlation": t.corr, "External id": t.ext}, pid=0, tid=7)
        s += dur
    return s


def cuda_graph_captured(t):
    t.x("user_annotation", "ProfilerStep#0", 100, 900)
    t.x("user_annotation", "## capture ##", 110, 880)
    t.runtime("cudaStreamBeginCapture", 120, 3)
    # Captured launches record a runtime call but no GPU work.
    for i, (outer, inner) in enumerate([("aten::linear", "aten::addmm"), ("aten::relu", None),
                                         ("aten::linear", "aten::addmm"), ("aten::softmax", "aten::_softmax")]):
        s = 150 + i * 100
        t.op(outer, s, 80)
        if inner:
            t.op(inner, s + 10, 60)
        t.runtime("cudaLaunchKernel", s + 30, 8)
    t.runtime("cudaStreamEndCapture", 560, 5)
    t.runtime("cudaGraphInstantiate", 570, 300)
    kernels = [(GEMM, 20), (RELU, 5), (GEMM, 20), (SOFTMAX_KERNEL, 8)]
    for i in range(8):
        s = 1_000 + i * 100
        t.x("user_annotation", "ProfilerStep#%d" % (i + 1), s, 100)
        t.x("user_annotation", "## replay ##", s + 5, 30)
        graph_launch(t, s + 10, 15, kernels, s + 30)
    return 1_000 + 8 * 100 + 100


def cuda_graph_replayed(t):
    kernels = [(SMALL, 3)] * 8
    for i in range(30):
        s = 100 + i * 100
        t.x("user_annotation", "ProfilerStep#%d" % (i + 1), s, 100)
        t.op("aten::copy_", s + 5, 10)   # the static input buffer is refilled on the host side
        graph_launch(t, s + 20, 12, kernels, s + 34)
        t.op("aten::item", s + 40, 55)  # host work between replays (reading a result, Python)
    return 100 + 30 * 100 + 100


def eager_launch_bound(t):
    for i in range(30):
        s = 100 + i * 300
        t.x("user_annotation", "ProfilerStep#%d" % (i + 1), s, 300)
        t.x("user_annotation", "## decode_step ##", s + 2, 290)
        for j in range(8):
            o = s + 5 + j * 35
            t.op("aten::add", o, 30)
            t.launch("cudaLaunchKernel", o + 12, 10, SMALL, o + 24, 3)
    return 100 + 30 * 300 + 100


def triton_launch(t, name, ts_us, k_start_us, k_dur_us):
    """Inductor launches its Triton kernels with cuLaunchKernel under a record_function of the kernel's name."""
    t.op(name, ts_us, 12)
    t.corr += 1
    t.x("cuda_driver", "cuLaunchKernel", ts_us + 2, 8, {"correlation": t.corr, "External id": t.ext})
    t.x("kernel", name, k_start_us, k_dur_us, {"device": 0, "stream": 7, "correlation": t.corr, "External id": t.ext},
        pid=0, tid=7)


def compile_graph_break(t):
    driver_launch = functools.partial(triton_launch, t)

    for i in range(4):
        s = 100 + i * 1_000
        t.x("user_annotation", "ProfilerStep#%d" % (i + 1), s, 1_000)
        t.op("TorchDynamo Cache Lookup", s + 5, 10)
        t.op("Torch-Compiled Region: 0/0", s + 20, 200)
        t.op("CompiledFunction", s + 30, 180)
        t.x("user_annotation", "## Call CompiledFxGraph fgraphbreak0 ##", s + 40, 160)
        driver_launch("triton_poi_fused_add_0", s + 50, s + 60, 6)
        t.op("aten::mm", s + 70, 40)
        t.launch("cudaLaunchKernel", s + 80, 10, GEMM, s + 90, 30)
        driver_launch("triton_red_fused_sum_1", s + 120, s + 130, 9)
        # Graph break: data-dependent output shape, run eagerly, its size read back on the host.
        t.op("aten::nonzero", s + 240, 100)
        t.launch("cudaLaunchKernel", s + 250, 10, NONZERO, s + 262, 4)
        t.launch("cudaMemcpyAsync", s + 270, 40, "Memcpy DtoH (Device -> Pageable)", s + 280, 2, cat="gpu_memcpy")
        t.op("TorchDynamo Cache Lookup", s + 360, 10)
        t.op("Torch-Compiled Region: 1/0", s + 380, 200)
        t.op("CompiledFunction", s + 390, 180)
        t.x("user_annotation", "## Call CompiledFxGraph fgraphbreak1 ##", s + 400, 160)
        driver_launch("triton_per_fused__softmax_2", s + 410, s + 420, 7)
        driver_launch("triton_tem_fused_mm_3", s + 440, s + 450, 25)
        driver_launch("triton_poi_fused_convolution_relu_4", s + 470, s + 480, 5)
    return 100 + 4 * 1_000 + 100


def compile_python_break(t):
    driver_launch = functools.partial(triton_launch, t)

    for i in range(4):
        s = 100 + i * 1_000
        t.x("user_annotation", "ProfilerStep#%d" % (i + 1), s, 1_000)
        for half in range(2):
            b = s + half * 450
            t.op("TorchDynamo Cache Lookup", b + 5, 10)
            t.op("Torch-Compiled Region: 0/0", b + 20, 120)
            t.op("CompiledFunction", b + 25, 110)
            driver_launch("triton_poi_fused_add_0", b + 40, b + 50, 6)
            driver_launch("triton_red_fused_sum_1", b + 70, b + 80, 9)
            # The graph break: Python only (a print of a Python float), no op, no kernel.
            t.op("TorchDynamo Cache Lookup", b + 210, 10)
            t.op("Torch-Compiled Region: 1/0", b + 225, 200)
            t.op("CompiledFunction", b + 230, 190)
            driver_launch("triton_per_fused__softmax_2", b + 250, b + 260, 7)
            driver_launch("triton_tem_fused_mm_3", b + 280, b + 290, 25)
    return 100 + 4 * 1_000 + 100


def cuda_graph_nodes(x):
    """Capture with node creation events, then replays whose kernel order differs from capture order."""
    x.nvtx("## capture ##", 10, 800)
    x.runtime("cudaStreamBeginCapture_v10000", 20, 3)
    ops = [("aten::linear", "aten::addmm", 1), ("aten::relu", None, 2), ("aten::linear", "aten::addmm", 3),
           ("aten::softmax", "aten::_softmax", 4)]
    seq = 10
    for i, (outer, inner, node) in enumerate(ops):
        s = 50 + i * 100
        seq += 1
        x.nvtx("%s, seq = %d, op_id = %d, sizes = [[64, 512]]" % (outer, seq, 100 + 2 * i), s, 80)
        if inner:
            x.nvtx("%s, op_id = %d, sizes = [[64, 512]]" % (inner, 101 + 2 * i), s + 10, 60)
        if node == 3:  # forked onto the side stream of the capture
            x.runtime("cudaEventRecord_v3020", s + 15, 3)
            x.runtime("cudaStreamWaitEvent_v3020", s + 20, 3)
        x.runtime("cudaLaunchKernel_v7000", s + 30, 8)
        x.graph_node("cudaLaunchKernel_v7000", s + 32, 4, node)
    x.runtime("cudaStreamEndCapture_v10000", 500, 5)
    x.runtime("cudaGraphInstantiate_v10000", 520, 300)
    for i in range(4):
        x.graph_node("cudaGraphInstantiate_v10000", 530 + 10 * i, 2, 11 + i, original=1 + i)
    # Replays: node 11 (GEMM) and node 13 (GEMM, side stream) start together; relu (12) follows 11;
    # softmax (14) waits for both branches.
    for r in range(6):
        s = 1_000 + r * 100
        x.nvtx("## replay ##", s + 5, 30)
        corr = x.runtime("cudaGraphLaunch_v10000", s + 10, 15)
        x.kernel(GEMM, s + 30, 20, corr, stream=7, graph_id=1, node=11)
        x.kernel(GEMM, s + 31, 20, corr, stream=8, graph_id=1, node=13)
        x.kernel(RELU, s + 50, 5, corr, stream=7, graph_id=1, node=12)
        x.kernel(SOFTMAX_KERNEL, s + 55, 8, corr, stream=7, graph_id=1, node=14)


NSYS_SCENARIOS = {"cuda_graph_nodes": cuda_graph_nodes}

SCENARIOS = {"cuda_graph_captured": cuda_graph_captured, "cuda_graph_replayed": cuda_graph_replayed,
             "eager_launch_bound": eager_launch_bound, "compile_graph_break": compile_graph_break,
             "compile_python_break": compile_python_break, **NSYS_SCENARIOS}


def write(name, path):
    if name in NSYS_SCENARIOS:
        x = nsys.ScriptedExport(hw.lookup("NVIDIA A100-SXM4-80GB"))
        NSYS_SCENARIOS[name](x)
        return x.write(path)
    t = Trace()
    end = SCENARIOS[name](t)
    return t.dump(path, end)
