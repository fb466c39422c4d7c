/**
 * Rasterize glyphs of the reference font (DejaVu Sans Mono, from the `dejavu-fonts-ttf` npm
 * package) exactly as a terminal draws them: one monospace cell per glyph, `advance x line height`
 * of the font, every glyph at its true pen position and on the same baseline.
 *
 * Node-only (sharp, fs). Used by `scripts/measure-glyphs.ts` (glyph shapes for the core) and by the
 * benchmarks (rasterizing whole text outputs with `rasterizeText`).
 *
 * How it works, and what sharp/Pango does that this module has to handle:
 * - sharp's `text` input is Pango markup rendered by libvips with Pango/HarfBuzz/cairo/FreeType.
 *   libvips crops the result to the *ink* rectangle of the layout (a string of spaces is even an
 *   error, "no text to render"), so a glyph's position inside its cell is lost in a one-glyph render.
 *   We therefore render a whole grid of glyphs in one layout, give the glyph area a Pango
 *   `background` (which Pango paints over the exact *logical* extents: pen advance x line height),
 *   and put a full block in the top-left and bottom-right corners outside it, so the ink crop
 *   always contains the whole background. The background rectangle found in the image gives the
 *   exact pixel grid of the cells; every glyph is separated from the next by a blank cell so
 *   overhanging ink (the block elements overhang their cell by ~0.2 px) never bleeds into another
 *   glyph's cell. Glyphs are drawn red on blue, so inside the background the red channel is the
 *   ink coverage (cairo composites `R = a, B = 255 - a`; checked for every pixel).
 * - DejaVu Sans Mono has no Braille patterns (U+2800..U+28FF). A terminal using it falls back (via
 *   fontconfig) to DejaVu Sans, whose Braille glyphs are 1500 units wide instead of the 1233 of a
 *   mono cell. We do the same: glyphs missing from the mono font are drawn from DejaVu Sans of the
 *   same npm package, same size and baseline (both fonts have ascender 1901 / descender -483), and
 *   centred in the cell like VTE (GNOME Terminal) does: pen at `trunc((cellWidth - advance) / 2)`
 *   px, ink outside the cell clipped.
 * - Font selection goes through fontconfig. The system may have its own, different build of
 *   "DejaVu Sans Mono" (Debian's file differs from the npm one) which fontconfig would prefer on a
 *   tie. So we load byte-patched copies of the npm fonts whose family names are renamed
 *   (`V2AReferenceMono`, `V2AFallback`: same-length replacement inside the `name` table; outlines
 *   untouched) and name them explicitly in the markup.
 * - Rasterization settings also come from fontconfig, and system configs differ (Debian: hintslight,
 *   no hinting for small DejaVu, ...). On import this module points `FONTCONFIG_FILE` at a private
 *   config: no system fonts, only the two reference fonts (the mono one also aliased as `monospace`
 *   and `DejaVu Sans Mono`), grayscale antialiasing, no hinting. fontconfig reads it at its first use,
 *   so import this module before anything renders text in the process (ESM imports run first, so:
 *   import it at the top of the script); the first rasterization verifies the config is in effect
 *   and throws otherwise. Metrics stay hinted by cairo (integer advance and integer line height, as
 *   in a terminal) and Pango rounds glyph positions to whole pixels.
 * - `dpi: 72` makes 1 pt = 1 px. The font size for a requested cell height is found by a short
 *   binary search over probe renders (Pango rounds ascent and descent up separately, so the glyphs
 *   are up to ~1 px smaller than `cellHeight * unitsPerEm / (ascender - descender)`).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import sharp from 'sharp';

const require = createRequire(import.meta.url);

interface FontSpec {
  readonly fileName: string;
  readonly originalFamily: string;
  /** Same length as the original family name. */
  readonly privateFamily: string;
  /** [original, replacement] strings (same length) patched in the `name` table. */
  readonly patches: ReadonlyArray<readonly [string, string]>;
}
const MONO: FontSpec = {
  fileName: 'DejaVuSansMono.ttf', originalFamily: 'DejaVu Sans Mono', privateFamily: 'V2AReferenceMono',
  patches: [['DejaVu Sans Mono', 'V2AReferenceMono'], ['DejaVuSansMono', 'V2ARefSansMono']],
};
const FALLBACK: FontSpec = {
  fileName: 'DejaVuSans.ttf', originalFamily: 'DejaVu Sans', privateFamily: 'V2AFallback',
  patches: [['DejaVu Sans', 'V2AFallback'], ['DejaVuSans', 'V2AFallbck']],
};
/** Family aliased to the mono font only by the private config: detects that the config is active. */
const PROBE_FAMILY = 'V2AConfigProbe';

