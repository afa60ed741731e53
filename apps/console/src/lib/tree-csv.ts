/**
 * CSV import and export of a tree version through the tree service's own endpoints
 * (`POST .../versions/:tree_version/import`, `GET .../export`). The upload's progress comes from an
 * XMLHttpRequest-backed fetch handed to the SDK for that one request (fetch itself reports no upload progress);
 * the server parses the body as it arrives and answers once the whole import is committed.
 */

export type ImportPhase = 'idle' | 'uploading' | 'processing' | 'done' | 'failed';

export interface ImportProgress {
  phase: ImportPhase;
  /** Bytes sent so far and in all. */
  sent: number;
  total: number;
}

export const idleProgress: ImportProgress = { phase: 'idle', sent: 0, total: 0 };

/** The next progress after `sent` of `total` bytes went out: all sent means the server is working on it. */
export function uploadProgress(p: ImportProgress, sent: number, total: number): ImportProgress {
  const t = total > 0 ? total : p.total;
  const s = Math.min(Math.max(sent, p.sent), t || sent);
  return { phase: t > 0 && s >= t ? 'processing' : 'uploading', sent: s, total: t };
}

/** Percent shown by the progress bar (0 to 100, whole numbers): the upload is 95 %, the server's answer the rest. */
export function percent(p: ImportProgress): number {
  switch (p.phase) {
    case 'idle':
      return 0;
    case 'done':
      return 100;
    case 'failed':
    case 'uploading':
    case 'processing':
      return p.total > 0 ? Math.min(95, Math.floor((p.sent / p.total) * 95)) : 0;
  }
}

/** Data lines of a CSV text (records, so a quoted field holding a line break counts once); the header excluded. */
export function csvRecordCount(text: string): number {
  let records = 0;
  let quoted = false;
  let content = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    if (!quoted && (c === '\n' || c === '\r')) {
      if (content) records++;
      content = false;
      if (c === '\r' && text[i + 1] === '\n') i++;
    } else if (c !== '\uFEFF') {
      content = true;
    }
  }
  if (content) records++;
  return Math.max(0, records - 1);
}

/** The file name a download of the export gets. */
export const exportFileName = (treeCode: string, version: string): string =>
  `${treeCode}-${version}.csv`.replace(/[\\/:*?"<>|]+/g, '_');

/**
 * A fetch for one request, made with XMLHttpRequest so that the upload reports its progress. The SDK's middleware
 * has already set the Authorization header on `request`.
 */
export function progressFetch(onProgress: (sent: number, total: number) => void) {
  return async (request: Request): Promise<Response> => {
    const body = request.method === 'GET' || request.method === 'HEAD' ? null : await request.blob();
    return new Promise<Response>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(request.method, request.url);
      request.headers.forEach((value, name) => xhr.setRequestHeader(name, value));
      xhr.responseType = 'blob';
      xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : (body?.size ?? 0));
      xhr.onload = () => {
        const headers = new Headers();
        for (const line of xhr
          .getAllResponseHeaders()
          .trim()
          .split(/[\r\n]+/)) {
          const at = line.indexOf(':');
          if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
        }
        const empty = xhr.status === 204 || xhr.status === 205 || xhr.status === 304;
        resolve(new Response(empty ? null : (xhr.response as Blob), { status: xhr.status, headers }));
      };
      xhr.onerror = () => reject(new TypeError('Network request failed'));
      xhr.onabort = () => reject(new DOMException('Aborted', 'AbortError'));
      request.signal.addEventListener('abort', () => xhr.abort());
      xhr.send(body);
    });
  };
}
