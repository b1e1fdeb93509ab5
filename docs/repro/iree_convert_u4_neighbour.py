#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): an out-of-range f32 -> ui4 convert changes the
ui4 element stored next to it. StableHLO leaves the out-of-range element
itself undefined, not its neighbour: converting [16, 2] must give 2 in
element 1 whatever element 0 becomes. Standalone: needs only
iree-base-compiler and iree-base-runtime (pip), numpy.
docs/FINDINGS.md, I11.
  python3 iree_convert_u4_neighbour.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<2xf32>) -> tensor<2xui4> {
  %0 = stablehlo.convert %x : (tensor<2xf32>) -> tensor<2xui4>
  return %0 : tensor<2xui4>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
instance = rt.VmInstance()
device = rt.get_driver("local-task").create_default_device()
hal = rt.create_hal_module(instance, device)
vm = rt.VmModule.copy_buffer(instance, vmfb)
ctx = rt.VmContext(instance, modules=[hal, vm])
fn = vm.lookup_function("main")
for x in ([2, 3], [16, 2], [17, 2], [-1, 2], [2, 16]):
    a = np.array(x, np.float32)
    args, res = rt.VmVariantList(1), rt.VmVariantList(1)
    buf = device.allocator.allocate_buffer_copy(
        memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
        device=device, buffer=a)
    args.push_ref(rt.HalBufferView(buf, [2], rt.HalElementType.FLOAT_32))
    ctx.invoke(fn, args, res)
    bv = res.get_as_object(0, rt.HalBufferView)
    mapping = bv.map()
    byte = int(mapping.asarray([bv.byte_length], np.dtype(np.uint8))[0])
    del mapping, bv, buf, args, res
    got = [byte & 15, byte >> 4]  # packed two to a byte, low nibble first
    # the in-range elements must be their truncation; out-of-range ones
    # (outside [0, 15]) may be anything
    ok = all(got[i] == int(v) for i, v in enumerate(x) if 0 <= v <= 15)
    print("convert(%-8s) -> ui4 %s %s" % (x, got, "" if ok else "WRONG (an in-range element changed)"))
