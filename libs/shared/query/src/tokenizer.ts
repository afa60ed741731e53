/**
 * Tokenizer for the `q` where-clause language (docs/contract.md "Conventions for every JSON API").
 *
 * Tokens: names (`client_name`, dotted `metadata.tags`), keywords (case-insensitive), 'single-quoted'
 * strings ('' is a quote), numbers (`12`, `-3`, `1.5`), operators `= != <> < <= > >=`, `(`, `)`, `,`.
 * Whitespace is space, tab, CR and LF; any other character outside a string is an error, so comments
 * (`--`, `/* *\/`), `;`, double quotes and invisible Unicode characters are rejected with their position.
 */
import { describeChar, qError, show } from './q-error.js';

export type Keyword = 'and' | 'or' | 'not' | 'like' | 'ilike' | 'in' | 'is' | 'null' | 'true' | 'false';
export type CompareOp = '=' | '!=' | '<>' | '<' | '<=' | '>' | '>=';

export type Token =
  | { kind: 'name'; text: string; pos: number }
  | { kind: 'keyword'; keyword: Keyword; text: string; pos: number }
  | { kind: 'string'; value: string; text: string; pos: number }
  | { kind: 'number'; text: string; pos: number }
  | { kind: 'op'; op: CompareOp; text: string; pos: number }
  | { kind: '(' | ')' | ','; text: string; pos: number }
  | { kind: 'end'; text: string; pos: number };

const KEYWORDS: ReadonlySet<string> = new Set([
  'and',
  'or',
  'not',
  'like',
  'ilike',
  'in',
  'is',
  'null',
  'true',
  'false',
]);

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isNameStart = (c: string | undefined) =>
  c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_');
const isNameChar = (c: string | undefined) => isNameStart(c) || isDigit(c);

/**
 * A lazy lexer: the parser pulls one token at a time, so the error reported is always the leftmost
 * one (lexical or syntactic). Positions are 1-based.
 */
export class Lexer {
  private i = 0;

  constructor(private readonly q: string) {}

  /** The next token; `end` (repeatedly) once the input is used up. */
  next(): Token {
    const q = this.q;
    let i = this.i;
    while (i < q.length && (q[i] === ' ' || q[i] === '\t' || q[i] === '\n' || q[i] === '\r')) i++;
    const pos = i + 1;
    if (i >= q.length) {
      this.i = i;
      return { kind: 'end', text: '', pos };
    }
    const c = q[i];
    let token: Token;
    if (c === '(' || c === ')' || c === ',') {
      token = { kind: c, text: c, pos };
    } else if (c === '=') {
      token = { kind: 'op', op: '=', text: c, pos };
    } else if (c === '!' || c === '<' || c === '>') {
      const two = q.slice(i, i + 2);
      if (two === '!=' || two === '<>' || two === '<=' || two === '>=') {
        token = { kind: 'op', op: two, text: two, pos };
      } else if (c === '!') {
        throw qError(`unexpected '!' (did you mean '!='?)`, pos);
      } else {
        token = { kind: 'op', op: c as CompareOp, text: c, pos };
      }
    } else if (c === "'") {
      token = this.string(i);
    } else if (isDigit(c) || (c === '-' && isDigit(q[i + 1]))) {
      let j = c === '-' ? i + 1 : i;
      while (isDigit(q[j])) j++;
      if (q[j] === '.') {
        if (!isDigit(q[j + 1])) throw qError('a decimal point must be followed by digits', j + 1);
        j++;
        while (isDigit(q[j])) j++;
      }
      if (isNameChar(q[j]) || q[j] === '.') throw qError(`malformed number ${show(q.slice(i, j + 1))}`, pos);
      token = { kind: 'number', text: q.slice(i, j), pos };
    } else if (isNameStart(c)) {
      let j = i;
      while (isNameChar(q[j])) j++;
      while (q[j] === '.') {
        if (!isNameChar(q[j + 1])) throw qError('a dot in a name must be followed by a key', j + 1);
        j++;
        while (isNameChar(q[j])) j++;
      }
      const text = q.slice(i, j);
      const lower = text.toLowerCase();
      token = KEYWORDS.has(lower)
        ? { kind: 'keyword', keyword: lower as Keyword, text, pos }
        : { kind: 'name', text, pos };
    } else if ((c === '-' && q[i + 1] === '-') || (c === '/' && q[i + 1] === '*')) {
      throw qError('comments are not allowed', pos);
    } else {
      throw qError(`unexpected character ${describeChar(String.fromCodePoint(q.codePointAt(i)!))}`, pos);
    }
    this.i = i + token.text.length;
    return token;
  }

  private string(start: number): Token {
    const q = this.q;
    let value = '';
    let j = start + 1;
    for (;;) {
      if (j >= q.length) {
        throw qError('unterminated string (a quote inside a string is written twice)', start + 1);
      }
      if (q[j] === "'") {
        if (q[j + 1] !== "'") break;
        value += "'";
        j += 2;
      } else {
        value += q[j];
        j++;
      }
    }
    return { kind: 'string', value, text: q.slice(start, j + 1), pos: start + 1 };
  }
}

/** Splits all of `q` into tokens; the last one is always `end`. */
export function tokenize(q: string): Token[] {
  const lexer = new Lexer(q);
  const tokens: Token[] = [];
  for (;;) {
    const t = lexer.next();
    tokens.push(t);
    if (t.kind === 'end') return tokens;
  }
}
