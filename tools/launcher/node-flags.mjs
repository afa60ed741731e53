// The Node flags every service runs with, wherever it is started: `npm start` (tools/launcher/start.mjs), the Nx
// `serve` targets, the container image (docker/Dockerfile), the benchmarks and the reliability suite
// (tools/checks/src/containers.spec.ts checks that the Dockerfile and the serve targets spell the same).
//
// --max-semi-space-size=8 (MiB): V8's young generation grows to 2 x 16 MiB while a service starts and never gives it
// back; at 8 the idle RSS of each service stays under the 150 MB target (docs/benchmarks.md, "Memory"), and the
// token server's throughput is unchanged within the benchmark's noise.
export const SERVICE_NODE_FLAGS = Object.freeze(['--max-semi-space-size=8']);
