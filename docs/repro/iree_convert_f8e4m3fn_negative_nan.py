#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): f8E4M3FN -> f32 of the negative NaN (bits 0xff)
gives -480, not NaN; the positive NaN (0x7f) gives NaN. Standalone: needs
only iree-base-compiler and iree-base-runtime (pip), numpy.
docs/FINDINGS.md, I28.
  python3 iree_convert_f8e4m3fn_negative_nan.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  %0 = stablehlo.convert %x : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
instance = rt.VmInstance()
device = rt.get_driver("local-task").create_default_device()
hal = rt.create_hal_module(instance, device)
vm = rt.VmModule.copy_buffer(instance, vmfb)
ctx = rt.VmContext(instance, modules=[hal, vm])
bits = np.array([0x7f, 0xff, 0x7e, 0xfe], np.uint8)  # NaN, -NaN, 448, -448
want = [np.nan, np.nan, 448.0, -448.0]
args, res = rt.VmVariantList(1), rt.VmVariantList(1)
buf = device.allocator.allocate_buffer_copy(
    memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
    device=device, buffer=bits)
args.push_ref(rt.HalBufferView(buf, [4], rt.HalElementType.FLOAT_8_E4M3_FN))
ctx.invoke(vm.lookup_function("main"), args, res)
bv = res.get_as_object(0, rt.HalBufferView)
mapping = bv.map()
got = [float(v) for v in mapping.asarray([4], np.dtype(np.float32))]
del mapping, bv, buf, args, res
for b, g, w in zip(bits, got, want):
    ok = (np.isnan(g) and np.isnan(w)) or g == w
    print("f8E4M3FN 0x%02x -> f32 %s expected %s %s" % (b, g, w, "" if ok else "WRONG"))
