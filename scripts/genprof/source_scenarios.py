"""Kineto traces recorded with with_stack=True / with_modules=True, for source and module attribution
(gen_profile.py source-scenario NAME -o FILE). Events are written the way PyTorch 2.x writes them:
'python_function' events named 'file.py(LINE): function', '<built-in method … at 0x…>' for C
functions and 'nn.Module: Name_N' for module forwards, nested around the cpu_ops on the same thread.

  item_in_logging  8 training steps of 20 ms. train_step (train.py:60) runs the forward (Net_0 with
                   Linear_0/Linear_1 under model.py:22 forward), backward and SGD step; then
                   log_metrics (train.py:84) computes six metrics, each a mean (reduction kernel of
                   530 us) read back with .item(): aten::item > aten::_local_scalar_dense >
                   cudaMemcpyAsync (30 us) + cudaStreamSynchronize (290 us). Per step: 6 read-backs at
                   train.py:84 in log_metrics, host blocked 6 x (290 + 30) = 1.92 ms; after each the GPU
                   idles until the next metric's kernel, 640 us.
  slow_module      6 inference steps of 12 ms through Encoder_0 with four Block_k modules, each with two
                   Linear layers (model.py:40 in forward) running BF16 Tensor Core GEMMs of 300 us;
                   only Block_2's second Linear (Linear_5) runs in FP32 (ampere_sgemm, 6 ms, no Tensor
                   Cores): Encoder_0/Block_2/Linear_5 holds 6 / (6 + 7 x 0.3) = 74% of kernel time.

The exact figures are in the docstring so tests can check them by hand.
"""

from genprof.scenarios import Trace, SGD_KERNEL, T0_US  # noqa: F401  (T0_US: documented origin)

TC_GEMM = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel"
FP32_GEMM = "ampere_sgemm_128x64_tn"
REDUCE = ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, "
          "float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, "
          "float, float>, unsigned int, float, 4>)")
BF16 = ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]
FP32 = ["float", "float", "float"]


def py(t, name, ts, dur):
    t.x("python_function", name, ts, dur)


def module_call(t, module, forward, ts, dur):
    """A module call as PyTorch records it: Module._call_impl > 'nn.Module: Name_N' > its forward."""
    py(t, "torch/nn/modules/module.py(1527): _call_impl", ts, dur)
    py(t, "nn.Module: " + module, ts + 10, dur - 20)
    py(t, forward, ts + 20, dur - 40)


def linear(t, k, ts, kernel, k_start, k_dur, types):
    """nn.Module: Linear_k around torch's Linear.forward, F.linear and aten::linear > aten::addmm."""
    module_call(t, "Linear_%d" % k, "torch/nn/modules/linear.py(116): forward", ts, 700)
    py(t, "<built-in function linear>", ts + 30, 640)
    t.ext += 1
    t.x("cpu_op", "aten::linear", ts + 40, 600,
        {"External id": t.ext, "Input Dims": [[64, 1024], [1024, 1024], [1024]], "Input type": types})
    t.ext += 1
    t.x("cpu_op", "aten::addmm", ts + 100, 500,
        {"External id": t.ext, "Input Dims": [[1024], [64, 1024], [1024, 1024]], "Input type": types})
    t.launch("cudaLaunchKernel", ts + 200, 20, kernel, k_start, k_dur)


def item_in_logging(t):
    steps, step_us = 8, 20_000
    end = 1_000 + steps * step_us + 1_000
    py(t, "train.py(130): <module>", 0, end - 10)
    py(t, "train.py(101): train", 10, end - 30)
    for i in range(steps):
        s = 1_000 + i * step_us
        t.x("user_annotation", "ProfilerStep#%d" % (i + 1), s, step_us)
        py(t, "train.py(60): train_step", s + 50, 11_950)
        # forward: Net_0 > (Linear_0, Linear_1), kernels 3 ms each
        module_call(t, "Net_0", "model.py(22): forward", s + 80, 2_060)
        linear(t, 0, s + 150, TC_GEMM, s + 1_000, 3_000, BF16)
        linear(t, 1, s + 1_100, TC_GEMM, s + 4_000, 3_000, BF16)
        # backward (same thread here), one GEMM of 2 ms
        py(t, "torch/_tensor.py(522): backward", s + 2_300, 2_700)
        t.op("autograd::engine::evaluate_function: AddmmBackward0", s + 2_400, 2_400)
        t.op("aten::mm", s + 2_500, 2_000)
        t.launch("cudaLaunchKernel", s + 2_600, 20, TC_GEMM, s + 7_000, 2_000)
        # optimizer step, one update kernel of 500 us
        py(t, "torch/optim/optimizer.py(373): wrapper", s + 5_200, 1_300)
        t.x("user_annotation", "Optimizer.step#SGD.step", s + 5_300, 1_100)
        t.op("aten::add_", s + 5_400, 500)
        t.launch("cudaLaunchKernel", s + 5_500, 20, SGD_KERNEL, s + 9_100, 500)
        # log_metrics: six metrics, each a mean read back with .item()
        py(t, "train.py(84): log_metrics", s + 12_100, 7_800)
        for j in range(6):
            m = s + 12_400 + j * 1_200
            t.op("aten::mean", m - 250, 150)
            t.launch("cudaLaunchKernel", m - 240, 20, REDUCE, m - 200, 530)
            py(t, "<built-in method item of Tensor object at 0x7f3a2c1b4e00>", m, 420)
            t.op("aten::item", m + 10, 400)
            t.op("aten::_local_scalar_dense", m + 20, 380)
            t.launch("cudaMemcpyAsync", m + 30, 30, "Memcpy DtoH (Device -> Pageable)", m + 330, 5, cat="gpu_memcpy")
            t.runtime("cudaStreamSynchronize", m + 70, 290)
    return end


def slow_module(t):
    steps, step_us = 6, 12_000
    end = 1_000 + steps * step_us + 1_000
    py(t, "serve.py(50): <module>", 0, end - 10)
    py(t, "serve.py(31): run", 10, end - 30)
    for i in range(steps):
        s = 1_000 + i * step_us
        t.x("user_annotation", "ProfilerStep#%d" % (i + 1), s, step_us)
        module_call(t, "Encoder_0", "model.py(61): forward", s + 40, 8_000)
        gpu = s + 500
        for b in range(4):
            bs = s + 100 + b * 1_800
            module_call(t, "Block_%d" % b, "model.py(40): forward", bs, 1_700)
            for j in range(2):
                k = 2 * b + j
                slow = k == 5
                dur = 6_000 if slow else 300
                ls = bs + 30 + j * 800
                gpu = max(gpu, ls + 250)  # a kernel starts after its launch (at ls + 200)
                linear(t, k, ls, FP32_GEMM if slow else TC_GEMM, gpu, dur, FP32 if slow else BF16)
                gpu += dur + 20
    return end


SCENARIOS = {"item_in_logging": item_in_logging, "slow_module": slow_module}


def write(name, path):
    t = Trace()
    end = SCENARIOS[name](t)
    return t.dump(path, end)
