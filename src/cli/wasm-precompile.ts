/**
 * Compiles the WebAssembly kernels with V8's optimizing compiler (TurboFan) on its background
 * threads while the CLI loads sharp and decodes, and hands the module to the core before the
 * render. Left alone, V8 compiles each kernel lazily on its first call with the Liftoff baseline
 * compiler and tiers up to TurboFan only between calls, so a CLI's single render runs its kernels
 * as baseline code and spends more CPU again on tier-up compiles it never uses (measured on the
 * cold render, 640x480 -> 160 columns: ~45 ms on the main thread and ~80 ms of process CPU,
 * against ~35 and ~48 with the module compiled first).
 *
 * The flags are set for this one compile and put back once it settles, so no other WebAssembly in
 * the process (none in the CLI today) compiles differently. Skipped when node was started with
 * wasm or Liftoff flags of its own.
 */
import { setFlagsFromString } from 'node:v8';
import { kernelBytes, useKernelModule } from '../core/wasm/kernels.js';

/** Starts the compile; the promise settles (never rejects) once the core has the module or the compile failed. */
export function precompileKernels(): Promise<void> {
  if (process.execArgv.some((a) => /wasm|liftoff/.test(a))) return Promise.resolve();
  setFlagsFromString('--no-liftoff');
  setFlagsFromString('--no-wasm-lazy-compilation');
  // Node 24 does not hold the event loop open for a pending WebAssembly compile: without a timer
  // the process could exit with the render's await unsettled.
  const keepAlive = setInterval(() => undefined, 1000);
  const api = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<object> } }).WebAssembly;
  let compiling: Promise<object>;
  try {
    compiling = api.compile(kernelBytes());
  } catch (e) {
    compiling = Promise.reject(e);
  }
  return compiling.then(useKernelModule, () => undefined).finally(() => {
    clearInterval(keepAlive);
    setFlagsFromString('--liftoff');
    setFlagsFromString('--wasm-lazy-compilation');
  });
}
