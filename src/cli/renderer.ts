/**
 * What a render needs beyond the command line: the render job and sharp's decoders. The CLI
 * imports this module lazily, once, so a render loads it as one piece (one chunk of the bundle)
 * after the command line is parsed, and `v2a --help` never does.
 */
export { runJob, runFrameJob } from '../core/job.js';
export { decodeImage, decodeFrames } from '../node/index.js';
