/**
 * Settings read from the environment, shared by the faces that read them: the one integer/size
 * parser, the one boolean parser, and the settings the server and the CLI both honour (the image
 * limits), each defined once with its name, range, default and meaning. The server's own table
 * (src/server/config.ts) and the CLI's (`v2a --help`, src/cli/program.ts) include these rows; the
 * README's tables are generated from both (`npm run docs`). Light: no imports beyond this file.
 */

type Env = Readonly<Record<string, string | undefined>>;

const MIB = 1024 * 1024;

const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1, b: 1,
  k: 1000, kb: 1000, kib: 1024,
  m: 1000 ** 2, mb: 1000 ** 2, mib: 1024 ** 2,
  g: 1000 ** 3, gb: 1000 ** 3, gib: 1024 ** 3,
};

export interface IntegerRange {
  readonly min: number;
  readonly max: number;
  /** Accept a byte unit after the number: k, M, G (SI) or KiB, MiB, GiB (binary), any case. */
  readonly size?: boolean;
  /**
   * 0 means `means` (off, no bound) and any other value is at least `least` (min is then 0): a
   * few milliseconds are no setting anyone means.
   */
  readonly zero?: { readonly means: string; readonly least: number };
}

/** `an integer from 1 to 1073741824` (plus the units when `size`); `0 (no bound) or an integer from 1000 to ...`. */
export function describeRange(range: IntegerRange): string {
  const from = range.zero ? `0 (${range.zero.means}) or an integer from ${range.zero.least}` : `an integer from ${range.min}`;
  return `${from} to ${range.max}${range.size ? ' (bytes; k, M, G, KiB, MiB, GiB allowed)' : ''}`;
}

/**
 * The one integer parser of settings: digits with optional `_` separators (`16_777_216`), and for
 * sizes an optional unit (`16MiB`, `512k`). Throws an Error whose message says what is allowed.
 */
export function parseInteger(raw: string, range: IntegerRange): number {
  const m = /^(\d[\d_]{0,24})\s*([a-z]*)$/i.exec(raw.trim());
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined || (!range.size && m[2] !== '') || m[1]!.endsWith('_')) throw new Error(`must be ${describeRange(range)}`);
  const digits = Number(m[1]!.replace(/_/g, ''));
  const n = digits * unit;
  if (!Number.isSafeInteger(n) || n < range.min || n > range.max) throw new Error(`must be ${describeRange(range)}${m[2] ? unitMeaning(digits, m[2], range) : ''}`);
  if (range.zero && n > 0 && n < range.zero.least) throw new Error(`must be 0 (${range.zero.means}) or at least ${range.zero.least}`);
  return n;
}

/** `: 1M is 1,000,000 bytes (1MiB is 1,048,576)`: what a size out of range meant, and its binary spelling where that fits. */
function unitMeaning(digits: number, unit: string, range: IntegerRange): string {
  const bytes = (n: number) => n.toLocaleString('en-US');
  const said = `: ${digits}${unit} is ${bytes(digits * SIZE_UNITS[unit.toLowerCase()]!)} bytes`;
  const prefix = unit[0]!.toLowerCase();
  const binary = /^[kmg]b?$/i.test(unit) ? digits * SIZE_UNITS[`${prefix}ib`]! : undefined;
  return binary !== undefined && binary >= range.min && binary <= range.max ? `${said} (${digits}${prefix.toUpperCase()}iB is ${bytes(binary)})` : said;
}

/** The one boolean parser of settings: 1/0, true/false, yes/no, on/off. */
export function parseBoolean(raw: string): boolean {
  const t = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(t)) return true;
  if (['0', 'false', 'no', 'off'].includes(t)) return false;
  throw new Error('must be true or false (also 1/0, yes/no, on/off)');
}

/** An integer setting: name, range, default and meaning, for every face that reads it. */
export interface IntegerSetting extends IntegerRange {
  readonly name: string;
  readonly default: number;
  readonly meaning: string;
}

/**
 * V2A_MAX_IMAGE_BYTES when unset for the CLI's render and play: a user's own files, which no
 * client sends to a server. Camera JPEGs of 40-60 MP and PNG screenshots pass 16 MiB (a 7000 x
 * 7000 JPEG of 37 MB was refused); the pixel and decoder-memory limits still bound the decode.
 */
export const CLI_MAX_IMAGE_BYTES = 256 * MIB;

/**
 * V2A_MAX_IMAGE_PIXELS when unset for the CLI's render and play, as CLI_MAX_IMAGE_BYTES: a 60 MP
 * camera JPEG (9504 x 6336) was refused. Pixels are not what costs memory: a JPEG shrinks on load
 * by up to 8 (a baseline 150 MP JPEG rendered at 120 columns in 0.9 s and 122 MB RSS), and what
 * cannot shrink (PNG, TIFF, progressive JPEG) is bounded by V2A_MAX_DECODED_BYTES.
 */
export const CLI_MAX_IMAGE_PIXELS = 200_000_000;

/**
 * V2A_MAX_DECODED_BYTES when unset for the CLI's render and play, as CLI_MAX_IMAGE_BYTES: at the
 * server's 256 MiB an 8-bit RGB PNG stopped at about 89 MP, well short of CLI_MAX_IMAGE_PIXELS
 * (a 144 MP one needs 412 MiB); 1 GiB lets a 200 MP RGBA image through, on the user's own machine.
 */
