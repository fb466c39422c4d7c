/**
 * The WebAssembly kernels (assembly/kernels.ts, compiled with SIMD by scripts/build-wasm.mjs) and
 * the memory they work in. Isomorphic: the module is instantiated synchronously from bytes embedded
 * in a generated TS module, so the same code runs in Node (server workers, CLI) and in a Web Worker
 * (the studio) with no file, fetch or bundler plugin. Synchronous compilation is allowed in workers
 * and in Node, and on a page's main thread in Chromium (156, tested in studio-e2e; it once refused
 * modules over 4 KB there).
 *
 * Memory: a bump arena, reset by each kernel call (`frame()`), laid out above the module's static
 * data and grown (never shrunk) to the largest call so far. Kernels are synchronous and each thread
 * has its own instance, so one arena per thread is enough; views into it are valid only until the
 * next `frame()`, since growing the memory detaches them.
 */
import { KERNELS_WASM_BASE64 } from './kernels.generated.js';

export type Ptr = number;

/** Partial histograms of the histogram kernel (assembly/kernels.ts PARTS, the same number). */
export const HISTOGRAM_PARTS = 8;

/** f32/u32 words the histogram kernel uses at `hist` for `bins` bins: the counts, then its partial counts. */
export function histogramWords(bins: number): number {
  return bins * (1 + HISTOGRAM_PARTS);
}

