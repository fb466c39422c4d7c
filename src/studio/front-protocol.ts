/**
 * Messages between the render worker (worker.ts) and its front thread (front-worker.ts): plain
 * data and transferables only. Every frame sent comes back, with its pixels, as a handoff, an
 * error or stale (sent under parameters replaced since).
 */
import type { FrameHandoff, RgbaImage } from '../core/index.js';

export type ToFront =
  /** Frames of generation `gen` render with these parameters (a new FrameFront). */
  | { readonly t: 'params'; readonly gen: number; readonly params: Record<string, unknown> }
  | { readonly t: 'frame'; readonly gen: number; readonly image: RgbaImage };

export type FromFront =
  /** `ms`: the front's time on this frame. */
  | { readonly t: 'handoff'; readonly gen: number; readonly image: RgbaImage; readonly handoff: FrameHandoff; readonly ms: number }
  | { readonly t: 'error'; readonly gen: number; readonly image: RgbaImage; readonly message: string }
  | { readonly t: 'stale'; readonly gen: number; readonly image: RgbaImage };
