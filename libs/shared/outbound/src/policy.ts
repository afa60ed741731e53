import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { addressBytes, classifyAddress, inCidr, parseCidr, type Cidr } from './addresses.js';

/** A URL or an address the policy refuses; `message` is the detail for the log, never for the caller. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

/** One resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to (the system resolver by default; tests inject their own). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

/**
 * The operator's allow-list (`OUTBOUND_ALLOWLIST`): entries separated by commas or spaces, each one of
 * - an origin, `http://keycloak.internal:8080`: that scheme, host and port;
 * - a host name, `idp.dev.test` (exactly that name) or `*.dev.test` (its subdomains);
 * - an IP address or CIDR, `127.0.0.1`, `10.0.0.0/8`, `fd00::/8`.
 * A URL whose origin or host is listed (an IP-literal host inside a listed CIDR counts) may use http and reach any
 * address its name resolves to; a listed CIDR also admits the addresses inside it for https URLs of other names.
 */
export class Allowlist {
  readonly origins = new Set<string>();
  readonly hosts = new Set<string>();
  readonly suffixes: string[] = [];
  readonly cidrs: Cidr[] = [];

  constructor(raw = '') {
    for (const entry of raw.split(/[\s,]+/).filter(Boolean)) this.add(entry);
  }

  get empty(): boolean {
    return !this.origins.size && !this.hosts.size && !this.suffixes.length && !this.cidrs.length;
  }

  private add(entry: string): void {
    if (entry.includes('://')) {
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        throw new Error(`'${entry}' is not an origin`);
      }
      if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password) {
        throw new Error(`'${entry}' is not an http or https origin`);
      }
      if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
        throw new Error(`'${entry}' must be an origin (scheme, host and port only)`);
      }
      this.origins.add(url.origin);
      return;
    }
    const cidr = parseCidr(entry);
    if (cidr) {
      this.cidrs.push(cidr);
      return;
    }
    const wildcard = entry.startsWith('*.');
    const name = (wildcard ? entry.slice(2) : entry).toLowerCase().replace(/\.$/, '');
    if (
      !/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(name) ||
      entry.includes('/')
    ) {
      throw new Error(`'${entry}' is neither an origin, a host name, an IP address nor a CIDR`);
    }
    if (wildcard) this.suffixes.push(`.${name}`);
    else this.hosts.add(name);
  }

  /** Whether the URL is named by an origin, a host, or (IP-literal host) a CIDR of the list. */
  namesUrl(url: URL): boolean {
    if (this.origins.has(url.origin)) return true;
    const host = bareHost(url);
    const bytes = addressBytes(host);
    if (bytes) return this.admitsBytes(bytes);
    const name = host.toLowerCase().replace(/\.$/, '');
    return this.hosts.has(name) || this.suffixes.some((s) => name.endsWith(s));
  }

  /** Whether a listed CIDR holds the address. */
  admitsAddress(address: string): boolean {
    const bytes = addressBytes(address);
    return bytes !== undefined && this.admitsBytes(bytes);
  }

  private admitsBytes(bytes: Uint8Array): boolean {
    return this.cidrs.some((c) => inCidr(bytes, c));
  }
}

/** The host of a URL without IPv6 brackets. */
export const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Names that resolve to the machine itself by definition (RFC 6761), refused without asking DNS. */
const LOCAL_NAME = /(^|\.)localhost\.?$/i;

/** Longest URL accepted. */
const MAX_URL = 2000;

/**
 * The one rule for every request the services make to a third party (identity providers today, webhooks later):
 * `check` judges a URL as written (scheme, credentials, literal addresses: cheap, no DNS, also used when a URL is
 * configured), `resolve` resolves its host once and judges every address it resolves to; the fetcher then connects
 * to exactly that address (see OutboundFetcher), so a second DNS answer cannot send it elsewhere.
 */
export class OutboundPolicy {
  readonly allowlist: Allowlist;
  private readonly resolver: Resolver;

  constructor(opts: { allowlist?: string | Allowlist; resolver?: Resolver } = {}) {
    this.allowlist =
      opts.allowlist instanceof Allowlist ? opts.allowlist : new Allowlist(opts.allowlist ?? '');
    this.resolver = opts.resolver ?? systemResolver;
  }

  /** The parsed URL, or OutboundRefused saying why not (no DNS). */
  check(raw: string): URL {
    if (raw.length > MAX_URL) throw new OutboundRefused(`longer than ${MAX_URL} characters`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new OutboundRefused('not a URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundRefused('not an https URL');
    if (url.username || url.password) throw new OutboundRefused('credentials in the URL');
    if (url.hash) throw new OutboundRefused('a fragment in the URL');
    const named = this.allowlist.namesUrl(url);
    if (url.protocol === 'http:' && !named) throw new OutboundRefused('not an https URL');
    if (named) return url;
    const host = bareHost(url);
    if (isIP(host)) {
      const kind = classifyAddress(host);
      if (kind) throw new OutboundRefused(`a ${kind} address`);
    } else if (LOCAL_NAME.test(host)) {
      throw new OutboundRefused('a loopback name');
    }
    return url;
  }

  /** `check`, then the one address to connect to: every address the host resolves to must be allowed. */
  async resolve(raw: string | URL): Promise<{ url: URL; address: ResolvedAddress }> {
    const url = this.check(typeof raw === 'string' ? raw : raw.href);
    const host = bareHost(url);
    const literal = isIP(host);
    let addresses: ResolvedAddress[];
    if (literal) {
      addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
    } else {
      try {
        addresses = await this.resolver(host);
      } catch (err) {
        throw new OutboundRefused(`${host} does not resolve (${(err as { code?: string }).code ?? 'error'})`);
      }
      if (!addresses.length) throw new OutboundRefused(`${host} does not resolve`);
    }
    const named = this.allowlist.namesUrl(url);
    for (const a of addresses) {
      const kind = classifyAddress(a.address);
      if (kind && !named && !this.allowlist.admitsAddress(a.address)) {
        throw new OutboundRefused(`${host} resolves to ${a.address}, a ${kind} address`);
      }
    }
    return { url, address: addresses[0] };
  }
}
