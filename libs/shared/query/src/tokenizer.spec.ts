import { tokenize } from './tokenizer.js';

describe('tokenize', () => {
  it('splits q into typed tokens with 1-based positions', () => {
    const tokens = tokenize(`a.b_1 >= -1.5 AND Name In ('x''y', 2) is NOT null`);
    expect(tokens.map((t) => [t.kind, t.text, t.pos])).toEqual([
      ['name', 'a.b_1', 1],
      ['op', '>=', 7],
      ['number', '-1.5', 10],
      ['keyword', 'AND', 15],
      ['name', 'Name', 19],
      ['keyword', 'In', 24],
      ['(', '(', 27],
      ['string', "'x''y'", 28],
      [',', ',', 34],
      ['number', '2', 36],
      [')', ')', 37],
      ['keyword', 'is', 39],
      ['keyword', 'NOT', 42],
      ['keyword', 'null', 46],
      ['end', '', 50],
    ]);
    expect(tokens[7]).toMatchObject({ kind: 'string', value: "x'y" });
    expect(tokens[3]).toMatchObject({ kind: 'keyword', keyword: 'and' });
  });

  it('reads every comparison operator', () => {
    expect(tokenize('= != <> < <= > >=').map((t) => t.text)).toEqual([
      '=',
      '!=',
      '<>',
      '<',
      '<=',
      '>',
      '>=',
      '',
    ]);
  });

  it('returns only the end token for blank input', () => {
    expect(tokenize(' \t\r\n')).toEqual([{ kind: 'end', text: '', pos: 5 }]);
  });
});
