import * as oidc from 'openid-client';
import type { Management } from './management-harness.js';
import { uniq } from './management-harness.js';

/** A ticket page as a browser without script sees it: status, headers, HTML, the CSRF cookie and hidden fields. */
export interface TicketPage {
  status: number;
  html: string;
  headers: Headers;
  cookie?: string;
  csrf?: string;
  ticket?: string;
  action?: string;
}

const hidden = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]?.replace(/&amp;/g, '&');

/** GET a ticket link (or any page of the token server). */
export async function openTicket(url: string, headers: Record<string, string> = {}): Promise<TicketPage> {
  const res = await fetch(url, { redirect: 'manual', headers });
  const html = await res.text();
  const setCookie = res.headers.get('set-cookie') ?? '';
  return {
    status: res.status,
    html,
    headers: res.headers,
    cookie: /^([^;]+)/.exec(setCookie)?.[1],
    csrf: hidden(html, 'csrf'),
    ticket: hidden(html, 'ticket'),
    action: /<form method="post" action="([^"]+)"/.exec(html)?.[1],
  };
}

/** Submit a ticket page's form (its cookie, csrf and ticket unless overridden) with `fields`. */
export async function submitTicket(
  base: string,
  page: TicketPage,
  fields: Record<string, string>,
  opts: { cookie?: string } = {},
): Promise<{ status: number; html: string; location: string | null; headers: Headers }> {
  const res = await fetch(`${base}${page.action}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...((opts.cookie ?? page.cookie) ? { cookie: opts.cookie ?? page.cookie! } : {}),
    },
    body: new URLSearchParams({ csrf: page.csrf ?? '', ticket: page.ticket ?? '', ...fields }).toString(),
  });
  return {
    status: res.status,
    html: await res.text(),
    location: res.headers.get('location'),
    headers: res.headers,
  };
}

/** A client of the default instance allowed the password grant (and refresh tokens) on a new API. */
export async function passwordClient(m: Management) {
  const identifier = `https://${uniq('api')}.test`;
  const api = (
    await m
      .call('post', '/api/v1/resources')
      .send({
        resource_type: 'api',
        resource_name: uniq('Api'),
        resource_metadata: { identifier_url: identifier },
      })
      .expect(201)
  ).body as { id: string };
  const scope = (
    await m.call('post', `/api/v1/resources/${api.id}/scopes`).send({ scope_name: 'things:read' }).expect(201)
  ).body as { id: string };
  const c = (
    await m
      .call('post', '/api/v2/clients')
      .send({ client_name: uniq('app'), client_metadata: { grant_types: ['password', 'refresh_token'] } })
      .expect(201)
  ).body as { id: string; client_secret: string };
  await m
    .call('post', `/api/v1/clients/${c.id}/resources`)
    .send({ resources: [api.id] })
    .expect(204);
  await m
    .call('post', `/api/v1/clients/${c.id}/permissions`)
    .send({ permissions: [{ resource_id: api.id, scopes: [scope.id] }] })
    .expect(204);
  const config = await m.oidcConfig(c.id, c.client_secret);
  return {
    id: c.id,
    secret: c.client_secret,
    identifier,
    config,
    /** The password grant (with offline_access: a refresh token too). */
    login: (username: string, password: string) =>
      oidc.genericGrantRequest(config, 'password', {
        username,
        password,
        resource: identifier,
        scope: 'offline_access',
      }),
  };
}

/** The OAuth error of a failed openid-client call. */
export async function oauthError(p: Promise<unknown>): Promise<{ error?: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as { error?: string; cause?: unknown },
  );
  if (!err) throw new Error('expected an OAuth error');
  if (err.error) return err;
  const cause = err.cause as { parameters?: { error?: string } }[] | Response | undefined;
  if (Array.isArray(cause)) return { error: cause[0]?.parameters?.error };
  if (cause instanceof Response) return (await cause.json()) as { error?: string };
  return err;
}
