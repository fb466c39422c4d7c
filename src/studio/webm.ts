/**
 * A WebM clip as MediaRecorder writes it (Chromium: an EBML header, then a Segment and Clusters of
 * unknown size, no Duration, no Cues), finished for saving: the frames it holds are counted (the
 * studio renders more results than the recorder encodes), and its duration, which MediaRecorder
 * cannot know when it writes the header, is written into the Segment's Info, so players show the
 * clip's length and can seek in it. The canvas's stream has frames only when the art is repainted,
 * so a clip whose art stood still at its end (a video that ended, a paused source) would be cut
 * short; given the time recorded, the duration spans it, the last frame held to the end, as the
 * user saw it. A pure module: the tests call it in Node.
 */

const SEGMENT = 0x18538067, CLUSTER = 0x1f43b675, BLOCK_GROUP = 0xa0;
const INFO = 0x1549a966, TIMECODE_SCALE = 0x2ad7b1, DURATION = 0x4489, TIMECODE = 0xe7, BLOCK = 0xa1, SIMPLE_BLOCK = 0xa3;
/** Elements walked into (their children follow in place); all others are stepped over. */
const WALKED_INTO = new Set([SEGMENT, INFO, CLUSTER, BLOCK_GROUP]);

/** An EBML variable-length integer at `i`: `marker` keeps its length marker (element ids do). */
function vint(b: Uint8Array, i: number, marker: boolean): { value: number; length: number; unknown: boolean } {
  const first = b[i] ?? 0;
  const length = first ? Math.clz32(first) - 23 : 9;
  let value = marker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let k = 1; k < length; k++) {
    value = value * 256 + (b[i + k] ?? 0);
    allOnes &&= b[i + k] === 0xff;
  }
  return { value, length, unknown: !marker && allOnes };
}

function uint(b: Uint8Array, start: number, end: number): number {
  let v = 0;
  for (let i = start; i < end; i++) v = v * 256 + b[i]!;
  return v;
}

export interface FinishedClip {
  /** Video frames in the clip (its blocks: the art is its only track). */
  readonly frames: number;
  /** The clip, with its Duration in the Info (as it came where that was there, or no Info was found). */
  readonly parts: readonly Uint8Array<ArrayBuffer>[];
}

/** `recordedMs`: how long the recording ran (the duration is at least that). */
export function finishWebm(b: Uint8Array<ArrayBuffer>, recordedMs = 0): FinishedClip {
  let frames = 0, scale = 1_000_000, cluster = 0, first = Infinity, last = -Infinity;
  let info: { start: number; data: number; end: number } | null = null;
  let hasDuration = false;
  for (let i = 0; i < b.length;) {
    const id = vint(b, i, true);
    const size = vint(b, i + id.length, false);
    const data = i + id.length + size.length;
    if (id.length > 4 || size.length > 8 || data > b.length) break; // not EBML, or cut short
    const end = size.unknown ? b.length : data + size.value;
    if (id.value === INFO) info = { start: i, data, end };
    else if (id.value === TIMECODE_SCALE) scale = uint(b, data, end);
    else if (id.value === DURATION) hasDuration = true;
    else if (id.value === TIMECODE) cluster = uint(b, data, end);
    else if (id.value === BLOCK || id.value === SIMPLE_BLOCK) {
      // Track number, then the time relative to the cluster's (16 bits, signed).
      const at = data + vint(b, data, false).length;
      const t = cluster + ((((b[at] ?? 0) << 8) | (b[at + 1] ?? 0)) << 16 >> 16);
      first = Math.min(first, t);
      last = Math.max(last, t);
      frames++;
    }
    i = WALKED_INTO.has(id.value) ? data : end;
  }
  if (!info || hasDuration || !frames || info.end > b.length) return { frames, parts: [b] };
  // The last frame lasts as long as the mean frame, or until the recording stopped; in ticks of
  // the TimecodeScale (ns).
  const ticks = Math.max(last + (frames > 1 ? (last - first) / (frames - 1) : 1e9 / 30 / scale), (recordedMs * 1e6) / scale);
  const duration = new Uint8Array(11);
  duration.set([0x44, 0x89, 0x88]);
  new DataView(duration.buffer).setFloat64(3, ticks);
  // The Info again with the Duration after its children, its size as an 8-byte vint.
  const head = new Uint8Array(12);
  head.set([0x15, 0x49, 0xa9, 0x66, 0x01]);
  const newSize = info.end - info.data + duration.length;
  for (let k = 0, v = newSize; k < 7; k++, v = Math.floor(v / 256)) head[11 - k] = v % 256;
  return { frames, parts: [b.subarray(0, info.start), head, b.subarray(info.data, info.end), duration, b.subarray(info.end)] };
}