/** The exports of assembly/kernels.ts. */
export interface KernelExports {
  readonly memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  heapBase(): Ptr;
  denoisePass(s: Ptr, o: Ptr, w: number, h: number, lut: Ptr, prev: Ptr, work: Ptr): void;
  histogram(d: Ptr, n: number, bins: number, hist: Ptr): void;
  applyLut(src: Ptr, n: number, lut: Ptr, out: Ptr): void;
  oneMinus(p: Ptr, n: number): void;
  unsharp(src: Ptr, w: number, h: number, amount: number, out: Ptr, tmp: Ptr, tone: Ptr): void;
  resample(px: Ptr, pxRow0: number, sw: number, cols: number, rows: number, subX: number, subY: number, ground: number,
    taps: Ptr, lut: Ptr, enc: Ptr, work: Ptr, luma: Ptr, cellRgb: Ptr, withLuma: number, rgb: number, y0: number, y1: number): void;
  boxTaps(src: number, dst: number, start: Ptr, count: Ptr, offset: Ptr, weight: Ptr): number;
  cellMeans(d: Ptr, w: number, cols: number, rows: number, cellW: number, cellH: number, out: Ptr): void;
  structure(src: Ptr, w: number, h: number, subX: number, subY: number, tan225: number, direction: Ptr, strength: Ptr): void;
  sobel(src: Ptr, w: number, h: number, edgeStrength: number, out: Ptr): void;
  braille(target: Ptr, width: number, cols: number, rows: number, hx: number, hy: number, dither: number,
    out: Ptr, previous: Ptr, stable: Ptr, hysteresis: number, dots: Ptr): void;
  viewBlur(src: Ptr, w: number, h: number, out: Ptr, tmp: Ptr): void;
  viewBlurCells(src: Ptr, count: number, w: number, h: number, out: Ptr, tmp: Ptr): void;
  matchGlyphs(target: Ptr, width: number, cols: number, rows: number, templates: Ptr, g2: Ptr, gm: Ptr, spread: Ptr, count: number,
    coverage: Ptr, ncov: number, scale: number, cand: Ptr, nc: number, directional: Ptr, direction: Ptr, strength: Ptr, sAmt: number,
    dither: number, previous: Ptr, stable: Ptr, hysteresis: number, toneWeight: number, flatBoost: number, flatSpread: number, calm: number, out: Ptr, work: Ptr, y0: number, y1: number,
    tensorSrc: Ptr, tan225: number): void;
  hexLevels(src: Ptr, n: number, lut: Ptr, dst: Ptr): number;
  fineStats(templates: Ptr, count: number, g2: Ptr, gm: Ptr, spread: Ptr, blocks: Ptr, blockStats: Ptr): void;
  refineBook(cand: Ptr, nc: number, blocks: Ptr, blockStats: Ptr, gm: Ptr, spread: Ptr, book: Ptr, cgm: Ptr): void;
  refineGlyphs(target: Ptr, width: number, cols: number, rows: number, taps: Ptr, templates: Ptr, g2: Ptr, gm: Ptr, count: number,
    inBook: Ptr, cand: Ptr, cgm: Ptr, book: Ptr, nc: number, blocks: Ptr, blockStats: Ptr, minVar: number, scale: number, toneWeight: number, calm: number, out: Ptr, work: Ptr, y0: number, y1: number): void;
  matchTwoColor(rgb: Ptr, width: number, cols: number, rows: number, cbrt: Ptr, centred: Ptr, invSmm: Ptr, mean: Ptr, cand: Ptr,
    complement: Ptr, candidateOf: Ptr, glyphs: number, pairs: Ptr, pairInv: Ptr, pairK: Ptr, np: number, blank: number, full: number,
    lightInk: number, cells: Ptr, fg: Ptr, bg: Ptr, previous: Ptr, stable: Ptr, hysteresis: number, work: Ptr): void;
  complements(templates: Ptr, cand: Ptr, nc: number, out: Ptr): void;
  matchBrailleTwoColor(rgb: Ptr, width: number, cols: number, rows: number, templates: Ptr, lightInk: number,
    cells: Ptr, fg: Ptr, bg: Ptr, previous: Ptr, stable: Ptr, hysteresis: number, lumaLin: Ptr, work: Ptr): void;
  measure(d: Ptr, w: number, h: number, out: Ptr, magHist: Ptr): void;
  cellChroma(rgb: Ptr, cells: number, enc: Ptr): number;
  histShares(h: Ptr, bins: number, out: Ptr): void;
  histPercentiles(h: Ptr, bins: number, ps: Ptr, np: number, out: Ptr): void;
  cellColors(rgb: Ptr, n: number, lut: Ptr, saturation: number, enc: Ptr, coverage: Ptr, cells: Ptr, out: Ptr): void;
  toneSums(rendered: Ptr, src: Ptr, band: Ptr, n: number, ms: number, out: Ptr, qHist: Ptr): void;
  quantizeTable(lut: Ptr, from: number, to: number, levels: Ptr, nLevels: number, invert: boolean, levelOf: Ptr, levelIndex: Ptr): void;
  entryCounts(lutAt: Ptr, src: Ptr, band: Ptr, n: number, entries: number, ms: number, out: Ptr, devs: Ptr): void;
  simSums(levelOf: Ptr, lutAt: Ptr, n: number, counts: Ptr, devs: Ptr, entries: number, from: number, to: number, out: Ptr, qHist: Ptr): void;
  unstable(levelOf: Ptr, src: Ptr, n: number, sigma: number): number;
  cellsRange(values: Ptr, n: number, out: Ptr, qHist: Ptr): void;
  cellsBands(values: Ptr, n: number, q25: number, q75: number, mean: number, band: Ptr): number;
  quantileBin(h: Ptr, bins: number, want: number): number;
  coverageTones(cells: Ptr, n: number, coverage: Ptr, scale: number, invert: boolean, out: Ptr): void;
  lutIndices(src: Ptr, n: number, out: Ptr): void;
  gather(src: Ptr, stride: number, m: number, width: number, dst: Ptr): void;
  templateStats(templates: Ptr, count: number, g2: Ptr, gm: Ptr, spread: Ptr): void;
  glyphCounts(cells: Ptr, n: number, glyphs: number, counts: Ptr): void;
  roundTripError(colors: Ptr, lin: Ptr, n: number, enc: Ptr): number;
  codebookDp(sums: Ptr, levels: Ptr, n: number, budget: number, parents: Ptr, work: Ptr): number;
  encTable(out: Ptr): void;
  toneTable(out: Ptr, size: number, from: number, to: number, lo: number, span: number, contrast: number, lift: number, inv: number, curved: boolean, invert: boolean): void;
  colorToneTable(out: Ptr, size: number, lo: number, span: number, contrast: number, lift: number, inv: number, curved: boolean): void;
  temporalStep(raster: Ptr, est: Ptr, prev: Ptr, width: number, cols: number, rows: number, variance: Ptr, motion: Ptr, stable: Ptr,
    scratch: Ptr, scratchSpatial: Ptr, r: number, qStatic: number, t: number, stableBelow: number, cutDelta: number, clipMargin: number, out: Ptr): number;
}

