export * from './channel.js';
export * from './watched.js';
export * from './feed.js';
export * from './settle.js';
export * from './tagged-cache.js';
