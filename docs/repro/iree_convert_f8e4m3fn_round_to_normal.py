#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): converting f32 to f8E4M3FN gives 0 for values just
below the smallest normal, 2^-6, that round up to it: 0.01538 (nearest
f8E4M3FN values: 7*2^-9 = 0.01367 and 2^-6 = 0.015625) gives 0, where
round-to-nearest gives 0.015625. Values that round to a denormal are
right. f32 to f8E5M2 does the same at its smallest normal, 2^-14:
5.4359e-05 gives 0. Standalone: needs only iree-base-compiler and
iree-base-runtime (pip), numpy. docs/FINDINGS.md, I15.
  python3 iree_convert_f8e4m3fn_round_to_normal.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xT> {
  %0 = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xT>
  return %0 : tensor<4xT>
}
"""
CASES = [
    ("f8E4M3FN", [0.015380859375, -0.015380859375, 0.0152, 0.0146],
     [0x08, 0x88, 0x08, 0x07]),  # 2^-6, -2^-6, 2^-6, 7*2^-9 (bits)
    ("f8E5M2", [5.4359436e-05, -5.4359436e-05, 4.0e-05, 1e-4],
     [0x04, 0x84, 0x03, 0x07]),  # 2^-14, -2^-14, 3*2^-16, 1.75*2^-14
]
for t, xs, want in CASES:
    vmfb = ic.compile_str(MLIR.replace("T", t), target_backends=["llvm-cpu"], input_type="stablehlo",
                          extra_args=["--iree-llvmcpu-target-cpu=host"])
    instance = rt.VmInstance()
    device = rt.get_driver("local-task").create_default_device()
    hal = rt.create_hal_module(instance, device)
    vm = rt.VmModule.copy_buffer(instance, vmfb)
    ctx = rt.VmContext(instance, modules=[hal, vm])
    x = np.array(xs, np.float32)
    args, res = rt.VmVariantList(1), rt.VmVariantList(1)
    buf = device.allocator.allocate_buffer_copy(
        memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
        device=device, buffer=x)
    args.push_ref(rt.HalBufferView(buf, [4], rt.HalElementType.FLOAT_32))
    ctx.invoke(vm.lookup_function("main"), args, res)
    bv = res.get_as_object(0, rt.HalBufferView)
    mapping = bv.map()
    got = [int(v) for v in mapping.asarray([4], np.dtype(np.uint8))]
    del mapping, bv, buf, args, res, ctx, vm, hal
    for v, g, w in zip(x, got, want):
        print("%s(%.6g) = bits 0x%02x expected 0x%02x %s" % (t, v, g, w, "" if g == w else "WRONG"))