/** The slice of the WebAssembly JS API used here (the core's type check has no DOM or Node types). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

const WASM = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
const PAGE = 65536;

let compiled: object | null = null;
let instance: KernelExports | null = null;
let base = 0;
let top = 0;

/** The compiled kernel module (each instance of this thread's is made from it). */
export function kernelModule(): object {
  compiled ??= new WASM.Module(kernelBytes());
  return compiled;
}

let bytes: Uint8Array | null = null;

/** The module's bytes, decoded on first use. */
export function kernelBytes(): Uint8Array {
  bytes ??= fromBase64(KERNELS_WASM_BASE64);
  return bytes;
}

/**
 * Base64 to bytes with the runtime's native decoder where it has one (`Uint8Array.fromBase64`;
 * Node's Buffer), else atob: the module's 34 KB of base64 on a cold start, where a decoder in
 * JavaScript would run interpreted.
 */
export function fromBase64(b64: string): Uint8Array {
  const native = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array }).fromBase64;
  if (native) return native(b64);
  const g = globalThis as unknown as { Buffer?: { from(s: string, encoding: 'base64'): Uint8Array }; atob(s: string): string };
  if (g.Buffer) return g.Buffer.from(b64, 'base64');
  const bin = g.atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function kernels(): KernelExports {
  if (!instance) ({ k: instance, base } = ownKernels(0));
  return instance;
}

/**
 * A kernel instance with a memory of its own, at least `bytes` long from the returned `base`
 * (16-byte aligned, above the module's static data): the thread's shared arena (kernels()), and
 * state that outlives a frame (the temporal filter's), which the arena would overwrite. Only the
 * arena grows its memory later; a filter's views into its own stay valid.
 */
export function ownKernels(bytes: number): { readonly k: KernelExports; readonly base: Ptr } {
  const k = new WASM.Instance(kernelModule(), {}).exports as KernelExports;
  const start = aligned(k.heapBase());
  const have = k.memory.buffer.byteLength;
  if (start + bytes > have) k.memory.grow(Math.ceil((start + bytes - have) / PAGE));
  return { k, base: start };
}

/** n bytes rounded up to a whole number of 16-byte blocks: every array in kernel memory starts aligned. */
const aligned = (n: number): number => (n + 15) & ~15;

/**
 * Byte offsets (from 0) of consecutive blocks of these sizes in bytes, each 16-byte aligned, and
 * the bytes they take together: the layout of state kept in an ownKernels() memory.
 */
export function layout(sizes: readonly number[]): { readonly at: readonly Ptr[]; readonly size: number } {
  const at: Ptr[] = [];
  let size = 0;
  for (const n of sizes) {
    at.push(size);
    size += aligned(n);
  }
  return { at, size };
}

/** One kernel call's memory: allocate, then `ready()` grows the memory and gives the exports. */
export interface Frame {
  /** Room for n f32 (or i32/u32), 16-byte aligned; returns its byte offset. */
  f32(n: number): Ptr;
  /** Room for n bytes, 16-byte aligned. */
  bytes(n: number): Ptr;
  /** Grows the memory to hold everything allocated; call after the last allocation. */
  ready(): KernelExports;
  /** Views (valid until the next frame()). */
  viewF32(p: Ptr, n: number): Float32Array;
  viewF64(p: Ptr, n: number): Float64Array;
  viewI32(p: Ptr, n: number): Int32Array;
  viewU32(p: Ptr, n: number): Uint32Array;
  viewU16(p: Ptr, n: number): Uint16Array;
  viewU8(p: Ptr, n: number): Uint8Array;
}

