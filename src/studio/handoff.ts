/**
 * The studio's side of the a2v handoff, protocol `platform.v2a.a2v.handoff.v1` (the contract is
 * src/contract/handoff.ts, served by GET /api/v1/a2v-handoff):
 *
 * 1. open the receiver at the manifest's launch address with `handoff` (a fresh 128-bit id),
 *    `protocol`, `mode`, `source` (this page's origin) and `traceId` (given, or a fresh one);
 * 2. post `hello` to the receiver window every 250 ms (for at most 10 s) until it answers `ready`;
 * 3. post `frame`s: one for `latest-frame`, a stream for `webcam-stream` / `video-stream`, no faster
 *    than the receiver's `maxFps`;
 * 4. post `end` when done, stopped or when this page goes away; a receiver `end`/`error` ends it.
 *
 * Every post names the manifest's fixed target origin (never "*"), so the browser delivers it only
 * to a document of that origin: if the receiver window navigates elsewhere, nothing is delivered.
 * Every message received is checked: origin equal to the target origin, source the receiver
 * window, protocol and handoff id ours; anything else is ignored.
 */
import { CHROMA_ENCODING, VERSION } from '../core/index.js';
import {
  FRAME_FORMAT, HANDOFF_PROTOCOL, HELLO_INTERVAL_MS, HELLO_TIMEOUT_MS,
  type EndReason, type FrameMessage, type HandoffErrorCode, type HandoffManifest, type HandoffMessage, type HandoffMode, type HelloMessage,
} from '../contract/handoff.js';
import { launchUrl, randomHex32, targetOriginOf } from './launch.js';

export { TRACE_ID, freshTraceId, targetOriginOf } from './launch.js';

export type HandoffState = 'opening' | 'waiting' | 'ready' | 'ended' | 'error';

/** What a `frame` message carries besides the common fields, seq and timestamp. */
export type HandoffFrame = Pick<FrameMessage, 'columns' | 'rows' | 'text' | 'chroma' | 'director'>;

export class HandoffSession {
  readonly handoff = randomHex32();
  readonly targetOrigin: string;
  readonly launchUrl: string;
  state: HandoffState = 'opening';
  /** Frames sent. */
  sent = 0;
  maxFps: number | null = null;
  private win: Window | null = null;
  private helloTimer: ReturnType<typeof setInterval> | undefined;
  private closedTimer: ReturnType<typeof setInterval> | undefined;
  private lastSentAt = -Infinity;
  private readonly listener = (e: MessageEvent) => this.onMessage(e);
  private readonly unload = () => this.end('closed');

  /** State changes, with a human-readable detail. */
  onState: (state: HandoffState, detail: string) => void = () => {};
  /** The receiver is ready: for `latest-frame`, send the frame now. */
  onReady: () => void = () => {};

  constructor(manifest: HandoffManifest, readonly mode: HandoffMode, readonly traceId: string) {
    this.targetOrigin = targetOriginOf(manifest);
    this.launchUrl = launchUrl(manifest, { handoff: this.handoff, mode, source: location.origin, traceId });
  }

  private common<T extends HandoffMessage['type']>(type: T) {
    return { type, protocol: HANDOFF_PROTOCOL, handoff: this.handoff } as const;
  }

  private post(message: HandoffMessage): void {
    if (!this.win || this.win.closed) return;
    this.win.postMessage(message, this.targetOrigin);
  }

  private setState(state: HandoffState, detail: string): void {
    this.state = state;
    this.onState(state, detail);
  }

