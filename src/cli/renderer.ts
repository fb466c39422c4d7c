/**
 * What a render needs beyond the command line: the render job and sharp's decoders. The CLI
 * imports this module lazily, once, so a render runs it (and loads sharp) after the command line
 * is parsed, and `v2a --help` never does.
 */
// First, so that node/sharp.ts's require('sharp') gets the CLI's bundled copy where there is one.
import './load-bundled-sharp.js';

import { configureSharp } from '../node/index.js';

export { runJob, runFrameJob } from '../core/job.js';
export { decodeImage, decodeFrames } from '../node/index.js';

// One-shot decodes: libvips' operation cache would only hold memory.
configureSharp();
