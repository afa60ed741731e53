/** The tree manager's OpenAPI description: the decisions a client needs that the seed leaves open. */
export const TREE_API_DESCRIPTION = `
Versioned, translated hierarchies: trees, tree versions, tree nodes, translations, settings, health.

Every route needs \`Authorization: Bearer <access token>\` for audience \`urn:gatehouse:tree\`, validated through
the token server's \`/tokeninfo\` (cached no longer than the token lives): scope \`trees:read\` for GET,
\`trees:write\` for other tree operations, \`settings:write\` for PATCH /settings. A missing, malformed, expired or
revoked token is 401; a token for another audience or without the scope 403; token server unreachable (and the
token not cached) 503.

**Instances**: every tree (with its versions, nodes and translations) and the settings belong to an instance, the
instance of the client the token was issued to (\`instance_id\` and \`default_instance\` of \`/tokeninfo\`). A caller
sees and changes only its own instance's trees: another instance's tree is 404, as if it did not exist; tree codes
are unique within an instance, so two instances may use the same code; each instance has its own settings (an
instance that never set them has the defaults). A token whose \`/tokeninfo\` answer does not name its instance (a
token server without instances) is 401.

## Decisions

- **Default version**: creating a tree creates version \`v1\`. A version created without \`version\` gets the next
  free \`vN\`: one above the highest \`v<number>\` code in the tree. The only version of a tree cannot be deleted (409).
- **Root node**: every version contains at least one root node (document 3). A new version (\`v1\` of a new tree,
  or a created one) gets one: \`code\`, \`name\` and \`description\` of the tree at that moment, no metadata, and
  the tree's translations as the node's translations, so it reads in every language as the tree does; rename or
  translate it like any node. More roots may be added. The last root cannot be deleted (also not with
  \`cascade=true\`) nor moved under another node: 409 \`conflict\`. A CSV import with \`replace=true\` and no
  nodes is 400 and writes nothing. Clones copy the roots they find and add none.
- **Nodes**: a node without \`parent_id\` is a root (depth 0); otherwise depth = parent depth + 1. \`leaf\` is true
  exactly when the node has no children. \`parent_id\` of another version (or of no node) is 400. PATCH of
  \`parent_id\` moves the subtree (409 under itself or a descendant). Deleting a node with children is 409 unless
  \`?cascade=true\`. Deleting a tree or version deletes everything under it.
- **Clone**: tree clone copies every version (same version codes), node (same codes, new ids) and translation;
  version clone copies nodes and the translations of the version and its nodes; node clone copies the node and its
  translations, beside the original unless \`parent_id\` says otherwise; with \`?deep=true\` the subtree too, the
  copied descendants named \`<original code>-copy-<n>\` with the smallest n >= 1 for which all those codes are free.
- **Change code** renames and keeps everything attached (200 with the record).
- **Translations**: one per language (\`en_US\`, \`en_UK\`, \`mn_MN\`) and record; \`label_id\` is the translated
  record's id. Reads honour \`Accept-Language\` (\`mn-MN\`, \`mn_MN\`, q-values; \`en-GB\` means \`en_UK\`): the
  translated \`name\`/\`description\` replace the base ones where present. \`q\` and \`sort\` use the base values.
- **Embedding**: \`expand=all\` embeds at most 100 children per collection (versions of a tree, first nodes of a
  version depth-first, children of a node); when more exist, \`links.<collection>\` stays in the record.
- **Large trees**: nodes are stored with \`parent_id\` and a materialized path of version-local integer labels; a
  subtree is one index range, moves rewrite the path prefix in one statement under a per-version lock, so
  concurrent moves can never create a cycle. Each version's nodes are a partition of their own: cloning a version
  builds the copy's partition and its indexes in bulk, and deleting a version drops its partition.
  \`GET .../nodes/{id}/descendants\` pages a subtree depth-first, or streams all of it as NDJSON with
  \`Accept: application/x-ndjson\`.
- **CSV exchange**: \`GET .../versions/{v}/export\` and \`POST .../versions/{v}/import\` (\`text/csv\`), see there.
`;
