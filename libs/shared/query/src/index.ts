export * from './record-spec.js';
export * from './case.js';
export { MAX_Q_DEPTH, MAX_Q_LENGTH } from './q-error.js';
export { type Token, type Keyword, type CompareOp, tokenize } from './tokenizer.js';
export { type Expr, type Literal, type NameRef, parseQ } from './parser.js';
export { type CompileOptions, type WhereClause, compileWhere } from './compile.js';
export * from './list-query.js';
export * from './envelope.js';
