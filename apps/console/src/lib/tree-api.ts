import type { Client, TreeComponents, TreePaths } from '@gatehouse/sdk';
import { unwrap } from './api';
import { progressFetch } from './tree-csv';
import { ROOT, type TreeNodeInfo } from './tree-state';

/**
 * The tree manager's calls as the console's tree pages make them, through the SDK's typed tree client
 * (openapi-fetch, typed from the tree service's OpenAPI document). Every failure is a GatehouseError carrying the
 * API's error object.
 */
type S = TreeComponents['schemas'];
export type Tree = S['TreeDoc'];
export type Version = S['VersionDoc'];
export type TreeNode = S['NodeDoc'];
export type Translation = S['TranslationDoc'];
export type Language = Translation['language'];
export const LANGUAGES: readonly Language[] = ['en_US', 'en_UK', 'mn_MN'];

export interface Page<T> {
  items: T[];
  count: number;
  has_more: boolean;
  limit: number;
  offset: number;
  total_count?: number;
}

/** Children per page of a level (the API serves at most 100 a page). */
export const LEVEL_PAGE = 100;
/** The attributes a row of the node tree needs (no aggregations: nothing counted per row). */
const ROW_FIELDS = 'id,code,name,leaf,parent_id';

/**
 * The console edits base names and descriptions: `Accept-Language: *` asks for them (the browser's own language would
 * have the tree service put a translation in their place, which a rename would then write back as the base name).
 */
const BASE = { 'accept-language': '*' };

/** A where clause literal: 'single-quoted', '' escaping a quote (API.md, `q`). */
export const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

export const toInfo = (n: Pick<TreeNode, 'id' | 'code' | 'name' | 'leaf' | 'parent_id'>): TreeNodeInfo => ({
  id: n.id,
  code: n.code,
  name: n.name,
  leaf: n.leaf,
  parentId: n.parent_id,
});

export class TreeApi {
  constructor(private readonly c: Client<TreePaths>) {}

  // ------------------------------------------------------------------------------------------- trees
  async trees(query: { q?: string; offset: number; limit: number }) {
    const r = await this.c.GET('/api/v1/trees', {
      headers: BASE,
      params: { query: { ...query, total_count: true, sort: 'code:asc' } },
    });
    return unwrap(r) as unknown as Page<Tree>;
  }
  async tree(code: string) {
    return unwrap(
      await this.c.GET('/api/v1/trees/{tree_code}', { headers: BASE, params: { path: { tree_code: code } } }),
    );
  }
  async createTree(body: S['CreateTreeDto']) {
    return unwrap(await this.c.POST('/api/v1/trees', { headers: BASE, body }));
  }
  async updateTree(code: string, body: S['UpdateTreeDto']) {
    return unwrap(
      await this.c.PATCH('/api/v1/trees/{tree_code}', {
        headers: BASE,
        params: { path: { tree_code: code } },
        body,
      }),
    );
  }
  async deleteTree(code: string) {
    unwrap(
      await this.c.DELETE('/api/v1/trees/{tree_code}', {
        headers: BASE,
        params: { path: { tree_code: code } },
      }),
    );
  }
  async changeTreeCode(code: string, newCode: string) {
    return unwrap(
      await this.c.POST('/api/v1/trees/{tree_code}/change-code', {
        headers: BASE,
        params: { path: { tree_code: code } },
        body: { new_code: newCode },
      }),
    ) as unknown as Tree;
  }