/** Metrics and names read from the reference font file's tables. */
export interface ReferenceFont {
  /** Path of the original npm font file. */
  readonly file: string;
  /** npm package and version the file comes from, e.g. `dejavu-fonts-ttf@2.37.3`. */
  readonly packageId: string;
  /** Family name in the font (`name` table, ID 1). */
  readonly family: string;
  /** Version string in the font (`name` table, ID 5). */
  readonly version: string;
  readonly unitsPerEm: number;
  /** hhea ascender / descender (descender negative) / line gap, font units. */
  readonly ascender: number;
  readonly descender: number;
  readonly lineGap: number;
  /** Advance width of `M` in font units: the cell width of the monospace font. */
  readonly advance: number;
  /** Design cell aspect of a monospace font: advance / (ascender - descender + lineGap). */
  readonly cellAspect: number;
  /** True when the font maps the code point to a glyph. */
  hasGlyph(codePoint: number): boolean;
  /** Advance width in font units of the glyph of a code point, or undefined when unmapped. */
  advanceOf(codePoint: number): number | undefined;
}

interface TableRecord { offset: number; length: number }

function tableDirectory(buf: Buffer): Map<string, TableRecord> {
  const numTables = buf.readUInt16BE(4);
  const tables = new Map<string, TableRecord>();
  for (let i = 0; i < numTables; i++) {
    const rec = 12 + i * 16;
    tables.set(buf.toString('latin1', rec, rec + 4), { offset: buf.readUInt32BE(rec + 8), length: buf.readUInt32BE(rec + 12) });
  }
  return tables;
}

function table(tables: Map<string, TableRecord>, tag: string): TableRecord {
  const t = tables.get(tag);
  if (!t) throw new Error(`reference font: no '${tag}' table`);
  return t;
}

/** Name record strings with the given name ID (Windows UTF-16BE first, then Mac Roman). */
function readName(buf: Buffer, name: TableRecord, nameId: number): string | undefined {
  const count = buf.readUInt16BE(name.offset + 2);
  const storage = name.offset + buf.readUInt16BE(name.offset + 4);
  let mac: string | undefined;
  for (let i = 0; i < count; i++) {
    const r = name.offset + 6 + i * 12;
    if (buf.readUInt16BE(r + 6) !== nameId) continue;
    const platform = buf.readUInt16BE(r);
    const start = storage + buf.readUInt16BE(r + 10);
    const bytes = buf.subarray(start, start + buf.readUInt16BE(r + 8));
    if (platform === 3 || platform === 0) return Buffer.from(bytes).swap16().toString('utf16le');
    if (platform === 1) mac ??= bytes.toString('latin1');
  }
  return mac;
}

