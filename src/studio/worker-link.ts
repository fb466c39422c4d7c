/** The page's end of the render worker: messages out, and export requests answered by id. */
import type { Format } from '../core/index.js';
import type { FromWorker, ToWorker } from './protocol.js';

export const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'v2a-render' });

export function send(m: ToWorker, transfer: Transferable[] = []): void {
  worker.postMessage(m, transfer);
}

export interface Exported {
  readonly body: string | Uint8Array;
  readonly extension: string;
  readonly contentType: string;
}

const exports = new Map<number, { resolve: (v: Exported) => void; reject: (e: Error) => void }>();
let exportId = 0;

/** The shown art in `format`, formatted by the worker (the parameters it was rendered with). */
export function workerExport(format: Format, maxPixels: number): Promise<Exported> {
  const id = ++exportId;
  return new Promise((resolve, reject) => {
    exports.set(id, { resolve, reject });
    send({ t: 'export', id, format, maxPixels });
  });
}

/** Answers export replies; returns true when the message was one. */
export function settleExport(m: FromWorker): boolean {
  if (m.t === 'export') {
    exports.get(m.id)?.resolve({ body: m.body, extension: m.extension, contentType: m.contentType });
    exports.delete(m.id);
    return true;
  }
  if (m.t === 'error' && m.during === 'export' && m.id !== undefined) {
    exports.get(m.id)?.reject(new Error(m.message));
    exports.delete(m.id);
    return true;
  }
  return false;
}
