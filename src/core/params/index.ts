export * from './definitions.js';
export * from './validate.js';
export * from './schema.js';
