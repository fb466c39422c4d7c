/**
 * finishWebm on clips built here as Chromium's MediaRecorder writes them (Segment and Clusters of
 * unknown size, no Duration): the frames counted, and the Duration written into the Info.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { finishWebm } from '../src/studio/webm.js';

const UNKNOWN = [0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
const el = (id: number[], body: number[]): number[] => [...id, 0x80 | body.length, ...body];

/** A clip whose frames are at `times` ticks of `scale` ns (one cluster at 0). */
function clip(times: number[], duration?: number, scale = 1_000_000): Uint8Array<ArrayBuffer> {
  const header = el([0x1a, 0x45, 0xdf, 0xa3], el([0x42, 0x82], [...Buffer.from('webm')]));
  const infoBody = el([0x2a, 0xd7, 0xb1], [(scale >> 16) & 0xff, (scale >> 8) & 0xff, scale & 0xff]);
  if (duration !== undefined) {
    const d = Buffer.alloc(8);
    d.writeDoubleBE(duration);
    infoBody.push(...el([0x44, 0x89], [...d]));
  }
  const blocks = times.flatMap((t) => el([0xa3], [0x81, (t >> 8) & 0xff, t & 0xff, 0x80, 0x00, 0x00]));
  const cluster = [0x1f, 0x43, 0xb6, 0x75, ...UNKNOWN, ...el([0xe7], [0x00]), ...blocks];
  return new Uint8Array([...header, 0x18, 0x53, 0x80, 0x67, ...UNKNOWN, ...el([0x15, 0x49, 0xa9, 0x66], infoBody), ...cluster]);
}

/** The Duration the finished clip's Info holds (ticks), or undefined. */
function durationOf(parts: readonly Uint8Array[]): number | undefined {
  const b = Buffer.concat(parts);
  const at = b.indexOf(Buffer.from([0x44, 0x89, 0x88]));
  return at < 0 ? undefined : b.readDoubleBE(at + 3);
}

describe('finishing a WebM clip', () => {
  test('counts its frames and writes their span, the last frame lasting the mean frame', () => {
    const finished = finishWebm(clip([0, 100, 200]));
    assert.equal(finished.frames, 3);
    assert.equal(durationOf(finished.parts), 300);
  });

  test('a clip whose art stood still at its end lasts as long as it was recorded', () => {
    // The canvas's stream has no frames while the art is not repainted (a video that ended).
    const finished = finishWebm(clip([0, 100, 200]), 2500);
    assert.equal(finished.frames, 3);
    assert.equal(durationOf(finished.parts), 2500);
    // A recording time shorter than its frames' span does not cut them.
    assert.equal(durationOf(finishWebm(clip([0, 100, 200]), 120).parts), 300);
    // In ticks of the clip's own TimecodeScale (here 0.1 ms).
    assert.equal(durationOf(finishWebm(clip([0, 1000, 2000], undefined, 100_000), 2500).parts), 25_000);
    assert.equal(durationOf(finishWebm(clip([0, 1000, 2000], undefined, 100_000)).parts), 3000);
  });

  test('a clip that has its Duration, or no frames, is left as it came', () => {
    const has = clip([0, 100], 5000);
    assert.deepEqual(finishWebm(has, 9000).parts, [has]);
    const none = clip([]);
    assert.deepEqual(finishWebm(none, 9000), { frames: 0, parts: [none] });
  });
});
