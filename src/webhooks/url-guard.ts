// Which addresses a webhook may reach (docs/webhooks.md, "URL rules"). Link-local/metadata and unspecified
// addresses are always refused; with blockPrivate, loopback and private ranges too. The
// same rules run on the URL at subscription time and on every resolved address at connect
// time, so a hostname that later resolves somewhere forbidden (DNS rebinding) is still refused.
import { BlockList, isIP } from 'node:net';
import { MAX_URL_LENGTH } from '../api/limits.ts';

const always = new BlockList();
always.addSubnet('169.254.0.0', 16, 'ipv4');
always.addSubnet('0.0.0.0', 8, 'ipv4');
always.addSubnet('fe80::', 10, 'ipv6');
always.addAddress('::', 'ipv6');

const privateRanges = new BlockList();
for (const [net, prefix] of [
  ['127.0.0.0', 8],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10],
] as const) {
  privateRanges.addSubnet(net, prefix, 'ipv4');
}
privateRanges.addAddress('::1', 'ipv6');
privateRanges.addSubnet('fc00::', 7, 'ipv6');

/** An IPv6 address's 16 bytes (node:net has said it is one), or null for a zone or a form not read here. */
function ipv6Bytes(address: string): number[] | null {
  let text = address;
  const tail: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    tail.push(...dotted.slice(1).map(Number));
    text = `${text.slice(0, dotted.index)}0:0`;
  }
  const [head = '', rest] = text.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const all = [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
  if (all.length !== 8 || all.some((g) => !(g >= 0 && g <= 0xffff))) return null;
  const bytes = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

const zero = (bytes: number[], from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
const v4 = (b: number[]) => b.join('.');

/**
 * The IPv4 addresses an IPv6 address carries, which reach (or are) that IPv4 host: IPv4-mapped
 * (::ffff:0:0/96) and IPv4-translated (::ffff:0:0:0/96), IPv4-compatible (::/96 but `::` and `::1`,
 * which keep their IPv6 meaning), and NAT64: the well-known prefix 64:ff9b::/96 (RFC 6052), whose
 * translator connects to the embedded address — 64:ff9b::a9fe:a9fe is the metadata service — and
 * the local-use 64:ff9b:1::/48 (RFC 8215). A local-use network may split its /48 with any RFC 6052
 * prefix length of 48 or more: every layout whose reserved bits (bits 64-71 and the suffix) are zero
 * yields a candidate, and each is judged (docs/webhooks.md, "URL rules").
 */
function embeddedIpv4(bytes: number[]): string[] {
  if (zero(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return [v4(bytes.slice(12))];
  if (zero(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(bytes, 10, 12)) {
    return [v4(bytes.slice(12))];
  }
  if (zero(bytes, 0, 12)) return zero(bytes, 12, 15) && (bytes[15] ?? 0) <= 1 ? [] : [v4(bytes.slice(12))];
  const prefix = bytes.slice(0, 6).join(',');
  if (prefix === '0,100,255,155,0,0' && zero(bytes, 6, 12)) return [v4(bytes.slice(12))];
  if (prefix !== '0,100,255,155,0,1') return [];
  const layouts: [number[], number][] = [
    [[6, 7, 9, 10], 11], // /48
    [[7, 9, 10, 11], 12], // /56
    [[9, 10, 11, 12], 13], // /64
  ];
  const found = [v4(bytes.slice(12))]; // /96: no reserved bits to check
  for (const [at, suffix] of layouts) {
    if (bytes[8] === 0 && zero(bytes, suffix, 16)) found.push(v4(at.map((i) => bytes[i] as number)));
  }
  // An address of a shorter layout ends in zeros, which the /96 reading takes as 0.0.0.0: not a host.
  const hosts = found.filter((a) => a !== '0.0.0.0');
  return hosts.length > 0 ? hosts : found;
}

/** The address as node:net's BlockList takes it, with the IPv4 addresses an IPv6 one carries. */
function normalize(address: string): { address: string; family: 'ipv4' | 'ipv6'; carried: string[] } | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const v = isIP(bare);
  if (v === 4) return { address: bare, family: 'ipv4', carried: [] };
  if (v !== 6) return null;
  const bytes = ipv6Bytes(bare);
  return { address: bare, family: 'ipv6', carried: bytes ? embeddedIpv4(bytes) : [] };
}

/** What kind of forbidden address this IP is, or null when it may be reached. */
function forbiddenKind(address: string, blockPrivate: boolean): string | null {
  const ip = normalize(address);
  if (!ip) return null;
  const judged = [
    { address: ip.address, family: ip.family },
    ...ip.carried.map((a) => ({ address: a, family: 'ipv4' as const })),
  ];
  if (judged.some((a) => always.check(a.address, a.family)))
    return 'a link-local, metadata or unspecified address';
  if (blockPrivate && judged.some((a) => privateRanges.check(a.address, a.family))) {
    return 'a loopback or private address';
  }
  return null;
}

/** Why this IP may not be reached, or null when it may. */
export function addressRefusal(address: string, blockPrivate: boolean): string | null {
  const kind = forbiddenKind(address, blockPrivate);
  return kind ? `${address} is ${kind}` : null;
}

// Written with the API's other limits; re-exported for the tests of this guard.
export { MAX_URL_LENGTH };

/** Checks a webhook URL as given by the user; returns the reason it is refused, or null. */
export function urlRefusal(raw: string, blockPrivate: boolean): string | null {
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http or https URL';
  if (url.username || url.password) return 'must not contain credentials';
  if (!url.hostname) return 'must name a host';
  // A trailing dot names the same host ("localhost." is localhost).
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (blockPrivate && (host === 'localhost' || host.endsWith('.localhost')))
    return 'must not point at localhost';
  const kind = forbiddenKind(host, blockPrivate);
  return kind ? `must not point at ${kind} (${host})` : null;
}
