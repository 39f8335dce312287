#!/usr/bin/env python3
"""Writes the small hand-made torch.profiler traces of tests/unit/calib_kineto_test.cpp (run from
this folder; deterministic: gzip with mtime 0). The expected sums are derived in that test's comments."""
import gzip
import json


def X(cat, name, ts, dur, tid=1, pid=100, args=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args is not None:
        e["args"] = args
    return e


def kern(name, ts, dur, corr, stream=7, cat="kernel"):
    return X(cat, name, ts, dur, tid=stream, pid=0, args={"device": 0, "stream": stream, "correlation": corr, "External id": corr})


def launch(ts, corr, name="cudaLaunchKernel", dur=2):
    return X("cuda_runtime", name, ts, dur, args={"correlation": corr, "External id": corr})


ev = [
    {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
    X("user_annotation", "ProfilerStep#1", 1000, 100),
    X("user_annotation", "ProfilerStep#2", 1100, 100),
    X("cpu_op", "aten::mm", 1010, 20, args={"Input Dims": [[256, 512], [512, 1024]], "Input type": ["float", "float"], "External id": 1}),
    launch(1015, 1),
    kern("ampere_sgemm_128x64_tn", 1030, 40, 1),
    launch(1050, 2),
    kern("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int, float*)", 1075, 10, 2),
    launch(1060, 10),
    kern("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(Params)", 1086, 15, 10),
    launch(1095, 3),
    kern("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 1105, 50, 3, stream=20),
    launch(1110, 4),
    kern("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16", 1120, 30, 4),
    launch(1150, 5),
    kern("void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float>(int, float)", 1160, 20, 5),
    launch(1160, 6),
    kern("flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 64, 4> >(Flash_fwd_params)", 1185, 0, 6),
    launch(1170, 7, name="cudaMemcpyAsync"),
    kern("Memcpy HtoD (Pageable -> Device)", 1190, 5, 7, cat="gpu_memcpy"),
    kern("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >(float*)", 1195, 3, 99),
    launch(1300, 8),
    kern("my_custom_kernel(float*)", 1310, 7, 8),
    kern("void fbgemm_gpu::permute_2D_data_kernel<false, int>(int, int*)", 1320, 4, 98),
    {"ph": "s", "id": 1, "pid": 100, "tid": 1, "ts": 1015, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 1, "pid": 0, "tid": 7, "ts": 1030, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "i", "name": "Iteration Start: PyTorch Profiler", "ts": 1000, "s": "g", "pid": 100, "tid": 1},
]
doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "numSms": 108}], "traceEvents": ev}
text = json.dumps(doc, indent=1) + "\n"
open("small_trace.json", "w").write(text)
with open("small_trace.json.gz", "wb") as f:
    with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as g:
        g.write(text.encode())
gz = open("small_trace.json.gz", "rb").read()
open("truncated.json.gz", "wb").write(gz[: len(gz) // 2])

def write(name, d):
    open(name, "w").write(json.dumps(d, indent=1) + "\n")

write("no_kernels.json", {"schemaVersion": 1, "traceEvents": [X("user_annotation", "ProfilerStep#7", 0, 50), X("cpu_op", "aten::empty", 1, 2)]})
write("one_step.json", {"traceEvents": [X("user_annotation", "ProfilerStep#3", 0, 100), launch(10, 1), kern("ampere_sgemm_32x32_sliced1x4_tn", 20, 30, 1),
                                        launch(40, 2), kern("void at::native::vectorized_elementwise_kernel<4>(int)", 60, 10, 2)]})
write("not_a_trace.json", {"kind": "measurement", "points": []})
write("two_devices.json", {"traceEvents": [kern("a_gemm", 0, 1, 1), X("kernel", "b_gemm", 2, 1, args={"device": 1, "correlation": 2})]})
write("negative_duration.json", {"traceEvents": [kern("a_gemm", 0, -1, 1)]})
open("not_json.json", "w").write("ProfilerStep#1 ampere_sgemm 40 us\n")
