import { useEffect, useRef, useState, type DragEvent, type KeyboardEvent } from 'react';
import {
  keyAction,
  moreKey,
  ROOT,
  setExpanded,
  visibleRows,
  type TreeRow,
  type TreeState,
} from '../../lib/tree-state';
import { useT } from '../../ui/app-context';

const DRAG_TYPE = 'application/x-gatehouse-node';

/**
 * The node tree of a version, a WAI-ARIA tree view: one focusable row (roving tabindex), arrow keys move, expand
 * and collapse, Home/End, Enter selects (or loads the next page on a "more" row). A collapsed node's children are
 * fetched when it is first expanded (`onNeedLevel`, by the page). Rows can be dragged onto another row (move under
 * it) or onto the roots' drop zone (make it a root).
 */
export function NodeTree({
  state,
  setState,
  selected,
  onSelect,
  onLoadMore,
  onMove,
  canMove,
  label,
}: {
  state: TreeState;
  setState(f: (s: TreeState) => TreeState): void;
  selected?: string;
  onSelect(id: string): void;
  onLoadMore(parent: string): void;
  onMove(id: string, parent: string | null): void;
  canMove: boolean;
  label: string;
}) {
  const t = useT();
  const rows = visibleRows(state);
  const ref = useRef<HTMLUListElement>(null);
  const [dropTarget, setDropTarget] = useState<string>();
  const [focusWanted, setFocusWanted] = useState(false);

  // the focused row takes the DOM focus when the keyboard moved it
  useEffect(() => {
    if (!focusWanted || !state.focus) return;
    const el = ref.current?.querySelector<HTMLElement>(`[data-key="${CSS.escape(state.focus)}"]`);
    el?.focus();
    setFocusWanted(false);
  }, [focusWanted, state.focus, rows.length]);

  const toggle = (row: Extract<TreeRow, { kind: 'node' }>) =>
    setState((s) => setExpanded({ ...s, focus: row.id }, row.id, !row.expanded));

  const onKeyDown = (e: KeyboardEvent<HTMLUListElement>) => {
    const action = keyAction(state, rows, e.key);
    if (action.type === 'none') return;
    e.preventDefault();
    switch (action.type) {
      case 'focus':
        setState((s) => ({ ...s, focus: action.key }));
        setFocusWanted(true);
        break;
      case 'expand':
        setState((s) => setExpanded(s, action.id, true));
        break;
      case 'collapse':
        setState((s) => setExpanded(s, action.id, false));
        break;
      case 'select':
        onSelect(action.id);
        break;
      case 'more':
        onLoadMore(action.parent);
        break;
    }
  };

  const dragStart = (e: DragEvent, id: string) => {
    e.dataTransfer.setData(DRAG_TYPE, id);
    e.dataTransfer.setData('text/plain', id);
    e.dataTransfer.effectAllowed = 'move';
  };
  const dragOver = (e: DragEvent, target: string) => {
    if (!canMove || !e.dataTransfer.types.includes(DRAG_TYPE)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'move';
    setDropTarget(target);
  };
  const drop = (e: DragEvent, parent: string | null) => {
    const id = e.dataTransfer.getData(DRAG_TYPE);
    setDropTarget(undefined);
    if (!id || id === parent) return;
    e.preventDefault();
    onMove(id, parent);
  };

  const focusKey = state.focus && rows.some((r) => r.key === state.focus) ? state.focus : rows[0]?.key;
  return (
    <div className="node-tree">
      <ul
        role="tree"
        aria-label={label}
        ref={ref}
        onKeyDown={onKeyDown}
        id="node-tree"
        aria-busy={state.loading[ROOT] ? true : undefined}
      >
        {rows.map((row) =>
          row.kind === 'node' ? (
            <li
              key={row.key}
              role="treeitem"
              data-key={row.key}
              data-code={row.node.code}
              data-parent={row.node.parentId ?? ''}
              aria-level={row.level}
              aria-posinset={row.posinset}
              aria-setsize={row.setsize}
              aria-expanded={row.node.leaf ? undefined : row.expanded}
              aria-selected={row.id === selected}
              aria-busy={row.loading || undefined}
              tabIndex={row.key === focusKey ? 0 : -1}
              className={[
                'node-row',
                row.id === selected ? 'selected' : '',
                dropTarget === row.id ? 'drop-target' : '',
              ].join(' ')}
              style={{ paddingLeft: `${(row.level - 1) * 1.25 + 0.25}rem` }}
              draggable={canMove}
              onDragStart={(e) => dragStart(e, row.id)}
              onDragOver={(e) => dragOver(e, row.id)}
              onDragLeave={() => setDropTarget(undefined)}
              onDrop={(e) => drop(e, row.id)}
              onFocus={() => state.focus !== row.key && setState((s) => ({ ...s, focus: row.key }))}
              onClick={() => {
                setState((s) => ({ ...s, focus: row.key }));
                onSelect(row.id);
              }}
            >
              <span
                className="twisty"
                aria-hidden="true"
                onClick={(e) => {
                  e.stopPropagation();
                  if (!row.node.leaf) toggle(row);
                }}
              >
                {row.node.leaf ? '' : row.loading ? '…' : row.expanded ? '▾' : '▸'}
              </span>
              <span className="node-name">{row.node.name}</span>{' '}
              <code className="node-code">{row.node.code}</code>
            </li>
          ) : (
            <li
              key={row.key}
              role="treeitem"
              data-key={row.key}
              aria-level={row.level}
              aria-busy={row.loading || undefined}
              aria-selected={false}
              tabIndex={row.key === focusKey ? 0 : -1}
              className="node-row more-row"
              style={{ paddingLeft: `${(row.level - 1) * 1.25 + 1.5}rem` }}
              onFocus={() =>
                state.focus !== row.key && setState((s) => ({ ...s, focus: moreKey(row.parent) }))
              }
              onClick={() => onLoadMore(row.parent)}
            >
              {row.loading
                ? t('loading')
                : row.left !== undefined
                  ? t('nodeMoreLeft', { n: row.left })
                  : t('nodeMore')}
            </li>
          ),
        )}
      </ul>
      {canMove ? (
        <div
          className={`root-drop${dropTarget === ROOT ? ' drop-target' : ''}`}
          id="root-drop"
          onDragOver={(e) => dragOver(e, ROOT)}
          onDragLeave={() => setDropTarget(undefined)}
          onDrop={(e) => drop(e, null)}
        >
          {t('nodeDropRoot')}
        </div>
      ) : null}
    </div>
  );
}
