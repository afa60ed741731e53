import { embedChildren, groupByParent } from './embed.js';

describe('groupByParent', () => {
  const rows = [
    { owner: 'a', n: 1 },
    { owner: 'b', n: 2 },
    { owner: 'a', n: 3 },
  ];

  it('groups rows by parent in row order, mapping each row once', () => {
    let calls = 0;
    const groups = groupByParent(
      rows,
      (r) => r.owner,
      (r) => (calls++, r.n),
    );
    expect([...groups]).toEqual([
      ['a', [1, 3]],
      ['b', [2]],
    ]);
    expect(calls).toBe(3);
  });

  it('gives every named parent an entry, in the order named', () => {
    const groups = groupByParent(rows, (r) => r.owner, undefined, ['c', 'b', 'a']);
    expect([...groups.keys()]).toEqual(['c', 'b', 'a']);
    expect(groups.get('c')).toEqual([]);
    expect(groups.get('a')).toEqual([rows[0], rows[2]]);
  });
});

describe('embedChildren', () => {
  it('sets the field of each parent, an empty list when it has no children', () => {
    const parents: { id: string; kids?: number[] }[] = [{ id: 'a' }, { id: 'b' }];
    embedChildren(parents, 'kids', new Map([['a', [1, 2]]]));
    expect(parents).toEqual([
      { id: 'a', kids: [1, 2] },
      { id: 'b', kids: [] },
    ]);
  });
});
