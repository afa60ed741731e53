import type { Client, TreePaths } from '@gatehouse/sdk';
import { useQueryClient } from '@tanstack/react-query';
import { useMemo } from 'react';
import { TreeApi } from '../../lib/tree-api';
import { useApp } from '../../ui/app-context';
import './tree.css';

/** The tree manager's calls, through the SDK's tree client of the signed-in administrator. */
export function useTreeApi(): TreeApi {
  const { api } = useApp();
  return useMemo(() => new TreeApi(api.tree as unknown as Client<TreePaths>), [api]);
}

/** Query keys of the tree pages all start with this (a write refetches them all). */
export const TREE_KEY = 'tree-pages';

/** After a write: every cached read of the tree pages is fetched again. */
export function useTreeRefresh() {
  const qc = useQueryClient();
  return () => qc.invalidateQueries({ queryKey: [TREE_KEY] });
}

/** An optional text field of a form: null when left empty. */
export const optional = (d: FormData, name: string): string | null => {
  const v = String(d.get(name) ?? '').trim();
  return v === '' ? null : v;
};
