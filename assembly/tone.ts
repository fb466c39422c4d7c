// AssemblyScript: the tone tables (pipeline/tone.ts toneLut, pipeline/colors.ts colorTransform),
// re-exported by assembly/kernels.ts. The Director builds one table per candidate, each a few
// hundred to a few thousand pows: in JavaScript they ran interpreted on a cold start (about 5 ms
// of a first render, and most of its garbage, every value a boxed double). The same f64
// operations in the same order as the TypeScript, rounded to f32 on store; Math.pow here is
// AssemblyScript's, not the engine's (test/wasm-kernels.test.ts compares whole tables against the
// TypeScript oracle, test/reference/tone.ts).

/**
 * toneValue() of tone.ts after its input is placed: levels (lo, span), contrast about mid-grey,
 * the lift, clamped, then the gamma curve (`inv` = 1 / gamma, when `curved`). Clamped ends skip
 * the pow, as the TypeScript does.
 */
@inline function curve(x: f64, lo: f64, span: f64, contrast: f64, lift: f64, inv: f64, curved: bool): f64 {
  let u = (x - lo) / span;
  u = (u - 0.5) * contrast + 0.5 + lift;
  u = u < 0 ? 0 : u > 1 ? 1 : u;
  if (curved && u != 1 && (u != 0 || !(inv > 0))) u = Math.pow(u, inv);
  return u;
}

/**
 * toneLut(): size + 1 f32 at out over inputs -0.5..1.5, entries from..to (clamped to the table)
 * computed and the others 0; `invert` stores 1 - u.
 */
export function toneTable(out: usize, size: i32, from: i32, to: i32, lo: f64, span: f64, contrast: f64, lift: f64, inv: f64, curved: bool, invert: bool): void {
  memory.fill(out, 0, <usize>(size + 1) << 2);
  const a = from > 0 ? from : 0, b = to < size ? to : size;
  const n = <f64>size;
  for (let i = a; i <= b; i++) {
    const u = curve(-0.5 + <f64>(2 * i) / n, lo, span, contrast, lift, inv, curved);
    store<f32>(out + (<usize>i << 2), <f32>(invert ? 1 - u : u));
  }
}

/** colorTransform()'s table: size + 1 f32 at out, the curve of i / size, then back to linear light (srgbToLinear). */
export function colorToneTable(out: usize, size: i32, lo: f64, span: f64, contrast: f64, lift: f64, inv: f64, curved: bool): void {
  const n = <f64>size;
  for (let i = 0; i <= size; i++) {
    const u = curve(<f64>i / n, lo, span, contrast, lift, inv, curved);
    store<f32>(out + (<usize>i << 2), <f32>(u <= 0.04045 ? u / 12.92 : Math.pow((u + 0.055) / 1.055, 2.4)));
  }
}