  /** Opens the receiver window; call from a user gesture (popup blockers). */
  open(): boolean {
    this.win = window.open(this.launchUrl, 'v2a-a2v-receiver');
    if (!this.win) {
      this.setState('error', 'The receiver window could not be opened (popup blocked?).');
      return false;
    }
    window.addEventListener('message', this.listener);
    window.addEventListener('pagehide', this.unload);
    const started = performance.now();
    const hello: HelloMessage = {
      ...this.common('hello'),
      mode: this.mode,
      traceId: this.traceId,
      frameFormat: FRAME_FORMAT,
      chromaEncoding: CHROMA_ENCODING,
      sender: { name: 'v2a-studio', version: VERSION },
    };
    this.setState('waiting', `Waiting for the receiver at ${this.targetOrigin}…`);
    this.post(hello);
    this.helloTimer = setInterval(() => {
      if (performance.now() - started > HELLO_TIMEOUT_MS) {
        this.post({ ...this.common('error'), code: 'timeout', message: `No ready reply within ${HELLO_TIMEOUT_MS / 1000} s.` });
        this.fail(`The receiver at ${this.targetOrigin} did not answer within ${HELLO_TIMEOUT_MS / 1000} s.`);
        return;
      }
      this.post(hello);
    }, HELLO_INTERVAL_MS);
    this.closedTimer = setInterval(() => {
      if (this.win?.closed) this.finish('ended', 'The receiver window was closed.');
    }, 500);
    return true;
  }

  private onMessage(e: MessageEvent): void {
    // Only the receiver window, at the fixed origin, about this handoff.
    if (e.origin !== this.targetOrigin || e.source !== this.win) return;
    const m = e.data as Record<string, unknown> | null;
    if (!m || typeof m !== 'object' || m.protocol !== HANDOFF_PROTOCOL || m.handoff !== this.handoff) return;
    switch (m.type) {
      case 'ready':
        if (this.state !== 'waiting') return;
        if (m.traceId !== this.traceId) {
          this.post({ ...this.common('error'), code: 'bad-message', message: 'ready carries another traceId' });
          this.fail('The receiver answered with another trace id.');
          return;
        }
        clearInterval(this.helloTimer);
        this.maxFps = typeof m.maxFps === 'number' && m.maxFps > 0 ? m.maxFps : null;
        this.setState('ready', `Connected to ${this.targetOrigin}${this.maxFps ? ` (at most ${this.maxFps} fps)` : ''}.`);
        this.onReady();
        break;
      case 'end':
        this.finish('ended', `The receiver ended the handoff${typeof m.reason === 'string' ? ` (${m.reason})` : ''}.`);
        break;
      case 'error':
        this.finish('error', `The receiver reported an error: ${typeof m.message === 'string' ? m.message : String(m.code)}`);
        break;
    }
  }

  /** Posts a frame if the receiver is ready and maxFps allows; returns whether it was sent. */
  sendFrame(frame: HandoffFrame, timestamp = Date.now()): boolean {
    if (this.state !== 'ready') return false;
    const now = performance.now();
    if (this.maxFps && now - this.lastSentAt < 1000 / this.maxFps - 1) return false;
    this.lastSentAt = now;
    this.post({
      ...this.common('frame'),
      seq: this.sent,
      timestamp,
      columns: frame.columns,
      rows: frame.rows,
      text: frame.text,
      ...(frame.chroma ? { chroma: { encoding: frame.chroma.encoding, data: frame.chroma.data } } : {}),
      ...(frame.director ? { director: { status: frame.director.status, rubric: frame.director.rubric, score: frame.director.score } } : {}),
    });
    this.sent++;
    return true;
  }

  /** Ends the handoff: `complete` (all sent), `stopped` (by the user) or `closed` (page going away). */
  end(reason: EndReason): void {
    if (this.state === 'ended' || this.state === 'error') return;
    this.post({ ...this.common('end'), reason, frames: this.sent });
    this.finish('ended', reason === 'complete' ? `Sent ${this.sent} frame${this.sent === 1 ? '' : 's'}.` : `Stopped after ${this.sent} frame${this.sent === 1 ? '' : 's'}.`);
  }

  /** Reports a failure on this side to the receiver (a code of the manifest's error message) and ends. */
  error(code: HandoffErrorCode, message: string): void {
    if (this.state === 'ended' || this.state === 'error') return;
    this.post({ ...this.common('error'), code, message });
    this.fail(message);
  }

  private fail(detail: string): void {
    this.finish('error', detail);
  }

  private finish(state: 'ended' | 'error', detail: string): void {
    clearInterval(this.helloTimer);
    clearInterval(this.closedTimer);
    window.removeEventListener('message', this.listener);
    window.removeEventListener('pagehide', this.unload);
    this.setState(state, detail);
  }

  get active(): boolean {
    return this.state === 'waiting' || this.state === 'ready' || this.state === 'opening';
  }
}
