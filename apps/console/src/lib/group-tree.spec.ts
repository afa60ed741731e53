import { groupForest } from './group-tree';

describe('groups drawn as a tree', () => {
  const g = (id: string) => ({ id, name: id.toUpperCase() });

  it('puts each group under its parents, roots first, by name', () => {
    const forest = groupForest(
      [g('b'), g('a'), g('c'), g('d')],
      [
        { parent: 'a', child: 'c' },
        { parent: 'c', child: 'd' },
        { parent: 'b', child: 'd' },
      ],
    );
    expect(forest.map((n) => n.id)).toEqual(['a', 'b']);
    expect(forest[0].children[0].id).toBe('c');
    expect(forest[0].children[0].children[0].id).toBe('d');
    expect(forest[1].children[0].id).toBe('d');
  });

  it('cuts a cycle instead of looping', () => {
    const forest = groupForest(
      [g('a'), g('b'), g('r')],
      [
        { parent: 'r', child: 'a' },
        { parent: 'a', child: 'b' },
        { parent: 'b', child: 'a' },
      ],
    );
    expect(forest).toHaveLength(1);
    expect(forest[0].children[0].children[0].children).toEqual([]);
  });
});