export const CLI_MAX_DECODED_BYTES = 1024 * MIB;

// The server's defaults, named so that each setting's meaning can state its own.
const IMAGE_BYTES = 16 * MIB;
const IMAGE_PIXELS = 50_000_000;
const DECODED_BYTES = 256 * MIB;

export const MAX_IMAGE_BYTES: IntegerSetting = {
  name: 'V2A_MAX_IMAGE_BYTES', min: 1, max: 1024 * MIB, size: true, default: IMAGE_BYTES,
  meaning: `Largest accepted image in bytes (${IMAGE_BYTES / MIB} MiB; for the CLI's render and play, ${CLI_MAX_IMAGE_BYTES / MIB} MiB), for uploads, imageBase64 (decoded), imageUrl bodies and CLI input (not a file ffmpeg reads, a video or a BMP, ICO or PNM still, which it streams from disk); larger is 413 (CLI: exit 3).`,
};

export const MAX_IMAGE_PIXELS: IntegerSetting = {
  name: 'V2A_MAX_IMAGE_PIXELS', min: 1, max: 1_000_000_000, default: IMAGE_PIXELS,
  meaning: `Largest accepted image in pixels (width x height, ${IMAGE_PIXELS / 1e6} megapixels; for the CLI's render and play, ${CLI_MAX_IMAGE_PIXELS / 1e6} megapixels); larger is 413 (CLI: exit 3). A png output is held to it too: a larger one is 400 naming format (CLI: exit 2).`,
};

export const MAX_DECODED_BYTES: IntegerSetting = {
  name: 'V2A_MAX_DECODED_BYTES', min: 1024 * 1024, max: 64 * 1024 * MIB, size: true, default: DECODED_BYTES,
  meaning: `Largest decoder memory one image may need (${DECODED_BYTES / MIB} MiB; for the CLI's render and play, ${CLI_MAX_DECODED_BYTES / MIB / 1024} GiB), estimated from its header as width x height x channels x bytes per sample (at the reduced size where the format can shrink on load); larger is 413 (CLI: exit 3).`,
};

export const FETCH_TIMEOUT_MS: IntegerSetting = {
  name: 'V2A_FETCH_TIMEOUT_MS', min: 100, max: 600_000, default: 10_000,
  meaning: 'Budget in milliseconds for a whole imageUrl fetch (DNS, connect, redirects, body); over it is 502.',
};

export const MCP_MAX_BATCH: IntegerSetting = {
  name: 'V2A_MCP_MAX_BATCH', min: 1, max: 1000, default: 16,
  meaning: 'Most JSON-RPC messages in one batch on /api/mcp; more is one -32600 error.',
};

/**
 * Its default: the contract's defaults must fit (json-compact of a small image at 120 columns is
 * 37,566 characters), so it is not lower. In tokens (cl100k, 120 columns of five photos) text art
 * runs 1.8-2.4 characters a token and json-compact's base64 down to 1.4: 60000 characters can be
 * 25-43k tokens, which the README says, with the lower value for clients that cap a result at 25k.
 */
export const MCP_MAX_CHARS: IntegerSetting = {
  name: 'V2A_MCP_MAX_CHARS', min: 0, max: 100_000_000, default: 60_000,
  meaning: 'Character budget of one render_ascii reply on /api/mcp and from v2a mcp (where --max-chars wins) (the art counted once, as a client shows the model the text block or structuredContent, plus the rest of structuredContent; the image block is bounded by size instead). A reply over it is an isError naming the columns and formats that fit, never a cut. 0 = no budget. (Extension.)',
};

/** Blank or absent counts as unset. */
export function isUnset(raw: string | undefined): raw is undefined {
  return raw === undefined || raw.trim() === '';
}

/** The setting's value from `env`: its default when unset; throws `NAME must be ... (got "x")`. */
export function readInteger(setting: IntegerSetting, env: Env): number {
  const raw = env[setting.name];
  if (isUnset(raw)) return setting.default;
  try {
    return parseInteger(raw, setting);
  } catch (err) {
    throw new Error(`${setting.name} ${(err as Error).message} (got ${JSON.stringify(raw)})`);
  }
}

export interface ImageLimits {
  readonly maxBytes: number;
  readonly maxPixels: number;
  readonly maxDecodedBytes: number;
}

/** V2A_MAX_IMAGE_BYTES, V2A_MAX_IMAGE_PIXELS and V2A_MAX_DECODED_BYTES, as the CLI and `v2a mcp` read them (`defaults`: the face's own defaults). */
export function readImageLimits(env: Env, defaults: { readonly maxBytes?: number; readonly maxPixels?: number; readonly maxDecodedBytes?: number } = {}): ImageLimits {
  const withDefault = (setting: IntegerSetting, value: number | undefined) => (value === undefined ? setting : { ...setting, default: value });
  return {
    maxBytes: readInteger(withDefault(MAX_IMAGE_BYTES, defaults.maxBytes), env),
    maxPixels: readInteger(withDefault(MAX_IMAGE_PIXELS, defaults.maxPixels), env),
    maxDecodedBytes: readInteger(withDefault(MAX_DECODED_BYTES, defaults.maxDecodedBytes), env),
  };
}
