/**
 * A decode call's timeoutSeconds, spent by its sharp pipelines (decode.ts). Apart from decode.ts so
 * that its types, which name sharp's, stay out of the package's declarations: a consumer compiling
 * `v2a/node` without Node's types must not need sharp's.
 */
import type { Sharp } from 'sharp';
import { fromSharpError } from './errors.js';

/**
 * What is left of a call's timeoutSeconds, spent by its pipelines one after another (the 16-bit
 * check, then the decode; the chunks of an animation), so that the limit holds for the call and
 * not for each pipeline. Time a decodeFrames consumer spends between frames is not counted.
 */
export class DecodeBudget {
  private leftMs: number;
  constructor(readonly seconds: number) {
    this.leftMs = seconds * 1000;
  }
  /** `pipeline` run to its buffer within what is left: libvips aborts it at the whole second past that. */
  async run<T>(pipeline: Sharp, produce: (p: Sharp) => Promise<T>): Promise<T> {
    if (this.seconds === 0) return produce(pipeline);
    if (this.leftMs <= 0) throw fromSharpError(new Error('timeout: decode budget spent'), { timeoutSeconds: this.seconds });
    const t0 = performance.now();
    try {
      return await produce(pipeline.timeout({ seconds: Math.ceil(this.leftMs / 1000) }));
    } finally {
      this.leftMs -= performance.now() - t0;
    }
  }
}
