// jax.jit(lambda x, y: jnp.sin(x).reshape(6).reshape(3, 2) @ y + 1.0)
// .lower(f32[2,3], f32[2,4]).as_text(), jax 0.10.2: StableHLO as jax
// hands it to XLA (tests/adapters/xla_received.sh).
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x4xf32>) -> (tensor<3x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<2x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<2x3xf32>) -> tensor<6xf32>
    %2 = stablehlo.reshape %1 : (tensor<6xf32>) -> tensor<3x2xf32>
    %3 = stablehlo.dot_general %2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %5 = stablehlo.add %3, %4 : tensor<3x4xf32>
    return %5 : tensor<3x4xf32>
  }
}

