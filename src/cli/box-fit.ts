/**
 * An image too tall for its box even at the fewest columns (a 100 x 800 strip in fzf's 40 x 12
 * preview) is widened with transparent margins, left and right, until its grid at MIN_COLUMNS has
 * the box's rows: the art then fits the box, the image centred, as chafa draws it, instead of
 * overflowing it (or, for a box the user gave, being refused). The margins are transparent: blank
 * cells on the ground whatever the options (with two colours per cell, clear cells: the
 * terminal's own background), so a widened image is never marked opaque. The render job
 * (core/job.ts) only narrows down to MIN_COLUMNS; the CLI, which decodes,
 * extends the raster before the job sees it.
 */
import type { DecodeRequest, DecodedFrame, DecodedImage, Decoder, FitBox, FrameDecoder } from '../core/job.js';
import { DEFAULTS, type RenderParams } from '../core/params/definitions.js';
import { MIN_COLUMNS, gridRows } from '../core/pipeline/geometry.js';

/** Whether an image of `width` x `height` has at most `rows` rows at MIN_COLUMNS (gridRows throws past MAX_ROWS: no). */
function fitsAtFewest(width: number, height: number, rows: number, cellAspect: number): boolean {
  try {
    return gridRows(width, height, MIN_COLUMNS, cellAspect) <= rows;
  } catch {
    return false;
  }
}

/**
 * The width (in the image's own pixels) that an image of `width` x `height` needs for its grid at
 * MIN_COLUMNS to have at most `rows` rows; `width` itself when it fits already.
 */
export function paddedWidth(width: number, height: number, rows: number, cellAspect: number): number {
  if (!(width > 0 && height > 0) || fitsAtFewest(width, height, rows, cellAspect)) return width;
  // rows = round(columns x height x cellAspect / width): start from the exact width for `rows`.
  let w = Math.max(width, Math.ceil((MIN_COLUMNS * height * cellAspect) / rows));
  while (!fitsAtFewest(w, height, rows, cellAspect)) w++;
  return w;
}

/** `image` centred in transparent margins so that its source is `sourceWidth` wide (the pixels scaled as the decode shrank them). */
function widen<T extends DecodedImage>(image: T, sourceWidth: number): T {
  if (sourceWidth === image.sourceWidth) return image;
  const width = Math.max(image.width, Math.round((sourceWidth * image.width) / image.sourceWidth));
  const left = Math.floor((width - image.width) / 2);
  const data = new Uint8Array(width * image.height * 4);
  const row = image.width * 4;
  for (let y = 0; y < image.height; y++) data.set(image.data.subarray(y * row, (y + 1) * row), (y * width + left) * 4);
  // Its margins are seen through, whatever the decoded picture was.
  const { opaque: _, ...rest } = image;
  return { ...rest, width, data, sourceWidth } as T;
}

/** The rows of the box the job fits when it picks the columns (none given), else undefined: nothing to widen for. */
function boxRows(params: Partial<RenderParams>, fit: FitBox | undefined): number | undefined {
  return params.columns === undefined ? fit?.rows : undefined;
}

/** The request with its header check (the job's, at MIN_COLUMNS) made on the widened size. */
function widenedRequest(request: DecodeRequest, rows: number, cellAspect: number): DecodeRequest {
  const check = request.checkSize;
  return check ? { ...request, checkSize: (w, h) => check(paddedWidth(w, h, rows, cellAspect), h) } : request;
}

/** `decode`, its images widened to fit `fit`'s rows (see above); `decode` itself where no box bounds the rows. */
export function fitDecoder(decode: Decoder, params: Partial<RenderParams>, fit: FitBox | undefined): Decoder {
  const rows = boxRows(params, fit);
  if (rows === undefined) return decode;
  const cellAspect = params.cellAspect ?? DEFAULTS.cellAspect;
  return async (bytes, request) => {
    const image = await decode(bytes, widenedRequest(request, rows, cellAspect));
    return widen(image, paddedWidth(image.sourceWidth, image.sourceHeight, rows, cellAspect));
  };
}

/** The same for each frame of an animation (all of one size: the first frame's fit holds for all). */
export function fitFrameDecoder(decode: FrameDecoder, params: Partial<RenderParams>, fit: FitBox | undefined): FrameDecoder {
  const rows = boxRows(params, fit);
  if (rows === undefined) return decode;
  const cellAspect = params.cellAspect ?? DEFAULTS.cellAspect;
  return async function* (bytes, request): AsyncGenerator<DecodedFrame, void, undefined> {
    for await (const frame of decode(bytes, widenedRequest(request, rows, cellAspect))) {
      yield widen(frame, paddedWidth(frame.sourceWidth, frame.sourceHeight, rows, cellAspect));
    }
  };
}