/** Code point -> glyph id from the best Unicode cmap subtable (format 12 or 4). */
function readCmap(buf: Buffer, cmap: TableRecord): (cp: number) => number {
  const n = buf.readUInt16BE(cmap.offset + 2);
  let f4 = -1;
  let f12 = -1;
  for (let i = 0; i < n; i++) {
    const r = cmap.offset + 4 + i * 8;
    const platform = buf.readUInt16BE(r);
    const encoding = buf.readUInt16BE(r + 2);
    const sub = cmap.offset + buf.readUInt32BE(r + 4);
    const format = buf.readUInt16BE(sub);
    const unicode = platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10));
    if (!unicode) continue;
    if (format === 12) f12 = sub;
    else if (format === 4 && f4 < 0) f4 = sub;
  }
  if (f12 >= 0) {
    const groups = buf.readUInt32BE(f12 + 12);
    return (cp) => {
      let lo = 0;
      let hi = groups - 1;
      while (lo <= hi) { // groups are sorted by start code
        const g = (lo + hi) >> 1;
        const r = f12 + 16 + g * 12;
        if (cp < buf.readUInt32BE(r)) hi = g - 1;
        else if (cp > buf.readUInt32BE(r + 4)) lo = g + 1;
        else return buf.readUInt32BE(r + 8) + cp - buf.readUInt32BE(r);
      }
      return 0;
    };
  }
  if (f4 < 0) throw new Error('reference font: no Unicode cmap');
  const segX2 = buf.readUInt16BE(f4 + 6);
  const ends = f4 + 14;
  const starts = ends + segX2 + 2;
  const deltas = starts + segX2;
  const rangeOffsets = deltas + segX2;
  return (cp) => {
    if (cp > 0xffff) return 0;
    for (let s = 0; s < segX2; s += 2) {
      if (cp > buf.readUInt16BE(ends + s)) continue;
      const start = buf.readUInt16BE(starts + s);
      if (cp < start) return 0;
      const delta = buf.readInt16BE(deltas + s);
      const ro = buf.readUInt16BE(rangeOffsets + s);
      if (ro === 0) return (cp + delta) & 0xffff;
      const gid = buf.readUInt16BE(rangeOffsets + s + ro + (cp - start) * 2);
      return gid === 0 ? 0 : (gid + delta) & 0xffff;
    }
    return 0;
  };
}

function parseFont(file: string, packageId: string, buf: Buffer): ReferenceFont {
  const tables = tableDirectory(buf);
  const head = table(tables, 'head');
  const hhea = table(tables, 'hhea');
  const hmtx = table(tables, 'hmtx');
  const name = table(tables, 'name');
  const glyphOf = readCmap(buf, table(tables, 'cmap'));
  const unitsPerEm = buf.readUInt16BE(head.offset + 18);
  const ascender = buf.readInt16BE(hhea.offset + 4);
  const descender = buf.readInt16BE(hhea.offset + 6);
  const lineGap = buf.readInt16BE(hhea.offset + 8);
  const numberOfHMetrics = buf.readUInt16BE(hhea.offset + 34);
  const advanceOfGlyph = (gid: number) => buf.readUInt16BE(hmtx.offset + Math.min(gid, numberOfHMetrics - 1) * 4);
  const advance = advanceOfGlyph(glyphOf(0x4d));
  return {
    file, packageId,
    family: readName(buf, name, 1) ?? 'unknown',
    version: readName(buf, name, 5) ?? 'unknown',
    unitsPerEm, ascender, descender, lineGap, advance,
    cellAspect: advance / (ascender - descender + lineGap),
    hasGlyph: (cp) => glyphOf(cp) !== 0,
    advanceOf: (cp) => { const g = glyphOf(cp); return g === 0 ? undefined : advanceOfGlyph(g); },
  };
}

