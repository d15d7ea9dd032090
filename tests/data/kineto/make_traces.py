#!/usr/bin/env python3
"""Writes small PyTorch 2.x profiler traces (torch.profiler, record_shapes=True,
export_chrome_trace) for the importer tests: a small CNN (conv/bn/relu/pool/linear, forward
and backward with an SGD step) and a transformer block (layer norm, attention matmuls,
softmax, GELU MLP) on a GPU. Field names, "ph" kinds, categories and args follow the format
PyTorch 2.x writes (cpu_op events with External id / Input Dims / Input type / Concrete
Inputs, cuda_runtime launches with correlation ids, kernel events with External id,
correlation, stream, and ac2g flow events). Device times are plausible figures for a mid-size
GPU (about 10 TFLOP/s fp32 and 500 GB/s), not measurements.
training_step.json has the structure of real multi-GPU training traces (the HolisticTraceAnalysis
test traces, PyTorch 2.0): kernels and runtime calls whose "External id" is their correlation id
(so a kernel reaches its operator only through the launching call's time on its thread),
backward ops on the autograd thread, NCCL collectives, host-to-device copies and optimizer steps
over tensor lists. resnet_pt18.json is the older format (PyTorch 1.8: categories "Operator",
"Kernel", "Runtime", "Memcpy", "Input dims" without "Input type", lower-case "external id").
Run with Debian's python3:
    /usr/bin/python3 make_traces.py
"""
import gzip
import json

PID, TID, BWD_TID, DEV = 4242, 4242, 4300, 0


