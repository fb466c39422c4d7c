/**
 * `v2a decode <file | ->`: json-compact back to a picture. Each cell becomes a block of its colour
 * (`compactToImage`), written as PNG. NDJSON input (one json-compact object per line, as
 * `v2a render --animate` writes) gives one PNG per line: `-o out.png` -> out-0001.png, ...
 */
import { extname } from 'node:path';
import type { Command } from 'commander';
import { CELL_SIZE_RANGE, CompactDecodeError, compactToImage, decodeCompact, type DecodedCompact } from '../core/format/compact.js';
import { V2aError } from '../core/errors.js';
import { importModule } from './import-module.js';
import { aboutFile, integerFlag, once, outputFile, readInput, readLimits, stdoutIsTty, usageError, writeFile, writeStdout } from './terminal.js';

const DEFAULT_CELL_WIDTH = 8;
const DEFAULT_CELL_HEIGHT = 16;

function parseCellSize(raw: string | undefined, flag: string, fallback: number): number {
  return raw === undefined ? fallback : integerFlag(flag, raw, CELL_SIZE_RANGE.min, CELL_SIZE_RANGE.max);
}

/**
 * The documents of the input: one json-compact document (compact or pretty-printed), or NDJSON
 * (several lines, each a JSON value). Throws CompactDecodeError (exit 3), naming the line.
 */
export function parseDocuments(text: string): DecodedCompact[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // Blank lines are skipped, and errors name the line of the file (not the document's number).
  const lines = body.split('\n').map((text, i) => ({ text: text.trim(), n: i + 1 })).filter((l) => l.text !== '');
  if (lines.length === 0) throw new CompactDecodeError('the input is empty');
  let ndjson = false;
  if (lines.length > 1) {
    try {
      JSON.parse(lines[0]!.text);
      ndjson = true;
    } catch {
      ndjson = false;
    }
  }
  if (!ndjson) {
    try {
      return [decodeCompact(body)];
    } catch (err) {
      // Another file altogether (text art, the json format, a picture): say what decode reads.
      if (err instanceof CompactDecodeError && err.otherFile) {
        throw new CompactDecodeError(`${err.reason}; decode reads what v2a render --format json-compact writes`, true);
      }
      throw err;
    }
  }
  return lines.map(({ text, n }) => {
    try {
      return decodeCompact(text);
    } catch (err) {
      if (err instanceof CompactDecodeError) throw new CompactDecodeError(`line ${n}: ${err.reason}`, err.otherFile);
      throw err;
    }
  });
}

/** The file of document `index` (0-based) of `count`: `out.png`, 2 -> `out-0003.png` (at least 4 digits). */
export function numberedPath(path: string, index: number, count: number): string {
  const ext = extname(path);
  const stem = ext ? path.slice(0, -ext.length) : path;
  const digits = Math.max(4, String(count).length);
  return `${stem}-${String(index + 1).padStart(digits, '0')}${ext || '.png'}`;
}

interface DecodeOpts {
  output?: string;
  cellWidth?: string;
  cellHeight?: string;
}

async function decodeAction(file: string, cmd: Command): Promise<void> {
  const opts = cmd.opts<DecodeOpts>();
  const output = outputFile(opts.output, file);
  // decode writes PNG only: y.txt would hold PNG bytes (render refuses a format its extension contradicts).
  const ext = extname(output ?? '');
  if (ext !== '' && ext.toLowerCase() !== '.png') throw usageError(`decode writes PNG: name the output file *.png, not *${ext}`);
  const cellWidth = parseCellSize(opts.cellWidth, '--cell-width', DEFAULT_CELL_WIDTH);
  const cellHeight = parseCellSize(opts.cellHeight, '--cell-height', DEFAULT_CELL_HEIGHT);
  if (output === undefined && stdoutIsTty()) {
    throw usageError('refusing to write PNG data to a terminal: give -o <file.png> or redirect standard output');
  }
  const { maxPixels } = readLimits();
  const sharpModule = importModule<typeof import('sharp')>('sharp');
  sharpModule.catch(() => undefined);
  const input = await readInput(file);
  let docs: DecodedCompact[];
  try {
    docs = parseDocuments(input.toString('utf8'));
    if (docs.length > 1 && output === undefined) {
      throw usageError(`the input has ${docs.length} json-compact documents (NDJSON): give -o <name.png> to write numbered files`);
    }
    // The picture is as large as the flags make it: bounded as a decoded image is (400 x 800 cells
    // of 256 x 256 px were an internal error, 64 x 64 a 25600 x 9600 px PNG of a gigabyte in memory).
    for (const doc of docs) {
      const width = doc.columns * cellWidth, height = doc.rows * cellHeight;
      if (width * height > maxPixels) {
        // The input's size as much as the flags': exit 3, as for a decoded image over the limit.
        throw new V2aError('image-too-large', `the PNG of ${doc.columns} x ${doc.rows} cells of ${cellWidth} x ${cellHeight} px would be ${width} x ${height} px, over the limit of ${maxPixels.toLocaleString('en-US')} pixels (V2A_MAX_IMAGE_PIXELS): give a smaller --cell-width or --cell-height, or raise the limit`);
      }
    }
  } catch (err) {
    throw aboutFile(file, err);
  }
  const { default: sharp } = await sharpModule;
  for (let i = 0; i < docs.length; i++) {
    const image = compactToImage(docs[i]!, { cellWidth, cellHeight });
    const png = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 4 } })
      .removeAlpha()
      .png()
      .toBuffer()
      .catch((err: unknown) => {
        throw new V2aError('invalid-compact', `cannot encode the PNG: ${err instanceof Error ? err.message : String(err)}`);
      });
    if (output === undefined) await writeStdout(png);
    else writeFile(docs.length > 1 ? numberedPath(output, i, docs.length) : output, png);
  }
}

export function registerDecode(program: Command): void {
  program
    .command('decode')
    .description('Turn json-compact output (or NDJSON of it, from render --animate) back into PNG: each cell a block of its colour.')
    .argument('<file>', 'json-compact document or NDJSON file, or - to read standard input')
    .option('-o, --output <file>', 'PNG file to write (-: standard output; a file is required when that is a terminal); for NDJSON, numbered files: out.png -> out-0001.png, out-0002.png, ...', once('-o/--output'))
    .option('--cell-width <px>', `pixels per cell horizontally (default ${DEFAULT_CELL_WIDTH})`, once('--cell-width'))
    .option('--cell-height <px>', `pixels per cell vertically (default ${DEFAULT_CELL_HEIGHT}; json-compact does not record the cell aspect: for art made with --cell-aspect A, give the cell width / A, e.g. 32 for 0.25)`, once('--cell-height'))
    .addHelpText('after', `
Invalid input exits with status 3 and the decoder's message.

Examples:
  v2a render photo.jpg --format json-compact | v2a decode - -o preview.png
  v2a render anim.gif --animate > frames.ndjson && v2a decode frames.ndjson -o frame.png
`)
    .action((file: string, _opts: unknown, command: Command) => decodeAction(file, command));
}
