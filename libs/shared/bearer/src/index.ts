export * from './bearer.env.js';
export * from './token-validator.js';
export * from './decorators.js';
export * from './bearer.guard.js';
export * from './bearer.module.js';
export * from './bearer.strategy.js';
