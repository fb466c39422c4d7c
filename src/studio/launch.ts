/**
 * The DOM-free part of the studio's a2v handoff (handoff.ts): checking the manifest's target
 * origin, building the launch address, random ids. Also used by the tests under Node.
 */
import { HANDOFF_PROTOCOL, type HandoffManifest, type HandoffMode } from '../contract/handoff.js';

export const TRACE_ID = /^[0-9a-f]{32}$/;

/** 32 lowercase hex characters (128 random bits): handoff ids and trace ids. */
export function randomHex32(): string {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

/** A fresh W3C trace id (32 hex, not all zeros). */
export function freshTraceId(): string {
  for (;;) {
    const id = randomHex32();
    if (!/^0+$/.test(id)) return id;
  }
}

/** The target origin of a manifest, checked: fixed, the launch address's own, never a wildcard. */
export function targetOriginOf(manifest: HandoffManifest): string {
  const launch = new URL(manifest.launch.url);
  const origin = manifest.transport.targetOrigin;
  if (manifest.protocol !== HANDOFF_PROTOCOL) throw new Error(`the receiver speaks ${manifest.protocol}, not ${HANDOFF_PROTOCOL}`);
  if (origin === '*' || origin === 'null' || origin !== launch.origin || manifest.receiver.targetOrigin !== origin) {
    throw new Error('the handoff manifest has no fixed target origin matching its launch address');
  }
  if (launch.protocol !== 'https:' && launch.protocol !== 'http:') throw new Error('the launch address is not http(s)');
  return origin;
}

/** The receiver's launch address with the handoff's query parameters (manifest.launch.parameters). */
export function launchUrl(manifest: HandoffManifest, p: { handoff: string; mode: HandoffMode; source: string; traceId: string }): string {
  if (!TRACE_ID.test(p.traceId)) throw new Error('the trace id must be 32 lowercase hex characters');
  const url = new URL(manifest.launch.url);
  url.searchParams.set('handoff', p.handoff);
  url.searchParams.set('protocol', HANDOFF_PROTOCOL);
  url.searchParams.set('mode', p.mode);
  url.searchParams.set('source', p.source);
  url.searchParams.set('traceId', p.traceId);
  return url.href;
}
