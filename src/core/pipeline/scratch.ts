/**
 * Reusable working rasters. A render allocates several rasters of (columns*4) x (rows*8) floats;
 * allocating them afresh each time made garbage collection a large share of a render. Rendering is
 * synchronous and each thread (server worker, CLI, studio worker) renders one image at a time, so
 * one set per slot can be reused. Nothing returned to a caller may point into these buffers.
 */
const slots = new Map<string, Float32Array>();

/** A zero-filled-or-stale Float32Array of `length` for the named slot: callers overwrite it fully. */
export function scratch(slot: string, length: number): Float32Array {
  let buf = slots.get(slot);
  if (!buf || buf.length < length) {
    buf = new Float32Array(Math.max(length, Math.ceil((buf?.length ?? 0) * 1.25)));
    slots.set(slot, buf);
  }
  return buf.length === length ? buf : buf.subarray(0, length);
}
