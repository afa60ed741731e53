import { invalidRequest } from '@gatehouse/errors';

export const LANGUAGES = ['en_US', 'en_UK', 'mn_MN'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'en_US';

const ALIASES: Record<string, Language> = {
  en_us: 'en_US',
  en_uk: 'en_UK',
  en_gb: 'en_UK',
  mn_mn: 'mn_MN',
  mn: 'mn_MN',
};

/** `mn-MN`, `mn_MN`, `MN-mn` -> `mn_MN`; `en-GB` -> `en_UK`; anything else -> undefined. */
export function normalizeLanguage(tag: string): Language | undefined {
  return ALIASES[tag.trim().replace('-', '_').toLowerCase()];
}

/**
 * The language an `Accept-Language` header asks for: the supported tag with the highest q-value (ties: first
 * listed). `*`, unknown tags, q=0 and a malformed header give undefined (base names are served).
 */
export function preferredLanguage(header: string | string[] | undefined): Language | undefined {
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (!raw || raw.length > 500) return undefined;
  let best: { lang: Language; q: number } | undefined;
  for (const part of raw.split(',')) {
    const [tag, ...params] = part.split(';');
    const lang = normalizeLanguage(tag ?? '');
    if (!lang) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (q > 0 && (!best || q > best.q)) best = { lang, q };
  }
  return best?.lang;
}

/** A `:language` path parameter: one of the enum (the `mn-MN` spelling is accepted too), else 400. */
export function parseLanguageParam(value: string): Language {
  const lang = (LANGUAGES as readonly string[]).includes(value)
    ? (value as Language)
    : normalizeLanguage(value);
  if (!lang)
    throw invalidRequest(`language must be one of ${LANGUAGES.join(', ')}`, [
      { field: 'language', message: 'unknown language' },
    ]);
  return lang;
}