/** Escapes text for Pango markup and XML. */
function escapeMarkup(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

interface LoadedFont { readonly info: ReferenceFont; readonly spec: FontSpec; readonly patchedFile: string }
interface FontEnvironment { readonly mono: LoadedFont; readonly fallback: LoadedFont; readonly configFile: string }

/** The font with its names patched to the private, same-length names. */
function patchNames(buf: Buffer, spec: FontSpec): Buffer {
  const out = Buffer.from(buf);
  const name = table(tableDirectory(out), 'name');
  const region = out.subarray(name.offset, name.offset + name.length);
  let replaced = 0;
  for (const [from, to] of spec.patches) {
    if (from.length !== to.length) throw new Error('font name patch must keep the length');
    for (const enc of ['latin1', 'utf16be'] as const) {
      const f = enc === 'latin1' ? Buffer.from(from, 'latin1') : Buffer.from(from, 'utf16le').swap16();
      const t = enc === 'latin1' ? Buffer.from(to, 'latin1') : Buffer.from(to, 'utf16le').swap16();
      for (let i = region.indexOf(f); i >= 0; i = region.indexOf(f, i + f.length)) {
        t.copy(region, i);
        replaced++;
      }
    }
  }
  if (replaced === 0) throw new Error(`reference font: '${spec.originalFamily}' not found in the name table`);
  return out;
}

/** Writes the patched fonts and the private fontconfig config (atomically), sets FONTCONFIG_FILE. */
function setUpFontEnvironment(): FontEnvironment {
  const pkgJson = require.resolve('dejavu-fonts-ttf/package.json');
  const pkg = JSON.parse(readFileSync(pkgJson, 'utf8')) as { name: string; version: string };
  const packageId = `${pkg.name}@${pkg.version}`;
  const sources = [MONO, FALLBACK].map((spec) => {
    const file = resolve(dirname(pkgJson), 'ttf', spec.fileName);
    return { spec, file, bytes: readFileSync(file) };
  });
  const hash = createHash('sha256');
  for (const s of sources) hash.update(s.bytes);
  let user = 'user';
  try { user = userInfo().username.replace(/[^\w.-]/g, '_'); } catch { /* no passwd entry */ }
  const dir = join(tmpdir(), `v2a-glyph-raster-${user}`, hash.digest('hex').slice(0, 16));
  const fontDir = join(dir, 'fonts');
  mkdirSync(fontDir, { recursive: true });
  const writeAtomic = (path: string, data: string | Buffer) => {
    if (existsSync(path) && Buffer.compare(readFileSync(path), Buffer.from(data)) === 0) return;
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  };
  const [mono, fallback] = sources.map(({ spec, file, bytes }): LoadedFont => {
    const patchedFile = join(fontDir, `${spec.privateFamily}.ttf`);
    writeAtomic(patchedFile, patchNames(bytes, spec));
    return { info: parseFont(file, packageId, bytes), spec, patchedFile };
  }) as [LoadedFont, LoadedFont];
  const edit = (n: string, v: string) => `<edit name="${n}" mode="assign">${v}</edit>`;
  const settings = [
    edit('antialias', '<bool>true</bool>'), edit('hinting', '<bool>false</bool>'),
    edit('hintstyle', '<const>hintnone</const>'), edit('autohint', '<bool>false</bool>'),
    edit('rgba', '<const>none</const>'), edit('lcdfilter', '<const>lcdnone</const>'),
    edit('embeddedbitmap', '<bool>false</bool>'),
  ].join('');
  const alias = (f: string, ...prefer: string[]) =>
    `  <alias binding="same"><family>${f}</family><prefer>${prefer.map((p) => `<family>${p}</family>`).join('')}</prefer></alias>`;
  const configFile = join(dir, 'fonts.conf');
  writeAtomic(configFile, [
    '<?xml version="1.0"?>',
    '<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">',
    '<!-- Private fontconfig of scripts/lib/glyph-raster.ts: only the reference fonts, no hinting. -->',
    '<fontconfig>',
    `  <dir>${escapeMarkup(fontDir)}</dir>`,
    `  <cachedir>${escapeMarkup(join(dir, 'cache'))}</cachedir>`,
    alias('monospace', MONO.privateFamily, FALLBACK.privateFamily),
    alias(MONO.originalFamily, MONO.privateFamily, FALLBACK.privateFamily),
    alias('sans-serif', FALLBACK.privateFamily),
    alias(FALLBACK.originalFamily, FALLBACK.privateFamily),
    alias(PROBE_FAMILY, MONO.privateFamily),
    `  <match target="pattern">${settings}</match>`,
    `  <match target="font">${settings}</match>`,
    '</fontconfig>', '',
  ].join('\n'));
  process.env.FONTCONFIG_FILE = configFile;
  return { mono, fallback, configFile };
}

// At import, before anything in the process can have initialised fontconfig.
const ENV = setUpFontEnvironment();

/** Metrics and identity of the reference font, DejaVu Sans Mono (parsed from the npm file). */
export const referenceFont: ReferenceFont = ENV.mono.info;
/** The fallback font for glyphs DejaVu Sans Mono lacks (Braille): DejaVu Sans. */
export const fallbackFont: ReferenceFont = ENV.fallback.info;

/** One monospace cell per glyph, 8-bit ink coverage (0 = blank, 255 = full ink), row-major. */
export interface GlyphRaster {
  readonly cellWidth: number;
  readonly cellHeight: number;
  /** Font size in px (= pt at 72 dpi) that yields this cell height. */
  readonly fontSizePx: number;
  /** `cellWidth * cellHeight` bytes per glyph; the key is the glyph (one code point). */
  readonly bitmaps: Map<string, Uint8Array>;
  /** The glyphs that were drawn from the fallback font (centred in the cell). */
  readonly fallbackGlyphs: ReadonlySet<string>;
}

/** Glyph slots per row and per render: at most GRID_COLS * GRID_ROWS glyphs per sharp call. */
const GRID_COLS = 10;
const GRID_ROWS = 10;

interface LayoutRender {
  readonly data: Buffer;
  readonly width: number;
  /** Top-left pixel of the background (the inner cell grid). */
  readonly x0: number;
  readonly y0: number;
  readonly cellWidth: number;
  readonly cellHeight: number;
}

/**
 * Renders `innerLines` (markup, each exactly `innerW` cells wide) on a red-on-blue background with
 * two blank cells around it and full-block sentinels in the outer corners (`totalW` mono cells apart:
 * the right one must lie beyond the background), and measures the cell grid from the background
 * rectangle. The layout font is always the mono font. Throws unless the background is a whole grid of cells in which
 * every pixel is background or ink (R + B = 255).
 */
async function renderLayout(innerLines: readonly string[], innerW: number, sizePx: number, totalW = innerW + 4): Promise<LayoutRender> {
  const innerH = innerLines.length;
  const blank = ' '.repeat(totalW);
  const sentinel = (s: string) => `<span foreground="#00ff00">${s}</span>`;
  const lines = [sentinel('█' + ' '.repeat(totalW - 1)), blank];
  for (const inner of innerLines) lines.push(`  <span foreground="#ff0000" background="#0000ff">${inner}</span>  `);
  lines.push(blank, sentinel(' '.repeat(totalW - 1) + '█'));
  const { data, info } = await sharp({
    text: { text: lines.join('\n'), font: `${MONO.privateFamily}, ${sizePx}`, fontfile: ENV.mono.patchedFile, dpi: 72, rgba: true },
  }).raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 4) throw new Error(`glyph raster: expected RGBA, got ${info.channels} channels`);
  const { width, height } = info;
  // The background: opaque, no sentinel green, red + blue = 255 (ink over background).
  const isBg = (i: number) => data[i + 3] === 255 && data[i + 1] === 0 && data[i]! + data[i + 2]! >= 254;
  let x0 = width, y0 = height, x1 = -1, y1 = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (!isBg((y * width + x) * 4)) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  const bw = x1 - x0 + 1;
  const bh = y1 - y0 + 1;
  if (x1 < 0 || bw % innerW !== 0 || bh % innerH !== 0) {
    throw new Error(`glyph raster: background ${bw}x${bh} px is not a whole grid of ${innerW}x${innerH} cells (size ${sizePx})`);
  }
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const i = (y * width + x) * 4;
      if (data[i + 3] !== 255 || data[i + 1] !== 0 || Math.abs(data[i]! + data[i + 2]! - 255) > 1) {
        throw new Error(`glyph raster: unexpected pixel ${[...data.subarray(i, i + 4)]} at (${x - x0}, ${y - y0}) of the glyph grid (size ${sizePx})`);
      }
    }
  }
  return { data, width, x0, y0, cellWidth: bw / innerW, cellHeight: bh / innerH };
}

