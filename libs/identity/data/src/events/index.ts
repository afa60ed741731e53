export * from './catalogue.js';
export * from './writer.js';
