/**
 * Container formats accepted, as sharp's `metadata().format` names them. Sharp reports AVIF as
 * `heif`; only AV1-compressed HEIF (AVIF) is accepted: sharp's prebuilt libvips ships libheif
 * with the AV1 codec (aom) only, it cannot decode HEVC (HEIC, e.g. iPhone photos), so those are
 * refused as `unsupported_format` up front instead of failing later as `undecodable`.
 */
export const ALLOWED_FORMATS = ['jpeg', 'png', 'webp', 'gif', 'heif', 'tiff'] as const;
export type SharpInputFormat = (typeof ALLOWED_FORMATS)[number];

/** Format names this adapter reports: sharp's, except that AVIF is called `avif`. */
export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'avif' | 'tiff';
