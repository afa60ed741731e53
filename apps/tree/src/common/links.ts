export const API_PREFIX = '/api/v1';

const seg = (s: string) => encodeURIComponent(s);

export const treePath = (treeCode: string) => `${API_PREFIX}/trees/${seg(treeCode)}`;
export const versionPath = (treeCode: string, version: string) =>
  `${treePath(treeCode)}/versions/${seg(version)}`;
export const nodePath = (treeCode: string, version: string, nodeId: string) =>
  `${versionPath(treeCode, version)}/nodes/${nodeId}`;
