/**
 * Imported for its effect, first thing in renderer.ts: sharp from the CLI's bundle of it
 * (bundled-sharp.ts) is in require.cache before node/sharp.ts requires sharp.
 */
import { useBundledSharp } from './bundled-sharp.js';

useBundledSharp();
