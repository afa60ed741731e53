import { parse } from 'csv-parse/sync';
import { csvLine } from './csv-format.js';

describe('csvLine', () => {
  it('quotes exactly the fields RFC 4180 needs quoted, and reads back as written', () => {
    const fields = ['plain', '', 'a,b', 'say "hi"', 'two\nlines', 'cr\r', ' spaced ', 'Би', null];
    const line = csvLine(fields);
    expect(line).toBe('plain,,"a,b","say ""hi""","two\nlines","cr\r", spaced ,Би,\n');
    expect(parse(line)).toEqual([fields.map((f) => f ?? '')]);
  });
});
