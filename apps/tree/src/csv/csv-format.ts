import { LANGUAGES, normalizeLanguage, type Language } from '../common/language.js';
import { NO_CONTROL_CHARS } from '../common/validators.js';

/**
 * The CSV exchange format of a tree version (RFC 4180, UTF-8, a BOM is accepted, header line required):
 *
 *   code,parent_code,name,description[,name@<lang>,description@<lang>...]
 *
 * - one node per line; `parent_code` empty for a root, else the code of another line or (when importing into a
 *   version that keeps its nodes) of a node already in the version; lines may come in any order;
 * - `<lang>` is `en_US`, `en_UK` or `mn_MN` (`mn-MN` accepted): the node's translation in that language;
 * - export writes parents before children (depth-first, siblings in creation order) and a translation column pair
 *   for each language used in the version; metadata and `enabled` are not part of the format;
 * - a value starting with = + - @, tab or CR (after any apostrophes) is exported with a leading `'`, so that a
 *   spreadsheet shows it as text instead of running it (OWASP, CSV injection); import drops one leading `'` before
 *   such a value, so an export imports back exactly.
 */
export const BASE_COLUMNS = ['code', 'parent_code', 'name', 'description'] as const;

export interface CsvLayout {
  /** Index of each base column in a line (description may be absent). */
  code: number;
  parentCode: number;
  name: number;
  description?: number;
  /** Translation columns: language -> index of name@lang / description@lang. */
  translations: Map<Language, { name?: number; description?: number }>;
  width: number;
}

/** Parses the header line; returns the layout or the problems found (column names in the messages). */
export function parseHeader(header: string[]): { layout?: CsvLayout; problems: string[] } {
  const problems: string[] = [];
  const seen = new Set<string>();
  const index: Record<string, number> = {};
  const translations = new Map<Language, { name?: number; description?: number }>();
  header.forEach((raw, i) => {
    const name = raw.trim();
    if (seen.has(name.toLowerCase())) problems.push(`column '${name}' appears twice`);
    seen.add(name.toLowerCase());
    if ((BASE_COLUMNS as readonly string[]).includes(name)) {
      index[name] = i;
      return;
    }
    const m = /^(name|description)@(.+)$/.exec(name);
    const lang = m ? normalizeLanguage(m[2]) : undefined;
    if (!m || !lang) {
      problems.push(
        `unknown column '${name}' (expected ${BASE_COLUMNS.join(', ')} and name@<lang>/description@<lang> with <lang> one of ${LANGUAGES.join(', ')})`,
      );
      return;
    }
    const entry = translations.get(lang) ?? {};
    entry[m[1] as 'name' | 'description'] = i;
    translations.set(lang, entry);
  });
  for (const required of ['code', 'parent_code', 'name']) {
    if (index[required] === undefined) problems.push(`missing column '${required}'`);
  }
  if (problems.length > 0) return { problems };
  return {
    layout: {
      code: index.code,
      parentCode: index.parent_code,
      name: index.name,
      description: index.description,
      translations,
      width: header.length,
    },
    problems,
  };
}

/** Problems of one data line (field names as in the header). */
export function lineProblems(fields: string[], layout: CsvLayout): string[] {
  const out: string[] = [];
  if (fields.length !== layout.width) {
    out.push(`has ${fields.length} fields, the header has ${layout.width}`);
    return out;
  }
  const code = fields[layout.code];
  const name = fields[layout.name];
  const parent = fields[layout.parentCode];
  if (code === '') out.push('code is empty');
  else if (code.length > 255) out.push('code is longer than 255 characters');
  else if (!NO_CONTROL_CHARS.test(code)) out.push('code contains control characters');
  if (parent.length > 255) out.push('parent_code is longer than 255 characters');
  if (parent !== '' && parent === code) out.push('a node cannot be its own parent');
  if (name === '') out.push('name is empty');
  else if (name.length > 255) out.push('name is longer than 255 characters');
  const description = layout.description === undefined ? '' : fields[layout.description];
  if (description.length > 4000) out.push('description is longer than 4000 characters');
  for (const [lang, cols] of layout.translations) {
    if (cols.name !== undefined && fields[cols.name].length > 255)
      out.push(`name@${lang} is longer than 255 characters`);
    if (cols.description !== undefined && fields[cols.description].length > 4000) {
      out.push(`description@${lang} is longer than 4000 characters`);
    }
  }
  return out;
}

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * A value a spreadsheet would run as a formula (OWASP "CSV injection": a first character of = + - @, tab or CR),
 * possibly behind apostrophes already: such a value is exported with one more leading apostrophe.
 */
const FORMULA_LIKE = /^'*[=+\-@\t\r]/;
/** An exported (or hand-escaped) cell: an apostrophe before a formula-like value; import drops that apostrophe. */
const ESCAPED_FORMULA = /^'+[=+\-@\t\r]/;

/** The cell written for a value: `'` + value when the value is formula-like (see FORMULA_LIKE). */
export function escapeFormula(value: string): string {
  return FORMULA_LIKE.test(value) ? `'${value}` : value;
}

/**
 * The value of an imported cell: one leading apostrophe dropped when what follows is formula-like, so an export
 * imports back exactly; any other cell (a lone leading apostrophe included) is the value as written.
 */
export function unescapeFormula(cell: string): string {
  return ESCAPED_FORMULA.test(cell) ? cell.slice(1) : cell;
}

/**
 * One CSV line of the exchange format, `\n`-terminated: a formula-like value gets a leading apostrophe
 * (escapeFormula), then a field is quoted (inner quotes doubled) when it holds a quote, a comma or a line break, as
 * RFC 4180 asks, and written as it is otherwise (null: empty).
 */
export function csvLine(fields: readonly (string | null)[]): string {
  let line = '';
  for (let i = 0; i < fields.length; i++) {
    const v = escapeFormula(fields[i] ?? '');
    if (i > 0) line += ',';
    line += NEEDS_QUOTES.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
  }
  return `${line}\n`;
}
