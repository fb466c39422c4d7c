export * from './types.js';
export * from './charsets.js';