  // ---------------------------------------------------------------------------------------- versions
  async versions(code: string) {
    const r = await this.c.GET('/api/v1/trees/{tree_code}/versions', {
      headers: BASE,
      params: { path: { tree_code: code }, query: { limit: 100 } },
    });
    return unwrap(r) as unknown as Page<Version>;
  }
  async version(code: string, version: string) {
    return unwrap(
      await this.c.GET('/api/v1/trees/{tree_code}/versions/{tree_version}', {
        headers: BASE,
        params: { path: { tree_code: code, tree_version: version } },
      }),
    );
  }
  async createVersion(code: string, body: S['CreateVersionDto']) {
    return unwrap(
      await this.c.POST('/api/v1/trees/{tree_code}/versions', {
        headers: BASE,
        params: { path: { tree_code: code } },
        body,
      }),
    );
  }
  async updateVersion(code: string, version: string, body: S['UpdateVersionDto']) {
    return unwrap(
      await this.c.PATCH('/api/v1/trees/{tree_code}/versions/{tree_version}', {
        headers: BASE,
        params: { path: { tree_code: code, tree_version: version } },
        body,
      }),
    );
  }
  async deleteVersion(code: string, version: string) {
    unwrap(
      await this.c.DELETE('/api/v1/trees/{tree_code}/versions/{tree_version}', {
        headers: BASE,
        params: { path: { tree_code: code, tree_version: version } },
      }),
    );
  }
  async cloneVersion(code: string, version: string, body: S['CloneVersionDto']) {
    return unwrap(
      await this.c.POST('/api/v1/trees/{tree_code}/versions/{tree_version}/clone', {
        headers: BASE,
        params: { path: { tree_code: code, tree_version: version } },
        body,
      }),
    ) as unknown as Version;
  }
  async changeVersionCode(code: string, version: string, newVersion: string) {
    return unwrap(
      await this.c.POST('/api/v1/trees/{tree_code}/versions/{tree_version}/change-code', {
        headers: BASE,
        params: { path: { tree_code: code, tree_version: version } },
        body: { new_version: newVersion },
      }),
    ) as unknown as Version;
  }

