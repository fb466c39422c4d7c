/**
 * The runtime's TextEncoder and TextDecoder, made once. Node, browsers and workers all have both;
 * the core's type check has no DOM or Node types, so they are reached through globalThis.
 */
interface Encoder { encodeInto(s: string, into: Uint8Array): { read: number; written: number }; encode(s: string): Uint8Array }
interface Decoder { decode(bytes: Uint8Array): string }

let encoder: Encoder | null = null;
let decoder: Decoder | null = null;

/** UTF-8 TextEncoder (an ASCII string's bytes are its char codes). */
export const textEncoder = (): Encoder => (encoder ??= new (globalThis as unknown as { TextEncoder: new () => Encoder }).TextEncoder());

/** UTF-8 TextDecoder (ASCII bytes decode to the same char codes). */
export const textDecoder = (): Decoder => (decoder ??= new (globalThis as unknown as { TextDecoder: new () => Decoder }).TextDecoder());