interface Calibration { readonly sizePx: number; readonly cellWidth: number; readonly cellHeight: number }
const calibrations = new Map<number, Promise<Calibration>>();
let configChecked: Promise<void> | undefined;

/** Throws unless the private fontconfig is in effect (an alias only it defines resolves). */
function checkFontConfig(): Promise<void> {
  configChecked ??= (async () => {
    const render = (family: string) => sharp({ text: { text: 'M@g', font: `${family}, 24`, fontfile: ENV.mono.patchedFile, dpi: 72 } }).raw().toBuffer();
    const [probe, mono] = await Promise.all([render(PROBE_FAMILY), render(MONO.privateFamily)]);
    if (!probe.equals(mono)) {
      throw new Error('glyph raster: the private fontconfig is not in effect (fontconfig was initialised before ' +
        'scripts/lib/glyph-raster.ts was imported, or FONTCONFIG_FILE was overridden); import it first');
    }
  })();
  return configChecked;
}

/**
 * The largest font size (in 1/1024 px, Pango's unit) whose line height is exactly `cellHeightPx`.
 * Line height is a non-decreasing step function of the size, so a binary search finds it.
 */
function calibrate(cellHeightPx: number): Promise<Calibration> {
  let c = calibrations.get(cellHeightPx);
  if (!c) {
    c = (async () => {
      await checkFontConfig();
      const f = referenceFont;
      const design = (cellHeightPx * f.unitsPerEm) / (f.ascender - f.descender + f.lineGap);
      const probe = (k: number) => renderLayout(['█'], 1, k / 1024);
      let lo = Math.floor(design * 0.8 * 1024); // h(lo) <= target
      let hi = Math.ceil(design * 1.2 * 1024) + 1024; // h(hi) > target
      if ((await probe(lo)).cellHeight > cellHeightPx || (await probe(hi)).cellHeight <= cellHeightPx) {
        throw new Error(`glyph raster: cannot bracket the font size for a ${cellHeightPx} px cell`);
      }
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if ((await probe(mid)).cellHeight <= cellHeightPx) lo = mid;
        else hi = mid;
      }
      const r = await probe(lo);
      if (r.cellHeight !== cellHeightPx) {
        throw new Error(`glyph raster: no font size gives a ${cellHeightPx} px line height (nearest ${r.cellHeight} px)`);
      }
      return { sizePx: lo / 1024, cellWidth: r.cellWidth, cellHeight: r.cellHeight };
    })();
    calibrations.set(cellHeightPx, c);
    c.catch(() => calibrations.delete(cellHeightPx));
  }
  return c;
}

