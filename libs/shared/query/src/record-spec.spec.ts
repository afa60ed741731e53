import { clients } from '../test/fixtures.js';
import { type AttributeSpec, defineRecord } from './record-spec.js';

const attr = (name: string, extra: Partial<AttributeSpec> = {}): AttributeSpec => ({
  name,
  column: `t.${name}`,
  type: 'string',
  ...extra,
});

describe('defineRecord', () => {
  it('fills defaults and derives v2 names', () => {
    const name = clients.attribute('client_name', 'v1')!;
    expect(name).toMatchObject({
      filter: true,
      sort: true,
      select: true,
      v2Name: 'clientName',
      opaque: false,
    });
    const meta = clients.attribute('client_metadata', 'v1')!;
    expect(meta).toMatchObject({ sort: false, opaque: false, v2Name: 'clientMetadata' });
    expect(clients.attribute('metadata', 'v1')!.opaque).toBe(true);
    expect(clients.idAttribute?.column).toBe('c.id');
    expect(clients.opaqueKeys).toEqual(['metadata']);
    expect(Object.isFrozen(clients)).toBe(true);
  });

  it('resolves names per presentation', () => {
    expect(clients.attribute('clientName', 'v1')).toBeUndefined();
    expect(clients.attribute('clientName', 'v2')?.name).toBe('client_name');
    expect(clients.attribute('client_name', 'v2')?.name).toBe('client_name');
    expect(clients.attribute('resources', 'v1')).toBeUndefined();
    expect(clients.field('resources', 'v1')).toBe('resources');
    expect(clients.field('aggregates', 'v2')).toBe('aggregations');
    expect(clients.field('aggregations', 'v2')).toBe('aggregations');
    expect(clients.field('aggregates', 'v1')).toBeUndefined();
    expect(clients.field('constructor', 'v1')).toBeUndefined();
    expect(clients.present('aggregations', 'v2')).toBe('aggregates');
    expect(clients.present('client_name', 'v2')).toBe('clientName');
    expect(clients.present('client_name', 'v1')).toBe('client_name');
  });

  it('honours an explicit v2 name', () => {
    const spec = defineRecord({
      name: 'user',
      attributes: [attr('id'), attr('user_fullName', { v2Name: 'fullName' })],
    });
    expect(spec.attribute('fullName', 'v2')?.name).toBe('user_fullName');
    expect(spec.attribute('userFullName', 'v2')).toBeUndefined();
  });

  it.each([
    ['no attributes', { name: 'x', attributes: [] }, /non-empty/],
    ['bad name', { name: 'x', attributes: [attr('bad-name')] }, /invalid attribute name/],
    ['dotted name', { name: 'x', attributes: [attr('a.b')] }, /invalid attribute name/],
    ['keyword name', { name: 'x', attributes: [attr('NOT')] }, /is a q keyword/],
    ['duplicate', { name: 'x', attributes: [attr('a'), attr('a')] }, /duplicate name a/],
    ['child clash', { name: 'x', attributes: [attr('a')], children: ['a'] }, /duplicate name a/],
    ['v2 clash', { name: 'x', attributes: [attr('a_b'), attr('aB')] }, /v2 name aB of a_b collides with aB/],
    ['unknown type', { name: 'x', attributes: [attr('a', { type: 'date' as never })] }, /unknown type date/],
    ['empty column', { name: 'x', attributes: [attr('a', { column: ' ' })] }, /plain SQL column/],
    [
      'column with comment',
      { name: 'x', attributes: [attr('a', { column: 't.a -- x' })] },
      /plain SQL column/,
    ],
  ])('rejects a spec with %s', (_label, input, message) => {
    expect(() => defineRecord(input)).toThrow(message);
  });
});
