// The replica test's walks: the shared browser walk (tools/bench/lib/browser.mjs) with every hop pinned to one
// replica (HAProxy's pin header), recording which replica answered each hop.
import { walk as walkAll } from '../../bench/lib/browser.mjs';
import { PIN_HEADER, SERVED_BY_HEADER } from './haproxy.mjs';

export { Jar, actionOf, authorizationRequest, fieldOf } from '../../bench/lib/browser.mjs';

/**
 * GET `url` (or POST `form` to it) and follow redirects while they stay on `origin`, every hop pinned to `replica`.
 * Returns the last answer, where the walk ended, the page's HTML and the replica that answered each hop.
 * @param {{ jar: import('../../bench/lib/browser.mjs').Jar; origin: string; url: string;
 *   form?: Record<string, string>; replica: string }} o
 */
export async function walk({ jar, origin, url, form, replica }) {
  /** @type {string[]} */
  const servedBy = [];
  const end = await walkAll({
    jar,
    origin,
    url,
    form,
    headers: { [PIN_HEADER]: replica },
    onHop: (res) => servedBy.push(res.headers.get(SERVED_BY_HEADER) ?? '?'),
  });
  return { ...end, servedBy };
}