/** Pixel advance of fallback glyphs with a given advance in font units, per cell height. */
const fallbackAdvances = new Map<string, Promise<number>>();

function fallbackAdvancePx(ch: string, cal: Calibration): Promise<number> {
  const key = `${cal.cellHeight}:${fallbackFont.advanceOf(ch.codePointAt(0)!)}`;
  let p = fallbackAdvances.get(key);
  if (!p) {
    p = (async () => {
      // Three in a row (no ink needed: the background gives the advance), room for 3x wider glyphs.
      const r = await renderLayout([`<span font_family="${FALLBACK.privateFamily}">${escapeMarkup(ch.repeat(3))}</span>`], 3, cal.sizePx, 13);
      if (r.cellHeight !== cal.cellHeight) {
        throw new Error(`glyph raster: the fallback font changes the line height (${r.cellHeight} px, not ${cal.cellHeight})`);
      }
      return r.cellWidth;
    })();
    fallbackAdvances.set(key, p);
  }
  return p;
}

/** A glyph to draw in one grid render. `dx`: pen offset in the cell (fallback glyphs are centred). */
interface Slot { readonly ch: string; readonly markup: string; readonly spacer: string; readonly dx: number }

/**
 * Renders up to GRID_COLS * GRID_ROWS slots in one layout: slot (r, c) at inner cell (2r+1, 2c+1),
 * blank cells around every slot. Returns each slot's cell bitmap.
 */
