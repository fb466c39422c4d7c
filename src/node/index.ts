export {
  ALLOWED_FORMATS,
  RESIZE_KERNEL,
  configureSharp,
  decodeFrames,
  decodeImage,
  probeImage,
} from './decode.js';
export type {
  DecodeOptions,
  DecodedFrame,
  DecodedImage,
  FrameDecodeOptions,
  ImageFormat,
  ProbeResult,
  SharpInputFormat,
} from './decode.js';
export { ImageInputError, fromSharpError, sanitizeCause } from './errors.js';
export type { ImageInputErrorCode } from './errors.js';