class Trace:
    def __init__(self, ids="ext", fmt="2"):
        self.ids = ids  # "ext": kernels carry their operator's External id; "corr": their correlation
        self.fmt = fmt  # "2": PyTorch 2.x; "1.8": PyTorch 1.8 categories and fields
        self.events = []
        self.ext = 1
        self.corr = 1000
        self.cpu_ts = 1000.0
        self.gpu_ts = {7: 1500.0, 13: 1500.0}

    def op(self, name, dims, types, concrete=None, kernels=(), children=(), tid=TID, stream=7):
        """A CPU op; kernels are (name, dur_us); children are nested op calls (thunks)."""
        ext = self.ext
        self.ext += 1
        start = self.cpu_ts
        self.cpu_ts += 2.0
        if self.fmt == "1.8":
            ev = {"ph": "X", "cat": "Operator", "name": name, "pid": PID, "tid": str(tid), "ts": round(start), "dur": 0,
                  "args": {"Input dims": dims, "Input type": [], "Input names": [], "Output dims": [],
                           "Output type": [], "Output names": [], "Device": 0, "External id": ext,
                           "Extra arguments": [], "Trace name": "PyTorch Profiler", "Trace iteration": 0}}
        else:
            ev = {"ph": "X", "cat": "cpu_op", "name": name, "pid": PID, "tid": tid, "ts": round(start, 3), "dur": 0,
                  "args": {"External id": ext, "Record function id": 0, "Ev Idx": ext - 1,
                           "Input Dims": dims, "Input type": types,
                           "Concrete Inputs": concrete if concrete is not None else [""] * len(dims)}}
        self.events.append(ev)
        for c in children:
            c()
        for kname, kdur in kernels:
            corr = self.corr
            self.corr += 1
            launch = self.cpu_ts
            gts = max(self.gpu_ts[stream], launch + 5.0)
            kid = corr if self.ids == "corr" else ext
            memcpy = kname.startswith("Memcpy")
            if self.fmt == "1.8":
                self.events.append({"ph": "X", "cat": "Runtime", "name": "cudaMemcpyAsync" if memcpy else "cudaLaunchKernel",
                                    "pid": PID, "tid": str(tid), "ts": round(launch), "dur": 4,
                                    "args": {"cbid": 211, "correlation": corr, "external id": ext}})
                self.events.append({"ph": "X", "cat": "Memcpy" if memcpy else "Kernel", "name": kname, "pid": 0,
                                    "tid": f"stream {stream}", "ts": round(gts), "dur": max(1, round(kdur)),
                                    "args": {"queued": 0, "device": 0, "context": 1, "stream": stream,
                                             "correlation": corr, "external id": ext}})
            else:
                self.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync" if memcpy else "cudaLaunchKernel",
                                    "pid": PID, "tid": tid, "ts": round(launch, 3), "dur": 3.5,
                                    "args": {"External id": kid, "cbid": 211, "correlation": corr}})
                args = {"queued": 0, "device": DEV, "context": 1, "stream": stream, "correlation": corr}
                if not memcpy:
                    args.update({"registers per thread": 64, "shared memory": 0, "blocks per SM": 1.5,
                                 "warps per SM": 12.0, "grid": [128, 1, 1], "block": [256, 1, 1],
                                 "est. achieved occupancy %": 50})
                args["External id"] = kid
                self.events.append({"ph": "X", "cat": "gpu_memcpy" if memcpy else "kernel", "name": kname, "pid": DEV,
                                    "tid": stream, "ts": round(gts, 3), "dur": round(kdur, 3), "args": args})
            self.cpu_ts += 4.0
            self.events.append({"ph": "s", "id": corr, "pid": PID, "tid": tid, "ts": round(launch, 3),
                                "cat": "ac2g", "name": "ac2g"})
            self.events.append({"ph": "f", "id": corr, "pid": DEV, "tid": stream, "ts": round(gts, 3),
                                "cat": "ac2g", "name": "ac2g", "bp": "e"})
            self.gpu_ts[stream] = gts + kdur + 1.0
        self.cpu_ts += 1.0
        ev["dur"] = round(self.cpu_ts - start, 3)
        return ext

    def annotate(self, name, body, tid=TID):
        start = self.cpu_ts
        ev = {"ph": "X", "cat": "user_annotation", "name": name, "pid": PID, "tid": tid, "ts": round(start, 3),
              "dur": 0, "args": {"External id": self.ext, "Record function id": 0}}
        self.ext += 1
        self.events.append(ev)
        body()
        self.cpu_ts += 1.0
        ev["dur"] = round(self.cpu_ts - start, 3)

    def cpu_wrapper(self, name, body, tid=TID):
        """A non-aten CPU op (autograd node, optimizer) around aten ops."""
        start = self.cpu_ts
        ev = {"ph": "X", "cat": "Operator" if self.fmt == "1.8" else "cpu_op", "name": name, "pid": PID, "tid": tid, "ts": round(start, 3), "dur": 0,
              "args": {"External id": self.ext, "Sequence number": self.ext, "Fwd thread id": 1,
                       "Record function id": 0, "Ev Idx": self.ext - 1}}
        self.ext += 1
        self.events.append(ev)
        body()
        self.cpu_ts += 1.0
        ev["dur"] = round(self.cpu_ts - start, 3)

    def write(self, path, gz=False):
        doc = {"schemaVersion": 1,
               "deviceProperties": [{"id": 0, "name": "NVIDIA A10", "totalGlobalMem": 23836098560,
                                     "computeMajor": 8, "computeMinor": 6, "maxThreadsPerBlock": 1024,
                                     "numSms": 72, "sharedMemPerBlock": 49152}],
               "cupti_version": 18, "cuda_runtime_version": 12010, "cuda_driver_version": 12020,
               "trace_id": "F0A1B2C3D4E5", "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000,
               "traceEvents": self.events,
               "traceName": path}
        text = json.dumps(doc, indent=1)
        if gz:
            with gzip.open(path, "wt") as f:
                f.write(text)
        else:
            with open(path, "w") as f:
                f.write(text + "\n")


def gemm_us(m, n, k):
    return 2.0 * m * n * k / 10e12 * 1e6 + 3.0


def ew_us(elems, tensors=3, esize=4):
    return elems * tensors * esize / 500e9 * 1e6 + 2.0


def numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def cnn():
    t = Trace()
    N = 8
    F = "float"

    def conv_bn_relu(cin, cout, h, k, s, p):
        ho = (h + 2 * p - k) // s + 1
        x, w = [N, cin, h, h], [cout, cin, k, k]
        y = [N, cout, ho, ho]
        flops_us = gemm_us(N * ho * ho, cout, cin * k * k)
        conv = lambda: t.op("aten::convolution", [x, w, [], [], [], [], [], [], []],
                            [F, F, "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
                            ["", "", "", f"[{s}, {s}]", f"[{p}, {p}]", "[1, 1]", "False", "[0, 0]", "1"],
                            children=[lambda: t.op("aten::_convolution", [x, w, [], [], [], [], [], [], [], [], [], [], []],
                                                   [F, F, "", "ScalarList", "ScalarList", "ScalarList", "Scalar",
                                                    "ScalarList", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
                                                   ["", "", "", f"[{s}, {s}]", f"[{p}, {p}]", "[1, 1]", "False",
                                                    "[0, 0]", "1", "False", "False", "True", "True"],
                                                   children=[lambda: t.op("aten::cudnn_convolution", [x, w, [], [], [], [], [], [], []],
                                                                          [F, F, "ScalarList", "ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar", "Scalar"],
                                                                          kernels=[("void cudnn::cnn::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, true, false, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)", flops_us)])])])
        t.op("aten::conv2d", [x, w, [], [], [], [], []], [F, F, "", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
             ["", "", "", f"[{s}, {s}]", f"[{p}, {p}]", "[1, 1]", "1"], children=[conv])
        c = [cout]
        t.op("aten::batch_norm", [y, c, c, c, c, [], [], [], []], [F, F, F, F, F, "Scalar", "Scalar", "Scalar", "Scalar"],
             ["", "", "", "", "", "True", "0.1", "1e-05", "True"],
             children=[lambda: t.op("aten::_batch_norm_impl_index", [y, c, c, c, c, [], [], [], []],
                                    [F, F, F, F, F, "Scalar", "Scalar", "Scalar", "Scalar"],
                                    ["", "", "", "", "", "True", "0.1", "1e-05", "True"],
                                    children=[lambda: t.op("aten::cudnn_batch_norm", [y, c, c, c, c, [], [], []],
                                                           [F, F, F, F, F, "Scalar", "Scalar", "Scalar"],
                                                           ["", "", "", "", "", "True", "0.1", "1e-05"],
                                                           kernels=[("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)",
                                                                     ew_us(numel(y), 3))]),
                                              lambda: t.op("aten::empty", [[], [], [], [], [], []], ["ScalarList", "Scalar", "", "", "", ""])])])
        t.op("aten::relu_", [y], [F], kernels=[("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)", ew_us(numel(y), 2))])
        return y

    def forward():
        y = conv_bn_relu(3, 32, 32, 3, 1, 1)
        y2 = [N, 32, 16, 16]
        t.op("aten::max_pool2d", [y, [], [], [], [], []], [F, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
             ["", "[2, 2]", "[2, 2]", "[0, 0]", "[1, 1]", "False"],
             children=[lambda: t.op("aten::max_pool2d_with_indices", [y, [], [], [], [], []],
                                    [F, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
                                    ["", "[2, 2]", "[2, 2]", "[0, 0]", "[1, 1]", "False"],
                                    kernels=[("void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)", ew_us(numel(y), 1.5))])])
        y3 = conv_bn_relu(32, 64, 16, 3, 1, 1)
        t.op("aten::adaptive_avg_pool2d", [y3, []], [F, "ScalarList"], ["", "[1, 1]"],
             children=[lambda: t.op("aten::mean", [y3, [], [], []], [F, "ScalarList", "Scalar", ""], ["", "[-1, -2]", "True", ""],
                                    kernels=[("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)", ew_us(numel(y3), 1))])])
        t.op("aten::flatten", [[N, 64, 1, 1], [], []], [F, "Scalar", "Scalar"], ["", "1", "-1"],
             children=[lambda: t.op("aten::view", [[N, 64, 1, 1], []], [F, "ScalarList"], ["", "[8, -1]"])])
        t.op("aten::linear", [[N, 64], [10, 64], [10]], [F, F, F],
             children=[lambda: t.op("aten::t", [[10, 64]], [F], children=[lambda: t.op("aten::transpose", [[10, 64], [], []], [F, "Scalar", "Scalar"], ["", "0", "1"])]),
                       lambda: t.op("aten::addmm", [[10], [N, 64], [64, 10], [], []], [F, F, F, "Scalar", "Scalar"], ["", "", "", "1", "1"],
                                    kernels=[("ampere_sgemm_32x32_sliced1x4_tn", gemm_us(N, 10, 64))])])
        # Unknown to sfumato: the loss.
        t.op("aten::cross_entropy_loss", [[N, 10], [N], [], [], [], []], [F, "long int", "", "Scalar", "Scalar", "Scalar"],
             children=[lambda: t.op("aten::log_softmax", [[N, 10], [], []], [F, "Scalar", ""], ["", "1", ""],
                                    children=[lambda: t.op("aten::_log_softmax", [[N, 10], [], []], [F, "Scalar", "Scalar"], ["", "1", "False"],
                                                           kernels=[("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)", 3.2)])]),
                       lambda: t.op("aten::nll_loss_nd", [[N, 10], [N], [], [], []], [F, "long int", "", "Scalar", "Scalar"],
                                    kernels=[("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)", 4.1)])])

    def backward():
        gy = [N, 64, 16, 16]
        x = [N, 32, 16, 16]
        w = [64, 32, 3, 3]
        t.cpu_wrapper("autograd::engine::evaluate_function: ConvolutionBackward0", lambda: t.cpu_wrapper("ConvolutionBackward0", lambda: t.op(
            "aten::convolution_backward", [gy, x, w, [], [], [], [], [], [], [], []],
            [F, F, F, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar", "ScalarList"],
            ["", "", "", "[64]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"],
            kernels=[("void cudnn::detail::dgrad_engine<float, 128, 6, 7, 3, 3, 5, false>(int, int, int, float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, int)", gemm_us(N * 256, 32 * 9, 64)),
                     ("void cudnn::detail::wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)", gemm_us(64, 32 * 9, N * 256))],
            tid=BWD_TID), tid=BWD_TID), tid=BWD_TID)
        t.cpu_wrapper("autograd::engine::evaluate_function: ReluBackward0", lambda: t.cpu_wrapper("ReluBackward0", lambda: t.op(
            "aten::threshold_backward", [gy, gy, []], [F, F, "Scalar"], ["", "", "0"],
            kernels=[("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3>)", ew_us(numel(gy), 3))],
            tid=BWD_TID), tid=BWD_TID), tid=BWD_TID)
        t.cpu_wrapper("autograd::engine::evaluate_function: AddmmBackward0", lambda: t.cpu_wrapper("AddmmBackward0", lambda: (
            t.op("aten::mm", [[N, 10], [10, 64]], [F, F], kernels=[("ampere_sgemm_32x32_sliced1x4_nn", gemm_us(N, 64, 10))], tid=BWD_TID),
            t.op("aten::mm", [[10, N], [N, 64]], [F, F], kernels=[("ampere_sgemm_32x32_sliced1x4_nt", gemm_us(10, 64, N))], tid=BWD_TID)), tid=BWD_TID), tid=BWD_TID)

    def step():
        params = [[32, 3, 3, 3], [32], [32], [64, 32, 3, 3], [64], [64], [10, 64], [10]]
        t.cpu_wrapper("Optimizer.step#SGD.step", lambda: t.op(
            "aten::_foreach_add_", [params, params, []], ["TensorList", "TensorList", "Scalar"],
            kernels=[("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)", 6.5)]))

    t.annotate("ProfilerStep#3", lambda: (forward(), backward(), step()))
    return t


def transformer():
    t = Trace()
    B, S, D, H = 2, 128, 256, 4
    dh = D // H
    Hf = "c10::Half"
    x = [B, S, D]

    def ln():
        t.op("aten::layer_norm", [x, [], [D], [D], [], []], [Hf, "ScalarList", Hf, Hf, "Scalar", "Scalar"],
             ["", f"[{D}]", "", "", "1e-05", "True"],
             children=[lambda: t.op("aten::native_layer_norm", [x, [], [D], [D], []], [Hf, "ScalarList", Hf, Hf, "Scalar"],
                                    ["", f"[{D}]", "", "", "1e-05"],
                                    kernels=[("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>(int, float, c10::Half const*, c10::Half const*, c10::Half const*, float*, float*, c10::Half*)", ew_us(B * S * D, 2, 2))])])

    def linear(n_in, n_out, out_shape, stream=7):
        t.op("aten::linear", [[B, S, n_in], [n_out, n_in], [n_out]], [Hf, Hf, Hf],
             children=[lambda: t.op("aten::t", [[n_out, n_in]], [Hf]),
                       lambda: t.op("aten::view", [[B, S, n_in], []], [Hf, "ScalarList"], ["", f"[{B * S}, {n_in}]"]),
                       lambda: t.op("aten::addmm", [[n_out], [B * S, n_in], [n_in, n_out], [], []], [Hf, Hf, Hf, "Scalar", "Scalar"],
                                    ["", "", "", "1", "1"],
                                    kernels=[("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn", gemm_us(B * S, n_out, n_in) / 8)],
                                    stream=stream),
                       lambda: t.op("aten::view", [[B * S, n_out], []], [Hf, "ScalarList"], ["", str(out_shape)])])

    ln()
    linear(D, 3 * D, [B, S, 3 * D])
    q = [B * H, S, dh]
    t.op("aten::split", [[B, S, 3 * D], [], []], [Hf, "Scalar", "Scalar"], ["", str(D), "-1"])
    t.op("aten::contiguous", [[B, H, S, dh], []], [Hf, "Scalar"], ["", "0"],
         children=[lambda: t.op("aten::clone", [[B, H, S, dh], []], [Hf, ""],
                                children=[lambda: t.op("aten::copy_", [[B, H, S, dh], [B, H, S, dh], []], [Hf, Hf, "Scalar"], ["", "", "False"],
                                                       kernels=[("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1} const&)::{lambda(int)#1})", ew_us(B * S * D, 2, 2))])])])
    t.op("aten::matmul", [q, [B * H, dh, S]], [Hf, Hf],
         children=[lambda: t.op("aten::bmm", [q, [B * H, dh, S]], [Hf, Hf],
                                kernels=[("ampere_fp16_s16816gemm_fp16_64x64_sliced1x2_ldg8_f2f_stages_64x5_nn", gemm_us(S, S, dh) * B * H / 8)])])
    t.op("aten::div", [[B * H, S, S], []], [Hf, "Scalar"], ["", "8.0"],
         kernels=[("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3>)", ew_us(B * H * S * S, 2, 2))])
    t.op("aten::softmax", [[B * H, S, S], [], []], [Hf, "Scalar", ""], ["", "-1", ""],
         children=[lambda: t.op("aten::_softmax", [[B * H, S, S], [], []], [Hf, "Scalar", "Scalar"], ["", "-1", "False"],
                                kernels=[("void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 7, false, false>(c10::Half*, c10::Half const*, int, int, int, bool const*, int, bool)", ew_us(B * H * S * S, 2, 2))])])
    t.op("aten::matmul", [[B * H, S, S], [B * H, S, dh]], [Hf, Hf],
         children=[lambda: t.op("aten::bmm", [[B * H, S, S], [B * H, S, dh]], [Hf, Hf],
                                kernels=[("ampere_fp16_s16816gemm_fp16_64x64_sliced1x2_ldg8_f2f_stages_64x5_nn", gemm_us(S, dh, S) * B * H / 8)])])
    linear(D, D, [B, S, D])
    t.op("aten::add", [x, x, []], [Hf, Hf, "Scalar"], ["", "", "1"],
         kernels=[("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3>)", ew_us(B * S * D, 3, 2))])
    ln()
    linear(D, 4 * D, [B, S, 4 * D])
    t.op("aten::gelu", [[B, S, 4 * D], []], [Hf, ""], ["", "'none'"],
         kernels=[("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2>)", ew_us(B * S * 4 * D, 2, 2))])
    linear(4 * D, D, [B, S, D], stream=13)
    t.op("aten::add", [x, x, []], [Hf, Hf, "Scalar"], ["", "", "1"],
         kernels=[("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3>)", ew_us(B * S * D, 3, 2))],
         stream=13)
    return t


def training_step():
    """One data-parallel training step of a small MLP with layer norm (fp32), in the layout of the
    HolisticTraceAnalysis traces: forward on the main thread, backward on the autograd thread,
    gradients all-reduced by NCCL, the batch copied from the host, a fused Adam step."""
    t = Trace(ids="corr")
    B, D, Hd = 256, 512, 2048
    F = "float"
    elementwise = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"

    def linear(i, o):
        t.op("aten::linear", [[B, i], [o, i], [o]], [F, F, F],
             children=[lambda: t.op("aten::t", [[o, i]], [F]),
                       lambda: t.op("aten::addmm", [[o], [B, i], [i, o], [], []], [F, F, F, "Scalar", "Scalar"], ["", "", "", "1", "1"],
                                    kernels=[("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4::Params)", gemm_us(B, o, i))])])

    def forward():
        t.op("aten::to", [[B, D], [], [], [], [], []], [F, "", "", "", "Scalar", ""],
             children=[lambda: t.op("aten::_to_copy", [[B, D], [], [], [], [], [], []], [F, "", "", "", "", "Scalar", ""],
                                    children=[lambda: t.op("aten::copy_", [[B, D], [B, D], []], [F, F, "Scalar"], ["", "", "True"],
                                                           kernels=[("Memcpy HtoD (Pinned -> Device)", 45.0)])])])
        linear(D, Hd)
        t.op("aten::relu", [[B, Hd]], [F], kernels=[(elementwise, ew_us(B * Hd, 2))])
        linear(Hd, D)
        t.op("aten::layer_norm", [[B, D], [], [D], [D], [], []], [F, "ScalarList", F, F, "Scalar", "Scalar"], ["", f"[{D}]", "", "", "1e-05", "True"],
             children=[lambda: t.op("aten::native_layer_norm", [[B, D], [], [D], [D], []], [F, "ScalarList", F, F, "Scalar"], ["", f"[{D}]", "", "", "1e-05"],
                                    kernels=[("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)", ew_us(B * D, 2))])])
        t.op("aten::sigmoid", [[B, D]], [F], kernels=[(elementwise, ew_us(B * D, 2))])
        t.op("aten::mse_loss", [[B, D], [B, D], []], [F, F, "Scalar"], ["", "", "1"],
             kernels=[(elementwise, ew_us(B * D, 2)), ("void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)", ew_us(B * D, 1))])

    def bwd(node, body):
        t.cpu_wrapper("autograd::engine::evaluate_function: " + node, lambda: t.cpu_wrapper(node, body, tid=BWD_TID), tid=BWD_TID)

    def addmm_backward(i, o):
        bwd("AddmmBackward0", lambda: (
            t.op("aten::mm", [[B, o], [o, i]], [F, F], kernels=[("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)", gemm_us(B, i, o))], tid=BWD_TID),
            t.op("aten::mm", [[o, B], [B, i]], [F, F], kernels=[("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4::Params)", gemm_us(o, i, B))], tid=BWD_TID),
            t.op("aten::sum", [[B, o], [], [], []], [F, "ScalarList", "Scalar", ""], ["", "[0]", "True", ""],
                 kernels=[("void at::native::reduce_kernel<128, 4>(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)", ew_us(B * o, 1))], tid=BWD_TID)))

    def backward():
        bwd("MseLossBackward0", lambda: t.op("aten::mse_loss_backward", [[], [B, D], [B, D], []], [F, F, F, "Scalar"], ["", "", "", "1"],
                                             kernels=[(elementwise, ew_us(B * D, 3))], tid=BWD_TID))
        bwd("SigmoidBackward0", lambda: t.op("aten::sigmoid_backward", [[B, D], [B, D]], [F, F],
                                             kernels=[(elementwise, ew_us(B * D, 3))], tid=BWD_TID))
        bwd("NativeLayerNormBackward0", lambda: t.op(
            "aten::native_layer_norm_backward", [[B, D], [B, D], [], [B, 1], [B, 1], [D], [D], []],
            [F, F, "ScalarList", F, F, F, F, "ScalarList"], ["", "", f"[{D}]", "", "", "", "", "[True, True, True]"],
            kernels=[("void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<float, float>(float const*, float const*, float const*, float const*, float const*, float*, int)", ew_us(B * D, 3)),
                     ("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, long, float const*, float const*, float const*, float const*, float*, float*)", ew_us(B * D, 2))], tid=BWD_TID))
        addmm_backward(Hd, D)
        bwd("ReluBackward0", lambda: t.op("aten::threshold_backward", [[B, Hd], [B, Hd], []], [F, F, "Scalar"], ["", "", "0"],
                                          kernels=[(elementwise, ew_us(B * Hd, 3))], tid=BWD_TID))
        addmm_backward(D, Hd)
        # DDP's gradient all-reduce: one NCCL kernel on its own stream.
        t.op("record_param_comms", [[], [], [], [], [], []], ["TensorList", "Scalar", "Scalar", "Scalar", "", ""],
             kernels=[("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 180.0)], tid=BWD_TID, stream=13)

    params = [[Hd, D], [Hd], [D, Hd], [D], [D], [D]]

    def step():
        t.cpu_wrapper("Optimizer.zero_grad#Adam.zero_grad", lambda: t.op(
            "aten::zero_", [[Hd, D]], [F], kernels=[(elementwise, ew_us(Hd * D, 1))]))
        t.cpu_wrapper("Optimizer.step#Adam.step", lambda: (
            t.op("aten::_foreach_mul_", [params, []], ["TensorList", "Scalar"], ["", "0.5"],
                 kernels=[("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float)", 12.0)]),
            t.op("aten::_fused_adam_", [params, params, params, params, [], [[]] * 6, [], [], [], [], [], [], [], [], []],
                 ["TensorList", "TensorList", "TensorList", "TensorList", "TensorList", "TensorList", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", ""],
                 kernels=[("void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float, (ADAM_MODE)0>, float*, double, double, double, double, double, bool, float*, float*>(TensorListMetadata<4>, AdamFunctor<float, (ADAM_MODE)0>, float*, double, double, double, double, double, bool, float*, float*)", 60.0)])))

    t.annotate("ProfilerStep#2", lambda: (forward(), backward(), step()))
    return t


def resnet_pt18():
    """A ResNet stem and a stride-2 bottleneck downsample, forward and backward, in the PyTorch
    1.8 format (no input types, no Concrete Inputs: the importer infers the geometry of the
    backward convolutions from their shapes)."""
    t = Trace(fmt="1.8")
    N = 8
    conv_k = "void cudnn::cnn::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, true, false, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)"

    def conv(x, w, y):
        t.op("aten::conv2d", [x, w, [], [], [], [], []], [],
             children=[lambda: t.op("aten::convolution", [x, w, [], [], [], [], [], [], []], [],
                                    children=[lambda: t.op("aten::_convolution", [x, w, [], [], [], [], [], [], [], [], [], [], []], [],
                                                           children=[lambda: t.op("aten::cudnn_convolution", [x, w, [], [], [], [], [], []], [],
                                                                                  kernels=[(conv_k, gemm_us(N * y[2] * y[3], w[0], w[1] * w[2] * w[3]))])])])])

    def conv_bwd(x, w, gy):
        t.cpu_wrapper("CudnnConvolutionBackward", lambda: t.op(
            "aten::cudnn_convolution_backward", [x, gy, w, [], [], [], [], [], [], [], []], [],
            children=[lambda: t.op("aten::cudnn_convolution_backward_input", [[], gy, w, [], [], [], [], [], [], []], [],
                                   kernels=[("void cudnn::detail::dgrad_engine<float, 128, 6, 7, 3, 3, 5, false>(int, int, int, float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, int)", gemm_us(N * x[2] * x[3], x[1] * w[2] * w[3], w[0]))], tid=BWD_TID),
                      lambda: t.op("aten::cudnn_convolution_backward_weight", [[], gy, x, [], [], [], [], [], [], []], [],
                                   kernels=[("void cudnn::detail::wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)", gemm_us(w[0], w[1] * w[2] * w[3], N * gy[2] * gy[3]))], tid=BWD_TID)],
            tid=BWD_TID), tid=BWD_TID)

    stem_x, stem_w, stem_y = [N, 3, 64, 64], [32, 3, 7, 7], [N, 32, 32, 32]
    down_w, down_y = [64, 32, 1, 1], [N, 64, 16, 16]

    def forward():
        t.op("aten::to", [[N, 3, 64, 64], [], [], [], []], [],
             children=[lambda: t.op("aten::copy_", [[N, 3, 64, 64], [N, 3, 64, 64], []], [],
                                    kernels=[("Memcpy HtoD (Pageable -> Device)", 60.0)])])
        conv(stem_x, stem_w, stem_y)
        t.op("aten::relu_", [stem_y], [], children=[lambda: t.op("aten::threshold_", [stem_y, [], []], [],
                                                                   kernels=[("void at::native::vectorized_elementwise_kernel<4>(int)", ew_us(numel(stem_y), 2))])])
        conv(stem_y, down_w, down_y)

    def backward():
        conv_bwd(stem_y, down_w, down_y)
        t.cpu_wrapper("ReluBackward1", lambda: t.op("aten::threshold_backward", [stem_y, stem_y, []], [],
                                                     kernels=[("void at::native::vectorized_elementwise_kernel<4>(int)", ew_us(numel(stem_y), 3))], tid=BWD_TID), tid=BWD_TID)
        conv_bwd(stem_x, stem_w, stem_y)

    t.annotate("ProfilerStep#1", lambda: (forward(), backward()))
    return t


if __name__ == "__main__":
    training_step().write("training_step.json")
    resnet_pt18().write("resnet_pt18.json")
    cnn().write("cnn_small.json")
    transformer().write("transformer_block.json")
    transformer().write("transformer_block.json.gz", gz=True)
