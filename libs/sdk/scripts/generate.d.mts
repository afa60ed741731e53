// Types for generate.mjs (plain ESM so `npm run sdk:generate` runs it without compilation).

export const SDK_ROOT: string;
export const GENERATED_DIR: string;
export const DOCUMENTS: readonly ['auth', 'identity', 'tree'];

export type ServiceUrls = Record<'auth' | 'identity' | 'tree', string>;

export function fetchDocuments(urls: ServiceUrls): Promise<Record<'auth' | 'identity' | 'tree', unknown>>;
export function normalise<T>(doc: T, urls: ServiceUrls): T;
export function render(name: string, doc: unknown): Promise<string>;
/** Every generated file: absolute path -> content. */
export function generate(urls: ServiceUrls): Promise<Map<string, string>>;
