import { isIP } from 'node:net';

/** Why an address is not a public unicast one (the detail that goes to the log). */
export type AddressClass =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link-local'
  | 'unique-local'
  | 'site-local'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'protocol'
  | 'invalid';

/** 16 bytes of an IPv6 address, or 4 of an IPv4 one; undefined when `ip` is not an address literal. */
export function addressBytes(ip: string): Uint8Array | undefined {
  const literal = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const version = isIP(literal);
  if (version === 4) return Uint8Array.from(literal.split('.').map(Number));
  if (version !== 6) return undefined;
  // a zone (fe80::1%eth0) names an interface, not another address
  let text = literal.replace(/%.*$/, '').toLowerCase();
  const out = new Uint8Array(16);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = dotted[1].split('.').map(Number);
    const hi = ((v4[0] << 8) | v4[1]).toString(16);
    const lo = ((v4[2] << 8) | v4[3]).toString(16);
    text = `${text.slice(0, -dotted[1].length)}${hi}:${lo}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

/** An IPv4 or IPv6 network: bytes and prefix length. */
export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

/** `10.0.0.0/8`, `fd00::/8`, or an address alone (the whole length); undefined when not one. */
export function parseCidr(text: string): Cidr | undefined {
  const [ip, len, ...rest] = text.trim().split('/');
  if (rest.length) return undefined;
  const bytes = addressBytes(ip);
  if (!bytes) return undefined;
  const max = bytes.length * 8;
  if (len !== undefined && !/^\d{1,3}$/.test(len)) return undefined;
  const prefix = len === undefined ? max : Number(len);
  if (prefix > max) return undefined;
  return { bytes, prefix };
}

/** Whether `bytes` (of the same family) lies in `net`. */
export function inCidr(bytes: Uint8Array, net: Cidr): boolean {
  if (bytes.length !== net.bytes.length) return false;
  let bits = net.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i] & mask) !== (net.bytes[i] & mask)) return false;
  }
  return true;
}

const table = (rows: [string, AddressClass][]) =>
  rows.map(([cidr, kind]) => ({ net: parseCidr(cidr)!, kind }));

/** IANA special-purpose IPv4 ranges that are not public unicast (RFC 6890 and its updates). */
const V4 = table([
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'protocol'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'], // 6to4 relay anycast, deprecated
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
]);

/** IPv6 ranges that are not public unicast; the ones that embed an IPv4 address are classified by that address. */
const V6 = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'], // local-use NAT64
  ['100::/64', 'reserved'], // discard-only
  ['2001::/23', 'protocol'], // Teredo, benchmarking, ORCHID, ...
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'reserved'], // SRv6 SIDs
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
]);

/** IPv6 prefixes whose last 32 bits, or bits 16-48 (6to4), are an IPv4 address that decides. */
const EMBEDS_V4: { net: Cidr; at: number }[] = [
  { net: parseCidr('::ffff:0:0/96')!, at: 12 }, // IPv4-mapped
  { net: parseCidr('::/96')!, at: 12 }, // IPv4-compatible (deprecated)
  { net: parseCidr('64:ff9b::/96')!, at: 12 }, // NAT64
  { net: parseCidr('2002::/16')!, at: 2 }, // 6to4
];

/**
 * What kind of special address `ip` is, or null for a public unicast address (one an outbound fetch may reach).
 * IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that IPv4 address.
 */
export function classifyAddress(ip: string): AddressClass | null {
  const bytes = addressBytes(ip);
  if (!bytes) return 'invalid';
  return classifyBytes(bytes);
}

function classifyBytes(bytes: Uint8Array): AddressClass | null {
  if (bytes.length === 4) return V4.find((r) => inCidr(bytes, r.net))?.kind ?? null;
  for (const { net, at } of EMBEDS_V4) {
    // `::/96` also holds `::` and `::1`, which the table names
    if (inCidr(bytes, net) && !(at === 12 && net.prefix === 96 && isV6Special(bytes))) {
      return classifyBytes(bytes.slice(at, at + 4));
    }
  }
  return V6.find((r) => inCidr(bytes, r.net))?.kind ?? null;
}

const isV6Special = (bytes: Uint8Array) => bytes.slice(0, 15).every((b) => b === 0) && bytes[15] <= 1;
