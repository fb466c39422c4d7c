import { MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS } from '../settings/index.js';
import type { DecodeOptions } from './decode.js';

/** The limits a decode applies when the caller gives none (the settings' defaults). */
export const DEFAULT_DECODE_LIMITS: Readonly<Required<Pick<DecodeOptions, 'maxPixels' | 'maxBytes'>>> = Object.freeze({
  maxPixels: MAX_IMAGE_PIXELS.default,
  maxBytes: MAX_IMAGE_BYTES.default,
});
