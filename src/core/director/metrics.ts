import { encodeLinear } from '../pipeline/linear.js';

const BINS = 16;

function entropy16(values: Float32Array, mask: Uint8Array | null): number {
  const h = new Float64Array(BINS);
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    if (mask && !mask[i]) continue;
    let b = (values[i]! * BINS) | 0;
    b = b < 0 ? 0 : b >= BINS ? BINS - 1 : b;
    h[b]!++;
    n++;
  }
  if (n === 0) return 0;
  let e = 0;
  for (let b = 0; b < BINS; b++) if (h[b]! > 0) { const p = h[b]! / n; e -= p * Math.log2(p); }
  return e / Math.log2(BINS);
}

function quantiles(values: Float32Array, qs: readonly number[]): number[] {
  const h = new Uint32Array(1024);
  for (let i = 0; i < values.length; i++) {
    let b = (values[i]! * 1024) | 0;
    b = b < 0 ? 0 : b > 1023 ? 1023 : b;
    h[b]!++;
  }
  return qs.map((q) => {
    const want = q * values.length;
    let acc = 0;
    for (let b = 0; b < 1024; b++) { acc += h[b]!; if (acc >= want) return (b + 0.5) / 1024; }
    return 1;
  });
}

/**
 * Tone metrics of a rendering: `rendered` is each cell's displayed tone (0..1, in the source's
 * orientation), `source` its perceptual luminance. See rubrics.ts for what each one means.
 */
export function toneMetrics(rendered: Float32Array, source: Float32Array): Record<string, number> {
  const n = rendered.length;
  let sr = 0, ss = 0;
  for (let i = 0; i < n; i++) { sr += rendered[i]!; ss += source[i]!; }
  const mr = sr / n, ms = ss / n;
  let cov = 0, vr = 0, vs = 0, clipped = 0;
  const [rLo, rHi] = quantiles(rendered, [0.05, 0.95]) as [number, number];
  for (let i = 0; i < n; i++) {
    const dr = rendered[i]! - mr, ds = source[i]! - ms;
    cov += dr * ds; vr += dr * dr; vs += ds * ds;
    const r = rendered[i]!, s = source[i]!;
    if ((r <= 0.001 && s > 0.12) || (r >= 0.999 && s < 0.88)) clipped++;
  }
  const fidelity = vr > 1e-12 && vs > 1e-12 ? Math.max(0, cov / Math.sqrt(vr * vs)) : vs <= 1e-12 ? 1 : 0;
  const [q25, q75] = quantiles(source, [0.25, 0.75]) as [number, number];
  const dark = new Uint8Array(n), mid = new Uint8Array(n), light = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const s = source[i]!;
    if (s <= q25) dark[i] = 1;
    if (s >= q75) light[i] = 1;
    if (s > q25 && s < q75) mid[i] = 1;
  }
  // A detail metric saturates at 3 bits of 4: a quarter of the image rarely spans all 16 tones.
  const detail = (m: Uint8Array) => Math.min(1, entropy16(rendered, m) / 0.75);
  return {
    fidelity,
    range: Math.min(1, (rHi - rLo) / 0.8),
    levels: Math.min(1, entropy16(rendered, null) / 0.8),
    clipping: Math.max(0, 1 - (4 * clipped) / n),
    shadows: detail(dark),
    midtones: detail(mid),
    highlights: detail(light),
  };
}

/** 1 - RMSE/0.25 (sRGB 0..1) between chroma bytes and the source cells' mean colours. */
export function roundTripMetric(colors: Uint8Array, cellLinearRgb: Float32Array): number {
  let e = 0;
  for (let i = 0; i < colors.length; i++) {
    const d = colors[i]! / 255 - encodeLinear(cellLinearRgb[i]!);
    e += d * d;
  }
  const rmse = Math.sqrt(e / Math.max(1, colors.length));
  return Math.max(0, 1 - rmse / 0.25);
}
