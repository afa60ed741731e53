/** Audience of the tree API in the token server. */
export const TREE_AUDIENCE = 'urn:gatehouse:tree';

/** Scope of every GET. */
export const READ = 'trees:read';
/** Scope of every other tree operation. */
export const WRITE = 'trees:write';
/** Scope of updating settings. */
export const SETTINGS_WRITE = 'settings:write';
