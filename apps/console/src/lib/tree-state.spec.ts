import {
  addLevel,
  childAdded,
  emptyTree,
  keyAction,
  missingLevels,
  moreKey,
  moveNode,
  openPath,
  pathTo,
  removeNode,
  ROOT,
  setExpanded,
  visibleRows,
  type TreeNodeInfo,
  type TreeState,
} from './tree-state';

const n = (id: string, parentId: string | null, leaf = false): TreeNodeInfo => ({
  id,
  code: id.toUpperCase(),
  name: `Node ${id}`,
  leaf,
  parentId,
});

/** r ─ a ─ a1, a2 (leaves); r ─ b (leaf); the roots' level has a second page. */
function sample(): TreeState {
  let s = addLevel(emptyTree(), ROOT, [n('r', null)], { offset: 0, hasMore: false, total: 1 });
  s = setExpanded(s, 'r', false);
  s = addLevel(s, 'r', [n('a', 'r'), n('b', 'r', true)], { offset: 0, hasMore: false, total: 2 });
  s = addLevel(s, 'a', [n('a1', 'a', true), n('a2', 'a', true)], { offset: 0, hasMore: true, total: 5 });
  return s;
}
const keys = (s: TreeState) => visibleRows(s).map((r) => r.key);

describe('node tree state', () => {
  it('shows the roots, and the children of expanded nodes only, with their ARIA positions', () => {
    let s = sample();
    expect(keys(s)).toEqual(['r']);
    s = setExpanded(s, 'r', true);
    s = setExpanded(s, 'a', true);
    const rows = visibleRows(s);
    expect(rows.map((r) => r.key)).toEqual(['r', 'a', 'a1', 'a2', moreKey('a'), 'b']);
    expect(rows[2]).toMatchObject({ kind: 'node', level: 3, posinset: 1, setsize: 5 });
    expect(rows[4]).toMatchObject({ kind: 'more', parent: 'a', level: 3, left: 3 });
  });

  it('opens a lone root at once, and only at the first load', () => {
    const s = addLevel(emptyTree(), ROOT, [n('r', null)], { offset: 0, hasMore: false });
    expect(s.expanded.r).toBe(true);
    expect(missingLevels(s)).toEqual(['r']);
    const two = addLevel(emptyTree(), ROOT, [n('r', null), n('q', null)], { offset: 0, hasMore: false });
    expect(two.expanded).toEqual({});
    const again = addLevel(setExpanded(s, 'r', false), ROOT, [n('r', null)], { offset: 0, hasMore: false });
    expect(again.expanded.r).toBeUndefined();
  });

  it('asks for the levels that are shown but not fetched, and nothing under collapsed nodes', () => {
    expect(missingLevels(emptyTree())).toEqual([ROOT]);
    let s = addLevel(emptyTree(), ROOT, [n('r', null), n('q', null)], { offset: 0, hasMore: false });
    expect(missingLevels(s)).toEqual([]);
    s = setExpanded(s, 'q', true);
    expect(missingLevels(s)).toEqual(['q']);
    s = { ...s, loading: { q: true } };
    expect(missingLevels(s)).toEqual([]);
  });

  it('appends a later page and drops what it already has', () => {
    let s = sample();
    s = addLevel(s, 'a', [n('a2', 'a', true), n('a3', 'a', true)], { offset: 2, hasMore: false, total: 5 });
    expect(s.levels.a.ids).toEqual(['a1', 'a2', 'a3']);
    expect(s.levels.a.hasMore).toBe(false);
  });

  it('moves with the keys of a WAI-ARIA tree view', () => {
    let s: TreeState = { ...sample(), focus: 'r' };
    const press = (key: string) => {
      const a = keyAction(s, visibleRows(s), key);
      if (a.type === 'focus') s = { ...s, focus: a.key };
      if (a.type === 'expand') s = setExpanded(s, a.id, true);
      if (a.type === 'collapse') s = setExpanded(s, a.id, false);
      return a;
    };
    expect(press('ArrowRight')).toEqual({ type: 'expand', id: 'r' });
    expect(press('ArrowRight')).toEqual({ type: 'focus', key: 'a' });
    press('ArrowRight'); // expand a
    press('ArrowDown'); // a1
    expect(s.focus).toBe('a1');
    expect(press('ArrowRight')).toEqual({ type: 'none' }); // a leaf
    expect(press('ArrowLeft')).toEqual({ type: 'focus', key: 'a' }); // to the parent
    expect(press('ArrowLeft')).toEqual({ type: 'collapse', id: 'a' });
    expect(press('ArrowDown')).toEqual({ type: 'focus', key: 'b' });
    expect(press('ArrowDown')).toEqual({ type: 'none' }); // the last row
    expect(press('Home')).toEqual({ type: 'focus', key: 'r' });
    expect(press('ArrowUp')).toEqual({ type: 'none' });
    expect(press('End')).toEqual({ type: 'focus', key: 'b' });
    expect(press('Enter')).toEqual({ type: 'select', id: 'b' });
    s = setExpanded(s, 'a', true);
    s = { ...s, focus: moreKey('a') };
    expect(press('Enter')).toEqual({ type: 'more', parent: 'a' });
    expect(press('ArrowLeft')).toEqual({ type: 'focus', key: 'a' });
  });

  it('opens the way to a deep node: every ancestor expanded, the focus on it', () => {
    const s = openPath(sample(), ['r', 'a', 'a2']);
    expect(keys(s)).toEqual(['r', 'a', 'a1', 'a2', moreKey('a'), 'b']);
    expect(s.focus).toBe('a2');
    expect(pathTo(s, 'a2')).toEqual(['r', 'a', 'a2']);
  });

  it('after a move, fetches both levels again and shows the new parent expanded', () => {
    let s = openPath(sample(), ['r', 'a', 'a1']);
    s = moveNode(s, 'a1', 'b');
    expect(s.levels.a).toBeUndefined();
    expect(s.levels.b).toBeUndefined();
    expect(s.nodes.b.leaf).toBe(false);
    expect(s.expanded.b).toBe(true);
    expect(s.nodes.a1.parentId).toBe('b');
    expect(missingLevels(s).sort()).toEqual(['a', 'b']);
    // the level came back empty: the old parent is a leaf now
    s = addLevel(s, 'a', [], { offset: 0, hasMore: false, total: 0 });
    expect(s.nodes.a.leaf).toBe(true);
  });

  it('after a delete, the node leaves its level, the focus goes to its parent, a childless parent is a leaf', () => {
    let s = addLevel(openPath(sample(), ['r', 'b']), 'a', [n('a1', 'a', true)], {
      offset: 0,
      hasMore: false,
    });
    s = { ...s, focus: 'a1' };
    s = removeNode(s, 'a1');
    expect(s.levels.a.ids).toEqual([]);
    expect(s.nodes.a.leaf).toBe(true);
    expect(s.focus).toBe('a');
    expect(s.nodes.a1).toBeUndefined();
  });

  it('after a child is added, the parent is expanded and its level fetched again', () => {
    let s = sample();
    s = childAdded(s, 'b');
    expect(s.nodes.b.leaf).toBe(false);
    expect(s.expanded.b).toBe(true);
    s = childAdded(s, null);
    expect(s.levels[ROOT]).toBeUndefined();
  });
});
