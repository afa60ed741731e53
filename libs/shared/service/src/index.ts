export * from './service.js';
export * from './core.module.js';
