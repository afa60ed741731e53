/**
 * A browser's HTTP side for tests of the pages: cookies kept (per test, one jar), `Accept: text/html`, redirects
 * followed while they stay on the token server; a redirect elsewhere (the client's callback) ends the walk.
 */
export class BrowserAgent {
  private readonly cookies = new Map<string, string>();

  constructor(
    private readonly origin: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  async request(url: string, form?: Record<string, string>): Promise<Response> {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        accept: 'text/html',
        ...this.headers,
        ...(this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const [k, ...v] = pair.split('=');
      const value = v.join('=');
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(c) || value === '') this.cookies.delete(k);
      else this.cookies.set(k, value);
    }
    return res;
  }

  /**
   * GET `url` (or POST `form` to it) and follow redirects on the token server. `url` is where the walk ended: the
   * last page's address, or the first address off the token server; `html` is the last page (empty after leaving).
   */
  async follow(
    url: string,
    form?: Record<string, string>,
  ): Promise<{ res: Response; url: string; html: string }> {
    let res = await this.request(url, form);
    let at = url;
    for (let i = 0; i < 12 && res.status >= 300 && res.status < 400; i++) {
      const next = new URL(res.headers.get('location')!, at).toString();
      if (!next.startsWith(this.origin)) return { res, url: next, html: '' };
      at = next;
      res = await this.request(next);
    }
    return { res, url: at, html: await res.text() };
  }
}

/** The value of a hidden form field of a page. */
export const fieldOf = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

/** The action of a page's first POST form, as an absolute URL. */
export const actionOf = (html: string, base: string) =>
  new URL(/<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '', base).toString();