async function renderSlots(slots: readonly Slot[], cal: Calibration): Promise<Uint8Array[]> {
  const cols = GRID_COLS;
  const rows = Math.ceil(slots.length / cols);
  const innerW = 2 * cols + 1;
  const lines: string[] = [];
  for (let r = 0; r < rows; r++) {
    lines.push(' '.repeat(innerW)); // blank row above each slot row
    let line = ' ';
    for (let c = 0; c < cols; c++) {
      const slot = slots[r * cols + c];
      line += slot ? slot.markup + slot.spacer : '  ';
    }
    lines.push(line);
  }
  lines.push(' '.repeat(innerW));
  const r = await renderLayout(lines, innerW, cal.sizePx);
  if (r.cellWidth !== cal.cellWidth || r.cellHeight !== cal.cellHeight) {
    throw new Error(`glyph raster: cell ${r.cellWidth}x${r.cellHeight} differs from the calibrated ${cal.cellWidth}x${cal.cellHeight}`);
  }
  const { cellWidth: w, cellHeight: h, data, width } = r;
  return slots.map((slot, s) => {
    const cx = r.x0 + (2 * (s % cols) + 1) * w - slot.dx;
    const cy = r.y0 + (2 * Math.floor(s / cols) + 1) * h;
    const bmp = new Uint8Array(w * h);
    for (let y = 0; y < h; y++) {
      const row = ((cy + y) * width + cx) * 4;
      for (let x = 0; x < w; x++) bmp[y * w + x] = data[row + x * 4]!;
    }
    return bmp;
  });
}

/** Per cell height: glyph -> bitmap, so repeated calls only render new glyphs. */
const bitmapCache = new Map<number, Map<string, Uint8Array>>();

const hexCp = (ch: string) => 'U+' + ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');

/** 'mono' or 'fallback' for a drawable glyph; throws for anything a terminal cell cannot show. */
function fontOf(ch: string): 'mono' | 'fallback' {
  if ([...ch].length !== 1) throw new Error(`glyph raster: '${ch}' is not a single code point`);
  if (/[\p{C}\p{M}\p{Zl}\p{Zp}]/u.test(ch)) throw new Error(`glyph raster: ${hexCp(ch)} is not a spacing glyph`);
  const cp = ch.codePointAt(0)!;
  const adv = referenceFont.advanceOf(cp);
  if (adv !== undefined) {
    if (adv !== referenceFont.advance) throw new Error(`glyph raster: ${hexCp(ch)} is not one cell wide`);
    return 'mono';
  }
  if (fallbackFont.hasGlyph(cp)) return 'fallback';
  throw new Error(`glyph raster: ${hexCp(ch)} is in neither ${referenceFont.family} nor ${fallbackFont.family}`);
}

/**
 * Rasterizes glyphs of the reference font, one terminal cell each.
 *
 * @param chars glyphs (single code points; duplicates are fine). Each must be a spacing glyph of
 *   DejaVu Sans Mono with the monospace advance, or a glyph of the fallback DejaVu Sans (Braille);
 *   anything else (unmapped, combining, control, wide) throws.
 * @param cellHeightPx line height in px (6..512); the font size is calibrated so that the line
 *   height is exactly this; the cell width is the font's integer (hinted) advance at that size.
 * @returns the cell size and, per glyph, `cellWidth * cellHeight` bytes of ink coverage 0..255
 *   (row-major, top row first) of exactly one cell: the glyph at its pen position and baseline, as a
 *   terminal draws it; ink outside the cell (the block elements overhang by a fraction of a pixel)
 *   is clipped. The space is all zeros.
 *
 * Cost: per cell height once a config check, a ~16-render binary search for the font size and one
 * probe per distinct fallback advance (all cached per process); then one sharp render per 100 new
 * glyphs (~60 ms at 116 px). Bitmaps are cached per cell height, so rasterizing the glyphs of many
 * text outputs costs little more than the first.
 */
