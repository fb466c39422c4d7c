/** sharp, loaded once for the Node adapter's modules (decode.ts, inspect.ts). */
import { createRequire } from 'node:module';

// sharp's CommonJS entry loads 2-3x faster than its ESM wrapper (measured cold: ~86 vs ~200 ms),
// which is most of the CLI's start-up; the types are the same module's. A consumer's CommonJS
// bundle of this module (esbuild --format=cjs) leaves import.meta empty: its own file then.
export const sharp: typeof import('sharp').default = createRequire(import.meta.url ?? __filename)('sharp');
