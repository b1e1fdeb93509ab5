#!/usr/bin/env python3
"""XLA's HLO text parser (jax/jaxlib 0.10.2) reads a complex constant whose
real part is NaN as NaN + NaN i: (nan, 1.745) comes back (nan, nan), and the
compiled imag() of it returns NaN instead of 1.745. (1.5, nan) is read right.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 36.
  python3 xla_parser_complex_nan_real.py
"""
import jax

try:
    import jaxlib._hlo as hlo  # jaxlib >= 0.10.2
except ImportError:
    from jax._src.lib import xla_client
    hlo = xla_client._xla

text = """HloModule m
ENTRY e {
  c = c128[3] constant({(nan, 1.745), (1.5, nan), (1, 2)})
  ROOT i = f64[3] imag(c)
}
"""
mod = hlo.hlo_module_from_text(text)
print("jax", jax.__version__)
print("sent:     c128[3] constant({(nan, 1.745), (1.5, nan), (1, 2)})")
print("parsed:  ", [l.strip() for l in mod.to_string().splitlines() if "constant(" in l][0])
print("expected: imag = [1.745, nan, 2]")