  // ------------------------------------------------------------------------------------------- nodes
  /** One page of a level: the roots (`ROOT`) or a node's children, in the API's order (creation order). */
  async level(code: string, version: string, parent: string, offset = 0) {
    const r = await this.c.GET('/api/v1/trees/{tree_code}/versions/{tree_version}/nodes', {
      headers: BASE,
      params: {
        path: { tree_code: code, tree_version: version },
        query: {
          q: parent === ROOT ? 'parent_id is null' : `parent_id = ${literal(parent)}`,
          fields: ROW_FIELDS,
          offset,
          limit: LEVEL_PAGE,
          total_count: offset === 0,
        },
      },
    });
    return unwrap(r) as unknown as Page<TreeNode>;
  }
  /** Nodes whose code or name holds `text` (the first 20), the node coded exactly `text` first. */
  async search(code: string, version: string, text: string) {
    const like = literal(`%${text.replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
    const find = async (q: string) =>
      unwrap(
        await this.c.GET('/api/v1/trees/{tree_code}/versions/{tree_version}/nodes', {
          headers: BASE,
          params: {
            path: { tree_code: code, tree_version: version },
            query: { q, fields: ROW_FIELDS + ',depth', limit: 20 },
          },
        }),
      ) as unknown as Page<TreeNode>;
    // the exact code reads one row by its unique index; the pattern may have to look at every node
    const [exact, some] = await Promise.all([
      find(`code = ${literal(text)}`),
      find(`code ilike ${like} or name ilike ${like}`),
    ]);
    const items = [...exact.items, ...some.items.filter((x) => !exact.items.some((e) => e.id === x.id))];
    return { ...some, items: items.slice(0, 20), count: Math.min(items.length, 20) };
  }
  async node(code: string, version: string, id: string) {
    return unwrap(
      await this.c.GET('/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}', {
        headers: BASE,
        params: { path: { tree_code: code, tree_version: version, tree_node_id: id } },
      }),
    );
  }
  /** One node with only what a row of the node tree shows (a step of the walk up to the root). */
  async nodeRow(code: string, version: string, id: string): Promise<TreeNodeInfo> {
    const r = await this.c.GET('/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}', {
      headers: BASE,
      params: {
        path: { tree_code: code, tree_version: version, tree_node_id: id },
        query: { fields: ROW_FIELDS },
      },
    });
    return toInfo(unwrap(r) as unknown as TreeNode);
  }
  /** How many nodes are below `id` (its subtree without itself). */
  async subtreeSize(code: string, version: string, id: string): Promise<number> {
    const r = await this.c.GET(
      '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}/descendants',
      {
        headers: BASE,
        params: {
          path: { tree_code: code, tree_version: version, tree_node_id: id },
          query: { fields: 'id', limit: 1, total_count: true },
        },
      },
    );
    return (unwrap(r) as unknown as Page<unknown>).total_count ?? 0;
  }
  async createNode(code: string, version: string, body: S['CreateNodeDto']) {
    return unwrap(
      await this.c.POST('/api/v1/trees/{tree_code}/versions/{tree_version}/nodes', {
        headers: BASE,
        params: { path: { tree_code: code, tree_version: version } },
        body,
      }),
    );
  }
  async updateNode(code: string, version: string, id: string, body: S['UpdateNodeDto']) {
    return unwrap(
      await this.c.PATCH('/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}', {
        headers: BASE,
        params: { path: { tree_code: code, tree_version: version, tree_node_id: id } },
        body,
      }),
    );
  }
  async deleteNode(code: string, version: string, id: string, cascade: boolean) {
    unwrap(
      await this.c.DELETE('/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}', {
        headers: BASE,
        params: {
          path: { tree_code: code, tree_version: version, tree_node_id: id },
          query: { cascade },
        } as never,
      }),
    );
  }

  // ------------------------------------------------------------------------------------ translations
  async translations(code: string, version: string, id: string) {
    const r = await this.c.GET(
      '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}/translations',
      {
        headers: BASE,
        params: { path: { tree_code: code, tree_version: version, tree_node_id: id }, query: { limit: 100 } },
      },
    );
    return unwrap(r) as unknown as Page<Translation>;
  }
  async addTranslation(
    code: string,
    version: string,
    id: string,
    body: { language: Language; name?: string; description?: string | null },
  ) {
    return unwrap(
      await this.c.POST(
        '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}/translations',
        {
          headers: BASE,
          params: { path: { tree_code: code, tree_version: version, tree_node_id: id } },
          body: body as never,
        },
      ),
    );
  }
  async updateTranslation(
    code: string,
    version: string,
    id: string,
    language: Language,
    body: { name?: string; description?: string | null },
  ) {
    return unwrap(
      await this.c.PATCH(
        '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}/translations/{language}',
        {
          headers: BASE,
          params: { path: { tree_code: code, tree_version: version, tree_node_id: id, language } },
          body: body as never,
        },
      ),
    );
  }
  async deleteTranslation(code: string, version: string, id: string, language: Language) {
    unwrap(
      await this.c.DELETE(
        '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}/translations/{language}',
        {
          headers: BASE,
          params: { path: { tree_code: code, tree_version: version, tree_node_id: id, language } },
        },
      ),
    );
  }

  // --------------------------------------------------------------------------------------------- CSV
  /** The version as CSV text, as the service exports it. */
  async exportCsv(code: string, version: string): Promise<string> {
    const r = await this.c.GET('/api/v1/trees/{tree_code}/versions/{tree_version}/export', {
      headers: BASE,
      params: { path: { tree_code: code, tree_version: version } },
      parseAs: 'text',
    });
    return unwrap(r) as unknown as string;
  }
  /** Uploads a CSV file, reporting the bytes sent; answers `{imported, replaced, nodes}`. */
  async importCsv(
    code: string,
    version: string,
    file: Blob,
    replace: boolean,
    onProgress: (sent: number, total: number) => void,
  ) {
    const r = await this.c.POST('/api/v1/trees/{tree_code}/versions/{tree_version}/import', {
      params: { path: { tree_code: code, tree_version: version }, query: { replace } } as never,
      body: file as never,
      bodySerializer: (b: unknown) => b as Blob,
      headers: { ...BASE, 'content-type': 'text/csv' },
      fetch: progressFetch(onProgress),
    });
    return unwrap(r) as unknown as S['ImportResultDoc'];
  }
}
