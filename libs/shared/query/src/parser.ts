/**
 * Recursive-descent parser for `q`. Precedence, loosest first: `or`, `and`, `not`, comparison.
 *
 *   expr       := and ( OR and )*
 *   and        := unary ( AND unary )*
 *   unary      := NOT unary | primary
 *   primary    := '(' expr ')' | predicate
 *   predicate  := name op literal
 *               | name [NOT] LIKE literal | name [NOT] ILIKE literal
 *               | name [NOT] IN '(' literal ( ',' literal )* ')'
 *               | name IS [NOT] NULL
 *   literal    := string | number | TRUE | FALSE | NULL
 *
 * The parser knows nothing of record types; names are resolved by the compiler.
 */
import { MAX_Q_DEPTH, qError, show } from './q-error.js';
import { type CompareOp, type Keyword, Lexer, type Token } from './tokenizer.js';

export type Literal =
  | { kind: 'string'; value: string; pos: number }
  | { kind: 'number'; text: string; pos: number }
  | { kind: 'boolean'; value: boolean; pos: number }
  | { kind: 'null'; pos: number };

export interface NameRef {
  /** The name as written, e.g. `client_metadata.grant_types`. */
  text: string;
  pos: number;
}

export type Expr =
  | { kind: 'or' | 'and'; items: Expr[] }
  | { kind: 'not'; item: Expr }
  | { kind: 'compare'; name: NameRef; op: CompareOp; value: Literal }
  | { kind: 'like'; name: NameRef; negated: boolean; insensitive: boolean; pattern: Literal }
  | { kind: 'in'; name: NameRef; negated: boolean; values: Literal[] }
  | { kind: 'null'; name: NameRef; negated: boolean };

function describe(t: Token): string {
  switch (t.kind) {
    case 'end':
      return 'the end of q';
    case 'string':
      return `string '${show(t.value)}'`;
    case 'keyword':
      return `keyword ${t.keyword.toUpperCase()}`;
    default:
      return `'${show(t.text)}'`;
  }
}

class Parser {
  private depth = 0;
  private ahead: Token;

  constructor(private readonly lexer: Lexer) {
    this.ahead = lexer.next();
  }

  /** True when no token is left (before parsing: q is empty or blank). */
  get atEnd(): boolean {
    return this.ahead.kind === 'end';
  }

  parse(): Expr {
    const expr = this.expr();
    const t = this.peek();
    if (t.kind !== 'end') {
      const hint = t.kind === ')' ? ' (unbalanced parentheses)' : ' (expected AND, OR or the end of q)';
      throw qError(`unexpected ${describe(t)}${hint}`, t.pos);
    }
    return expr;
  }

  private peek(): Token {
    return this.ahead;
  }

  private next(): Token {
    const t = this.ahead;
    if (t.kind !== 'end') this.ahead = this.lexer.next();
    return t;
  }

  private isKeyword(k: Keyword, t = this.peek()): boolean {
    return t.kind === 'keyword' && t.keyword === k;
  }

  private enter(pos: number): void {
    if (++this.depth > MAX_Q_DEPTH) throw qError(`nesting deeper than ${MAX_Q_DEPTH} levels`, pos);
  }

  private expr(): Expr {
    const items = [this.and()];
    while (this.isKeyword('or')) {
      this.next();
      items.push(this.and());
    }
    return items.length === 1 ? items[0] : { kind: 'or', items };
  }

  private and(): Expr {
    const items = [this.unary()];
    while (this.isKeyword('and')) {
      this.next();
      items.push(this.unary());
    }
    return items.length === 1 ? items[0] : { kind: 'and', items };
  }

  private unary(): Expr {
    const t = this.peek();
    if (this.isKeyword('not')) {
      this.next();
      this.enter(t.pos);
      const item = this.unary();
      this.depth--;
      return { kind: 'not', item };
    }
    if (t.kind === '(') {
      this.next();
      this.enter(t.pos);
      if (this.peek().kind === ')') throw qError('empty parentheses', this.peek().pos);
      const inner = this.expr();
      const close = this.next();
      if (close.kind !== ')') {
        throw qError(
          `expected ')' to close the '(' at position ${t.pos}, found ${describe(close)}`,
          close.pos,
        );
      }
      this.depth--;
      return inner;
    }
    return this.predicate();
  }

  private predicate(): Expr {
    const t = this.next();
    if (t.kind !== 'name') {
      const what = t.kind === 'end' ? 'a condition' : 'an attribute name';
      throw qError(`expected ${what}, found ${describe(t)}`, t.pos);
    }
    const name: NameRef = { text: t.text, pos: t.pos };
    const op = this.next();
    if (op.kind === 'op') return { kind: 'compare', name, op: op.op, value: this.literal() };
    if (op.kind === 'keyword') {
      let negated = false;
      let kw = op;
      if (op.keyword === 'not') {
        negated = true;
        const after = this.next();
        if (after.kind !== 'keyword' || !['like', 'ilike', 'in'].includes(after.keyword)) {
          throw qError(`expected LIKE, ILIKE or IN after NOT, found ${describe(after)}`, after.pos);
        }
        kw = after;
      }
      switch (kw.keyword) {
        case 'like':
        case 'ilike':
          return {
            kind: 'like',
            name,
            negated,
            insensitive: kw.keyword === 'ilike',
            pattern: this.literal(),
          };
        case 'in':
          return { kind: 'in', name, negated, values: this.list() };
        case 'is': {
          const n = this.isKeyword('not') ? (this.next(), true) : false;
          const nul = this.next();
          if (!this.isKeyword('null', nul)) {
            throw qError(`expected NULL after IS${n ? ' NOT' : ''}, found ${describe(nul)}`, nul.pos);
          }
          return { kind: 'null', name, negated: n };
        }
        default:
          break; // any other keyword is not an operator: reported below
      }
    }
    throw qError(
      `expected an operator (= != <> < <= > >= LIKE ILIKE IN IS) after '${show(t.text)}', found ${describe(op)}`,
      op.pos,
    );
  }

  private list(): Literal[] {
    const open = this.next();
    if (open.kind !== '(') throw qError(`expected '(' after IN, found ${describe(open)}`, open.pos);
    const values = [this.literal()];
    for (;;) {
      const t = this.next();
      if (t.kind === ')') return values;
      if (t.kind !== ',') throw qError(`expected ',' or ')' in the IN list, found ${describe(t)}`, t.pos);
      values.push(this.literal());
    }
  }

  private literal(): Literal {
    const t = this.next();
    if (t.kind === 'string') return { kind: 'string', value: t.value, pos: t.pos };
    if (t.kind === 'number') return { kind: 'number', text: t.text, pos: t.pos };
    if (t.kind === 'keyword') {
      if (t.keyword === 'true' || t.keyword === 'false') {
        return { kind: 'boolean', value: t.keyword === 'true', pos: t.pos };
      }
      if (t.keyword === 'null') return { kind: 'null', pos: t.pos };
    }
    const hint = t.kind === 'name' ? ` (strings are written in single quotes: '${show(t.text)}')` : '';
    throw qError(`expected a value, found ${describe(t)}${hint}`, t.pos);
  }
}

/** Parses `q` into an expression tree, or returns undefined for an empty (or all-blank) `q`. */
export function parseQ(q: string): Expr | undefined {
  const parser = new Parser(new Lexer(q));
  return parser.atEnd ? undefined : parser.parse();
}