export async function rasterizeGlyphs(chars: Iterable<string>, cellHeightPx: number): Promise<GlyphRaster> {
  if (!Number.isInteger(cellHeightPx) || cellHeightPx < 6 || cellHeightPx > 512) {
    throw new Error(`glyph raster: cell height must be an integer from 6 to 512 px, got ${cellHeightPx}`);
  }
  const unique = [...new Set(chars)];
  const fonts = new Map(unique.map((ch) => [ch, fontOf(ch)]));
  const cal = await calibrate(cellHeightPx);
  let cache = bitmapCache.get(cellHeightPx);
  if (!cache) bitmapCache.set(cellHeightPx, (cache = new Map()));
  const missing = unique.filter((ch) => !cache.has(ch));
  const slots = await Promise.all(missing.map(async (ch): Promise<Slot> => {
    if (fonts.get(ch) === 'mono') return { ch, markup: escapeMarkup(ch), spacer: ' ', dx: 0 };
    // The fallback glyph keeps its own advance; the blank after it is letter-spaced so that the
    // pair is two cells wide and the grid stays intact. Centring is done when slicing (dx).
    const adv = await fallbackAdvancePx(ch, cal);
    const dx = Math.trunc((cal.cellWidth - adv) / 2);
    if (Math.abs(dx) >= cal.cellWidth) throw new Error(`glyph raster: ${hexCp(ch)} is too wide for a cell`);
    return {
      ch, dx,
      markup: `<span font_family="${FALLBACK.privateFamily}">${escapeMarkup(ch)}</span>`,
      spacer: `<span letter_spacing="${(cal.cellWidth - adv) * 1024}"> </span>`,
    };
  }));
  const batch = GRID_COLS * GRID_ROWS;
  const renders: Promise<void>[] = [];
  for (let i = 0; i < slots.length; i += batch) {
    const part = slots.slice(i, i + batch);
    renders.push(renderSlots(part, cal).then((bmps) => part.forEach((s, k) => cache.set(s.ch, bmps[k]!))));
  }
  await Promise.all(renders);
  const bitmaps = new Map<string, Uint8Array>();
  for (const ch of unique) bitmaps.set(ch, cache.get(ch)!);
  const fallbackGlyphs = new Set(unique.filter((ch) => fonts.get(ch) === 'fallback'));
  return { cellWidth: cal.cellWidth, cellHeight: cal.cellHeight, fontSizePx: cal.sizePx, bitmaps, fallbackGlyphs };
}

/** A grayscale ink image: 0 = background, 255 = full ink, row-major. */
export interface InkImage {
  readonly width: number;
  readonly height: number;
  readonly cellWidth: number;
  readonly cellHeight: number;
  readonly data: Uint8Array;
}

/**
 * Rasterizes a whole text (e.g. a rendered `text` output) with the reference font, cell by cell, as
 * a terminal would: `columns * cellWidth` by `rows * cellHeight` px, where columns is the longest
 * line's code point count (shorter lines are padded with blank). A trailing newline does not add a
 * row. Throws for glyphs `rasterizeGlyphs` rejects.
 */
export async function rasterizeText(text: string | readonly string[], cellHeightPx: number): Promise<InkImage> {
  let lines = typeof text === 'string' ? text.split('\n') : [...text];
  if (typeof text === 'string' && lines.length > 1 && lines[lines.length - 1] === '') lines = lines.slice(0, -1);
  const grid = lines.map((l) => [...l]);
  const raster = await rasterizeGlyphs(grid.flat(), cellHeightPx);
  const { cellWidth: cw, cellHeight: chh } = raster;
  const columns = Math.max(0, ...grid.map((g) => g.length));
  const width = columns * cw;
  const height = grid.length * chh;
  const data = new Uint8Array(width * height);
  grid.forEach((row, r) => {
    row.forEach((ch, c) => {
      const bmp = raster.bitmaps.get(ch)!;
      for (let y = 0; y < chh; y++) data.set(bmp.subarray(y * cw, (y + 1) * cw), (r * chh + y) * width + c * cw);
    });
  });
  return { width, height, cellWidth: cw, cellHeight: chh, data };
}
