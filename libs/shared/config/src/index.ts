export * from './env.js';
export * from './common.js';
