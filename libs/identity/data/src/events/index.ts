export * from './catalogue.js';
export * from './writer.js';
export * from './housekeeping.js';
