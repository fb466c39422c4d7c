/**
 * A render worker's warm-up (V2A_WARM_UP, on by default): before its first task, each worker
 * runs its own job function on the core's warm-up scene (core/warm-up-scene.ts) as a 640 x 480
 * JPEG, so that the decoder, the renderer's tables and the JIT (JavaScript and the WebAssembly
 * kernels, which start as baseline code) are ready when the first request comes. The pool counts the workers that report WARM_UP_MESSAGE,
 * and readiness waits for all of them.
 *
 * Measured on 2 cores (a fresh server of 2 workers from dist/, a 1 MP JPEG at 120 columns, two
 * requests at a time as soon as readiness answers): the first two took 305-343 ms without it and
 * 74-115 ms with it (bench/README.md); the warm-up takes about half a second per worker.
 */
import sharp from 'sharp';
import { WARM_UP_RENDERS, warmUpScene } from '../core/warm-up-scene.js';
import type { RenderJob } from './render-task.js';

/** Key of the message a worker posts once warm (its value: the milliseconds the warm-up took). */
export const WARM_UP_MESSAGE = 'v2aWarmUpMs';

/** Key of the reason a worker's warm-up failed, in its warm-up message (absent when it did not). */
export const WARM_UP_FAILED = 'v2aWarmUpFailed';

/** Why a worker's warm-up failed (its message's WARM_UP_FAILED), or null. */
export function warmUpFailure(message: unknown): string | null {
  if (typeof message !== 'object' || message === null) return null;
  const why = (message as Record<string, unknown>)[WARM_UP_FAILED];
  return typeof why === 'string' ? why : null;
}

/** The warm-up message a worker posts, or null for any other message. */
export function warmUpMs(message: unknown): number | null {
  if (typeof message !== 'object' || message === null || !(WARM_UP_MESSAGE in message)) return null;
  const ms = (message as Record<string, unknown>)[WARM_UP_MESSAGE];
  return typeof ms === 'number' ? ms : null;
}

/**
 * The jobs a worker runs to warm up: the core's warm-up renders (WARM_UP_RENDERS) of its scene,
 * as a JPEG so that the decoder warms up too.
 */
export async function warmUpJobs(): Promise<RenderJob[]> {
  const scene = warmUpScene();
  const jpeg = await sharp(scene.data, { raw: { width: scene.width, height: scene.height, channels: 4 } }).jpeg({ quality: 85 }).toBuffer();
  const limits = { maxBytes: jpeg.byteLength, maxPixels: scene.width * scene.height, decodeTimeoutSeconds: 10 };
  return WARM_UP_RENDERS.map((params) => ({ source: { kind: 'bytes', bytes: new Uint8Array(jpeg) }, params, ...limits }));
}
