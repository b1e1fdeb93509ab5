#!/usr/bin/env python3
"""XLA CPU (jaxlib 0.10.2): a sort whose comparator calls computations
(map, reduce) aborts the compiler in IrEmitter::EmitThreadLocalCall
("Check failed: ... Map key not found"), called from
IrEmitter2::EmitSortComparator; a comparator holding a while loop aborts
the same way in IrEmitter::HandleCall. openxla/xla#47366 and #47370
(fixed upstream; the modules are XLA's own regression tests). Needs only
jax/jaxlib (pip). docs/FINDINGS.md, finding 18.
  python3 xla_cpu_sort_comparator_abort.py   # dies with SIGABRT on 0.10.2
"""
import numpy as np
import jax
from jax._src.lib import xla_client as xc

try:
    import jaxlib._hlo as hlo  # jaxlib >= 0.10.2
except ImportError:
    hlo = xc._xla

HLO = """
HloModule sort_comparator_with_nested_computations
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}
double_f32 {
  x = f32[] parameter(0)
  two = f32[] constant(2)
  ROOT mul = f32[] multiply(x, two)
}
compare {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  bcast0 = f32[2] broadcast(p0), dimensions={}
  bcast1 = f32[2] broadcast(p1), dimensions={}
  iota = f32[2] iota(), iota_dimension=0
  sum0 = f32[2] add(bcast0, iota)
  sum1 = f32[2] add(bcast1, iota)
  m0 = f32[2] map(sum0), to_apply=double_f32
  m1 = f32[2] map(sum1), to_apply=double_f32
  zero = f32[] constant(0)
  r0 = f32[] reduce(m0, zero), dimensions={0}, to_apply=add_f32
  r1 = f32[] reduce(m1, zero), dimensions={0}, to_apply=add_f32
  ROOT lt = pred[] compare(r0, r1), direction=LT
}
ENTRY entry {
  p = f32[8] parameter(0)
  ROOT sort = f32[8] sort(p), dimensions={0}, is_stable=true, to_apply=compare
}
"""

dev = jax.devices("cpu")[0]
proto = hlo.hlo_module_from_text(HLO).as_serialized_hlo_module_proto()
mlir = xc._xla.mlir.hlo_to_stablehlo(proto)
print("compiling ...", flush=True)
exe = dev.client.compile_and_load(mlir, [dev], xc.CompileOptions())
x = np.array([3, -1, 7, 0, -5, 2, 8, 1], np.float32)
out = exe.execute([jax.device_put(x, dev)])
print("got     ", np.asarray(out[0]).tolist())
print("expected", sorted(x.tolist()))
