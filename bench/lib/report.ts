/** Report helpers for the benchmarks: text tables, JSON output, side-by-side PNGs. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { OUT_DIR } from './images.js';

/** A plain text table: the first row is the header; columns are right-aligned except the first. */
export function table(rows: readonly (readonly string[])[], opts: { leftAlign?: readonly number[] } = {}): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  const left = new Set([0, ...(opts.leftAlign ?? [])]);
  const fmtRow = (r: readonly string[]) => r.map((c, i) => (left.has(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  const [head, ...body] = rows;
  const out = [fmtRow(head!), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const r of body) out.push(fmtRow(r));
  return out.join('\n');
}

export const fix = (v: number | null | undefined, digits = 3): string => (v === null || v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(digits));

/** Writes `data` as pretty JSON to bench/out/<name> and returns the path. */
export function writeJson(name: string, data: unknown): string {
  const file = join(OUT_DIR, name);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
  return file;
}

export interface Panel {
  readonly label: string;
  readonly width: number;
  readonly height: number;
  /** 8-bit grey, `width * height`; null: an empty panel (tool unavailable). */
  readonly data: Uint8Array | null;
  /** Label ink (rasterized text), drawn above the panel. */
  readonly labelInk?: { width: number; height: number; data: Uint8Array };
}

/**
 * Writes panels side by side (same height expected; shorter ones are top-aligned) with a label strip
 * on top and a mid-grey gap between panels, as an 8-bit greyscale PNG.
 */
export async function sideBySide(file: string, panels: readonly Panel[]): Promise<void> {
  const gap = 8;
  const labelH = Math.max(0, ...panels.map((p) => (p.labelInk ? p.labelInk.height : 0))) + (panels.some((p) => p.labelInk) ? 4 : 0);
  const H = labelH + Math.max(...panels.map((p) => p.height));
  const W = panels.reduce((s, p) => s + p.width, 0) + gap * (panels.length - 1);
  const img = new Uint8Array(W * H).fill(96);
  let x0 = 0;
  for (const p of panels) {
    // Label strip: black ground, light label text.
    for (let y = 0; y < labelH; y++) img.fill(0, y * W + x0, y * W + x0 + p.width);
    if (p.labelInk) {
      const li = p.labelInk;
      for (let y = 0; y < li.height && y < labelH; y++) {
        for (let x = 0; x < Math.min(li.width, p.width); x++) img[(y + 2) * W + x0 + x] = li.data[y * li.width + x]!;
      }
    }
    for (let y = 0; y < p.height; y++) {
      const row = (labelH + y) * W + x0;
      if (p.data) img.set(p.data.subarray(y * p.width, (y + 1) * p.width), row);
      else img.fill(40, row, row + p.width);
    }
    x0 += p.width + gap;
  }
  mkdirSync(dirname(file), { recursive: true });
  await sharp(Buffer.from(img.buffer, img.byteOffset, img.length), { raw: { width: W, height: H, channels: 1 } }).png().toFile(file);
}