const frameApi: Frame = {
  f32: (n) => frameApi.bytes(n * 4),
  bytes(n) {
    const p = top;
    top = p + aligned(n);
    return p;
  },
  ready() {
    const k = kernels();
    const have = k.memory.buffer.byteLength;
    if (top > have) k.memory.grow(Math.ceil((top - have) / PAGE));
    return k;
  },
  viewF32: (p, n) => new Float32Array(kernels().memory.buffer, p, n),
  viewF64: (p, n) => new Float64Array(kernels().memory.buffer, p, n),
  viewI32: (p, n) => new Int32Array(kernels().memory.buffer, p, n),
  viewU32: (p, n) => new Uint32Array(kernels().memory.buffer, p, n),
  viewU16: (p, n) => new Uint16Array(kernels().memory.buffer, p, n),
  viewU8: (p, n) => new Uint8Array(kernels().memory.buffer, p, n),
};

/** Starts a kernel call: the arena is empty again (earlier views may be overwritten), but for the kept raster below it. */
export function frame(): Frame {
  kernels();
  top = base + keptBytes;
  epoch++;
  return frameApi;
}

/**
 * A raster kept in kernel memory below every frame: the resampled luminance, which the Director's
 * measurements and the detail stage read there (keptAt()) instead of copying it back in after the
 * frames between, and which is copied out to JavaScript only when something reads it there
 * (copyKept(): a caller of prepare()). About 0.15 ms of copies a warm render at 640 x 480.
 */
let keptBytes = 0;
/** The raster object that stands for the kept raster (found by identity: not its copy, which may be scratch memory). */
let keptOwner: object | null = null;

/**
 * Room for n f32 below the frames, from the next frame() on (call it before that frame): the
 * raster kept before is forgotten. Returns its offset; mirrorKept() then names its owner.
 */
export function reserveKept(n: number): Ptr {
  kernels();
  keptOwner = null;
  keptBytes = aligned(n * 4);
  return base;
}

/** `owner` (the raster object whose values were written there) stands for the kept raster. */
export function mirrorKept(owner: object): void {
  keptOwner = owner;
}

/**
 * The kept raster copied into `into` (its length in f32); `owner` must still be the kept
 * raster's: a later reserveKept() has written over it.
 */
export function copyKept(owner: object, into: Float32Array): Float32Array {
  if (owner !== keptOwner) throw new Error('the resampled luminance was read after the next resample (read it before the next prepare())');
  into.set(new Float32Array(kernels().memory.buffer, base, into.length));
  return into;
}

/** Where the kept raster is, if `x` is the raster object that stands for it (not an equal one), else null. */
export function keptAt(x: object): Ptr | null {
  return x === keptOwner ? base : null;
}

/** Counts frame() calls: data a frame left in kernel memory is intact while this is unchanged (nestedFrame()s above it give their room back). */
let epoch = 0;
export function frameEpoch(): number {
  return epoch;
}

/**
 * A kernel call inside whatever frame is open (a tone table asked for between the kernels of
 * pipeline/detail.ts): its room is allocated above the frame's and given back after `use`, so the
 * open frame's pointers keep their contents (its views may detach if the memory grows).
 */
export function nestedFrame<T>(use: (f: Frame) => T): T {
  const f = openNested();
  try {
    return use(f);
  } finally {
    closeNested();
  }
}

/** Where each open nested frame began: closeNested() gives the room back to the latest. */
const nestedMarks: number[] = [];

/**
 * nestedFrame() without a callback, for calls made many times a render (the Director's
 * candidates): openNested(), then closeNested() in a `finally`. A callback written in place is a
 * new closure on every call, and V8 keeps a closure's optimised code only while a closure of it
 * lives, so after each full GC the next one ran unoptimised and was compiled again (about 0.6 ms
 * of compiler thread a server job for the Director's alone).
 */
export function openNested(): Frame {
  kernels();
  nestedMarks.push(top);
  // Before any frame(), top is 0: below base lies the module's static data, then the kept raster.
  if (top < base + keptBytes) top = base + keptBytes;
  return frameApi;
}

/** Closes the latest openNested(). */
export function closeNested(): void {
  top = nestedMarks.pop()!;
}
