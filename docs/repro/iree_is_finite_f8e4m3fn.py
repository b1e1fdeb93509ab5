#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): is_finite on f8E4M3FN is false for every value:
1.0, 0 and 448 (the largest finite value) all give false. f8E4M3FN has
no infinity; only its NaN (0x7f, 0xff) is not finite. Standalone: needs
only iree-base-compiler and iree-base-runtime (pip), numpy.
docs/FINDINGS.md, I14.
  python3 iree_is_finite_f8e4m3fn.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<4xf8E4M3FN>) -> tensor<4xi1> {
  %0 = stablehlo.is_finite %x : (tensor<4xf8E4M3FN>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
instance = rt.VmInstance()
device = rt.get_driver("local-task").create_default_device()
hal = rt.create_hal_module(instance, device)
vm = rt.VmModule.copy_buffer(instance, vmfb)
ctx = rt.VmContext(instance, modules=[hal, vm])
bits = np.array([0x38, 0x00, 0x7e, 0x7f], np.uint8)  # 1.0, 0, 448, NaN
want = [True, True, True, False]
args, res = rt.VmVariantList(1), rt.VmVariantList(1)
buf = device.allocator.allocate_buffer_copy(
    memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
    device=device, buffer=bits)
args.push_ref(rt.HalBufferView(buf, [4], rt.HalElementType.FLOAT_8_E4M3_FN))
ctx.invoke(vm.lookup_function("main"), args, res)
bv = res.get_as_object(0, rt.HalBufferView)
mapping = bv.map()
got = [bool(v) for v in mapping.asarray([4], np.dtype(np.uint8))]
del mapping, bv, buf, args, res
for b, g, w in zip(bits, got, want):
    print("is_finite(f8E4M3FN bits 0x%02x) = %s expected %s %s" % (b, g, w, "" if g == w else "WRONG"))
