import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap } from '../lib/api';
import { useApp } from './app-context';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
export interface CallInit {
  path?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
  /** A body sent as it is with this content type (a CSV upload) instead of JSON. */
  contentType?: string;
  /** How to read the answer (default JSON). */
  parseAs?: 'json' | 'text';
}

/** One call of the management (`identity`) or tree API through the SDK's client; throws GatehouseError. */
export function useCall() {
  const { api } = useApp();
  return async <T = unknown>(
    method: Method,
    url: string,
    init: CallInit = {},
    service: 'identity' | 'tree' = 'identity',
  ): Promise<T> => {
    const client = api[service] as unknown as Record<Method, (u: string, o: unknown) => Promise<never>>;
    const r = await client[method](url, {
      params: { path: init.path, query: init.query },
      ...(init.body !== undefined ? { body: init.body } : {}),
      ...(init.contentType
        ? { bodySerializer: (b: unknown) => b, headers: { 'content-type': init.contentType } }
        : {}),
      ...(init.parseAs ? { parseAs: init.parseAs } : {}),
    });
    return unwrap(r) as T;
  };
}

/** A GET of the management API, cached by TanStack Query under [url, init]. */
export function useGet<T = unknown>(
  url: string,
  init: CallInit = {},
  enabled = true,
  service: 'identity' | 'tree' = 'identity',
) {
  const call = useCall();
  return useQuery({
    queryKey: [service, url, init],
    queryFn: () => call<T>('GET', url, init, service),
    enabled,
  });
}

/** A change; on success every cached read is refetched (lists, counts, the record). */
export function useChange<A, R = unknown>(fn: (call: ReturnType<typeof useCall>, arg: A) => Promise<R>) {
  const call = useCall();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (arg: A) => fn(call, arg),
    // the instances probe of the layout (501 in single-instance mode) is not read again
    onSuccess: () => qc.invalidateQueries({ predicate: (q) => q.queryKey[1] !== '/api/v1/instances' }),
  });
}
